/**
 * The `policy:` block of the `remote` policy runtime (remote-runtime.ts): its fields, its whole schema and the typed
 * view of a protocol's block — what the host's start (remote-policy-provider.ts), its file checks
 * (hosted-policy-check.ts) and its sandbox (sandbox-binds.ts) read.
 */
import { z } from 'zod';
import type { ProtocolView } from '../core/index.js';
import { NonEmptyText, type Protocol } from '../protocol/index.js';
import { DevicesSchema, HostLimitsSchema } from '../runtime/index.js';

export const REMOTE_RUNTIME = 'remote';

export const REMOTE_POLICY_FIELDS = {
  name: NonEmptyText.describe('the hosted policy, one of the host’s hello.policies, e.g. shell-game-memory'),
  endpoint: NonEmptyText.optional().describe(
    'the ZeroMQ endpoint of a policy host you started (never restarted by IMEP); without it IMEP starts and supervises `python3 -m imep_sim_bridge.policy_host --policy NAME`',
  ),
  curve: z
    .strictObject({
      serverKey: NonEmptyText.describe('the host’s public key: a NAME.key certificate file or a Z85 key'),
      keys: NonEmptyText.describe('this client’s secret certificate NAME.key_secret (mode 0600)'),
    })
    .optional()
    .describe('CurveZMQ keys for an endpoint that is not ipc:// or loopback (with endpoint only)'),
  module: NonEmptyText.optional().describe(
    'without endpoint: a Python module whose POLICIES mapping (name → class) the host also serves (--module)',
  ),
  pythonPath: z
    .array(NonEmptyText)
    .min(1)
    .optional()
    .describe('without endpoint: folders put first on the host’s PYTHONPATH, resolved like checkpoint.path'),
  checkpoint: NonEmptyText.optional().describe(
    'without endpoint: a checkpoint folder (model.json + graphs) the host serves, for a policy that serves one (imep-checkpoint); passed as --checkpoint, resolved like checkpoint.path, read-only in the host’s sandbox',
  ),
  python: NonEmptyText.optional().describe(
    'without endpoint: the Python interpreter (default: $IMEP_PYTHON, else /usr/bin/python3)',
  ),
  limits: HostLimitsSchema.optional().describe(
    'without endpoint: the resource limits of the host IMEP starts (memory, processes, CPU time, call deadline); missing fields take the policy-host defaults',
  ),
  devices: DevicesSchema.optional(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits' })
    .optional()
    .describe(
      'optional: the identity digest the host must report (printed by a run; see src/policies/README.md); without it precommit freezes whatever the host reports',
    ),
};

/** The whole `policy:` block of the remote runtime. */
export const RemotePolicySchema = z.strictObject({ runtime: z.literal(REMOTE_RUNTIME), ...REMOTE_POLICY_FIELDS });
export type RemotePolicyConfig = z.infer<typeof RemotePolicySchema>;

/** The protocol's `policy:` block when it names the remote runtime (typed), else undefined. */
export function remotePolicyConfig(protocol: Pick<Protocol, 'policy'> | ProtocolView): RemotePolicyConfig | undefined {
  const block = protocol.policy;
  if (block === undefined || block.runtime !== REMOTE_RUNTIME) return undefined;
  return RemotePolicySchema.parse(block); // already valid (the protocol parsed it): this only types it
}
