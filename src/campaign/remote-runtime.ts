/**
 * The `remote` policy runtime: a policy hosted in Python by `python3 -m imep_sim_bridge.policy_host`
 * (sim-bridge/PROTOCOL.md, "Hosted policies"), driven over the bridge by RemotePolicy; its bank reads come back
 * through memory.read, so every condition's read hook acts on them as on an in-process policy's. Its `policy:` fields
 * are below; the host is started and supervised by remote-policy-provider.ts (or attached at `endpoint`), and frozen
 * by the identity it reports (hello.policyIdentity: version, memory, the SHA-256 of every file it is made of).
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProtocolIssueSink, ProtocolView } from '../core/index.js';
import { assertHostedPolicyResolvable } from './hosted-policy-check.js';
import type { PolicyRuntimeKind } from './policy-runtime-kind.js';
import {
  REMOTE_POLICY_FIELDS,
  REMOTE_RUNTIME,
  RemotePolicySchema,
  remotePolicyConfig,
} from './remote-policy-config.js';
import { remotePolicyProvider } from './remote-policy-provider.js';
import { checkHistoryKeys } from './server-policy-config.js';

/** The package root (its sim-bridge/ serves the built-in hosted policies). */
const PACKAGE_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** The protocol rules that hold for a hosted policy (reported at their paths, in this order). */
function checkRemoteProtocol(protocol: ProtocolView, issues: ProtocolIssueSink): void {
  const policy = RemotePolicySchema.safeParse(protocol.policy);
  if (!policy.success) return; // the schema reported it
  const config = policy.data;
  if (protocol.memory.bank !== 'episode-local' && protocol.memory.bank !== 'history') {
    issues.push(
      ['memory', 'bank'],
      `a hosted policy keeps its own episode-local bank, or is given IMEP's history, but memory.bank is ${protocol.memory.bank}`,
      'register memory.bank: episode-local with the hosted policy’s banks and k, or memory.bank: history',
    );
  }
  checkHistoryKeys(protocol, issues);
  if (config.endpoint === undefined && config.curve !== undefined) {
    issues.push(
      ['policy', 'curve'],
      'curve keys are given without an endpoint: a host IMEP starts listens on a private ipc:// endpoint',
      'remove curve, or add the endpoint of the host you started',
    );
  }
  if (config.endpoint !== undefined) {
    for (const key of ['module', 'pythonPath', 'checkpoint', 'python', 'limits'] as const) {
      if (config[key] !== undefined) {
        issues.push(
          ['policy', key],
          `${key} is given with an endpoint: a host someone else started was started with its own ${key}`,
          `remove ${key}, or remove endpoint so IMEP starts the host`,
        );
      }
    }
  }
}

export const remoteRuntime: PolicyRuntimeKind = {
  name: REMOTE_RUNTIME,
  summary:
    'a policy hosted in Python (imep_sim_bridge.policy_host) over the bridge; its bank reads come back through memory.read',
  fields: REMOTE_POLICY_FIELDS,
  checkProtocol: checkRemoteProtocol,
  preflight(protocol, ctx) {
    return assertHostedPolicyResolvable(protocol, {
      file: ctx.file,
      roots: ctx.roots,
      bridgeDir: join(PACKAGE_ROOT, 'sim-bridge'),
    });
  },
  memoryAccess(protocol) {
    const config = remotePolicyConfig(protocol);
    return { installable: false, name: `hosted policy '${config?.name ?? '?'}', whose bank the host keeps` };
  },
  open(protocol, ctx) {
    return remotePolicyProvider(
      protocol,
      {
        file: ctx.file,
        roots: ctx.roots,
        ...(ctx.campaignsDir === undefined ? {} : { campaignsDir: ctx.campaignsDir }),
      },
      ctx.batchSize,
    );
  },
  describe(protocol) {
    const config = remotePolicyConfig(protocol);
    if (config === undefined) return 'remote policy (none named)';
    return `hosted policy '${config.name}' (${config.endpoint === undefined ? 'a host IMEP starts' : `the host at ${config.endpoint}`})`;
  },
};
