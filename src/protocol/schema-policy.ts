/**
 * The `policy` section: a policy that is not an in-process checkpoint. Today one runtime, `remote`: a
 * policy hosted in Python by `python3 -m imep_sim_bridge.policy_host` (sim-bridge/PROTOCOL.md, "Hosted
 * policies") and driven over the bridge by RemotePolicy; its bank reads come back through memory.read,
 * so every condition's read hook acts on them as on an in-process policy's.
 *
 * A protocol names exactly one of `checkpoint` (ONNX / TF.js, bound by path + SHA-256) and `policy`
 * (cross-check.ts). The hosted policy is frozen by what its host reports in hello.policyIdentity
 * (version, memory, the SHA-256 of every file it is made of): precommit records it, every later run
 * refuses a host that reports anything else (src/campaign/remote-policy-provider.ts).
 */
import { z } from 'zod';
import { NonEmptyText } from './schema-common.js';
import { HostLimitsSchema } from './schema-limits.js';
import { DevicesSchema } from './schema-devices.js';

export const RemotePolicySchema = z
  .strictObject({
    runtime: z
      .literal('remote')
      .describe(
        'a policy hosted in Python (imep_sim_bridge.policy_host) over the bridge; its bank reads come back through memory.read',
      ),
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
  })
  .describe('a policy hosted outside IMEP instead of a checkpoint: { runtime: remote, name, endpoint? | module? }');

export type RemotePolicyConfig = z.infer<typeof RemotePolicySchema>;
