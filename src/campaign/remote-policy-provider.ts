/**
 * The policy provider of a protocol with `policy: { runtime: remote, … }` (remote-runtime.ts, remote-policy-config.ts):
 * a policy hosted in Python by `imep_sim_bridge.policy_host`, driven by RemotePolicy
 * (src/policies/remote-policy.ts). Without `endpoint` IMEP starts the host on a private ipc endpoint and
 * supervises it (a death fails the next call at once, E_BRIDGE_REMOTE); with one it attaches (never
 * restarted). `release()` closes every connection and stops a host it started.
 *
 * Every read of the hosted policy is a memory.read answered through the runner's read hook, so each
 * condition's intervention acts on it. Which reads are decision queries is the evaluator's rule
 * (task-facts.ts, by elapsed step), as for checkpoints, never the host's label. The hosted bank cannot be
 * installed into (slotMemory target null): point-acting conditions are refused as on episode-local banks.
 *
 * Frozen identity: the host's hello.policyIdentity for the policy (version, memory, files with SHA-256).
 * `hostedPolicyDigest` = SHA-256 of the canonical JSON { name, version, memory, files }; precommit
 * records the whole identity (`hostedPolicy`) and the digest under checkpointHashes["remote:NAME"], and
 * every later run of the unit refuses a host that reports anything else (E_CHECKPOINT_MISMATCH naming the
 * files that changed). A protocol may bind the digest itself (`policy.sha256`).
 */
import { join } from 'node:path';
// The bridge client, process supervision and key loading (zeromq, execa) are imported inside
// remotePolicyProvider: every campaign process imports this module via campaign-setup, and checkpoint
// campaigns (every lite shard) must not pay their load time.
import type { CurveClientKeys, PolicyIdentity, SandboxRequest, ServerSupervisor } from '../bridges/index.js';
import { INSIDE, protectedZones } from '../bridges/index.js';
import { canonicalJson, ImepError, isImepError, sha256Hex } from '../core/index.js';
import { HistoryMemory, type RemotePolicy } from '../policies/index.js';
import { withHistory } from './history-policy.js';
import { memoryK, type Protocol } from '../protocol/index.js';
import { remotePolicyConfig, type RemotePolicyConfig } from './remote-policy-config.js';
import type { HostedPolicyRecord } from '../evidence/index.js';
import type { PolicyProvider, RunnerPolicy, SlotMemory, TaskContext } from './types.js';
import { resolveHostedCheckpoint, resolveHostPython, resolvePythonPath } from './hosted-policy-check.js';

/** The checkpointHashes key of a hosted policy's identity digest. */
export const hostedPolicyKey = (name: string): string => `remote:${name}`;

export function hostedPolicyDigest(name: string, id: PolicyIdentity): string {
  const files = [...id.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const memory = {
    bank: id.memory.bank,
    ...(id.memory.banks === undefined ? {} : { banks: id.memory.banks }),
    ...(id.memory.k === undefined ? {} : { k: id.memory.k }),
  };
  return sha256Hex(Buffer.from(canonicalJson({ name, version: id.version, memory, files }), 'utf8'));
}

export interface RemotePolicyContext {
  /** The protocol file (named in errors). */
  readonly file: string;
  /** Where relative pythonPath folders resolve, in order. */
  readonly roots: readonly string[];
  /** The run's campaigns folder: no folder the host's sandbox binds may expose it (src/bridges/sandbox-exposure.ts). */
  readonly campaignsDir?: string;
}

export interface RemotePolicyProvider extends PolicyProvider {
  readonly record: HostedPolicyRecord;
  /** How the host was isolated from IMEP's files and secrets (src/bridges/sandbox.ts), as one line. */
  readonly isolation: string;
  /** The resource limits in force on the host and what enforced each (src/bridges/resource-limits.ts), one line. */
  readonly limits: string;
}

function noOpMemory(): SlotMemory {
  return { target: null, beginScope: () => undefined, endScope: () => undefined };
}

function adapt(p: RemotePolicy): RunnerPolicy {
  const memory = noOpMemory();
  return {
    maxBatch: p.maxBatch,
    resetSlot: (slot, info) => p.resetSlot(slot, info),
    inferBatch: (requests) => p.inferBatch(requests),
    setReadHook: (hook) => p.setReadHook(hook),
    slotMemory: () => memory,
  };
}

async function curveOf(config: RemotePolicyConfig, ctx: RemotePolicyContext): Promise<CurveClientKeys | undefined> {
  if (config.curve === undefined) return undefined;
  try {
    const { loadCurveKeyPair, loadCurvePublicKey } = await import('../bridges/curve-keys.js');
    const own = await loadCurveKeyPair(config.curve.keys);
    return { ...own, serverPublicKey: await loadCurvePublicKey(config.curve.serverKey) };
  } catch (e) {
    if (!isImepError(e)) throw e;
    throw new ImepError(e.code, e.message, {
      file: ctx.file,
      field: 'policy.curve',
      hint: e.hint ?? 'give the host’s NAME.key (or Z85 key) and your NAME.key_secret (imep sim keys)',
      cause: e,
    });
  }
}

/** Refuses a host whose identity cannot be frozen, or whose memory differs from the protocol's. */
function checkIdentity(
  protocol: Protocol,
  config: RemotePolicyConfig,
  policy: RemotePolicy,
  ctx: RemotePolicyContext,
): HostedPolicyRecord {
  const where = `the policy host at ${policy.endpoint}`;
  const id = policy.identity;
  if (id === undefined || id.files.length === 0) {
    throw new ImepError(
      'E_USAGE',
      `${where} reports ${id === undefined ? 'no identity' : 'no files'} for policy '${config.name}' (hello.policyIdentity), so a campaign cannot freeze it`,
      {
        file: ctx.file,
        field: 'policy.name',
        hint: 'serve the policy from a module file with an imep_sim_bridge.policy_host that reports policyIdentity (sim-bridge/PROTOCOL.md, "Hosted policies")',
      },
    );
  }
  const mem = protocol.memory;
  const bad = (field: string, what: string, hint: string): ImepError =>
    new ImepError('E_CHECKPOINT_MISMATCH', `the protocol's memory.${field} is ${what}`, {
      file: ctx.file,
      field: `memory.${field}`,
      hint,
    });
  if (id.memory.bank !== mem.bank)
    throw bad(
      'bank',
      `${mem.bank}, but hosted policy '${config.name}' keeps a ${id.memory.bank} bank`,
      `register memory.bank: ${id.memory.bank}`,
    );
  if (
    mem.bank === 'episode-local' &&
    id.memory.banks !== undefined &&
    canonicalJson([...mem.banks].sort()) !== canonicalJson([...id.memory.banks].sort())
  ) {
    throw bad(
      'banks',
      `[${mem.banks.join(', ')}], but hosted policy '${config.name}' reads banks [${id.memory.banks.join(', ')}]`,
      `register memory.banks: [${id.memory.banks.join(', ')}]`,
    );
  }
  if (id.memory.k !== undefined && id.memory.k !== memoryK(mem))
    throw bad(
      'k',
      `${memoryK(mem)}, but hosted policy '${config.name}' reads top-${id.memory.k}`,
      `register memory.k: ${id.memory.k}`,
    );
  const digest = hostedPolicyDigest(config.name, id);
  if (config.sha256 !== undefined && config.sha256 !== digest) {
    throw new ImepError(
      'E_CHECKPOINT_MISMATCH',
      `hosted policy '${config.name}' has identity digest ${digest}, the protocol binds ${config.sha256}`,
      {
        file: ctx.file,
        field: 'policy.sha256',
        hint: `restore the registered policy files (${id.files.map((f) => f.path).join(', ')}); changing the binding is a new campaign`,
      },
    );
  }
  return {
    runtime: 'remote',
    name: config.name,
    host: { name: policy.hello.server.name, version: policy.hello.server.version },
    version: id.version,
    memory: { ...id.memory },
    files: id.files.map((f) => ({ ...f })),
    digest,
  };
}

/** Refuses (E_CHECKPOINT_MISMATCH, naming what changed) a hosted policy that differs from the frozen one. */
export function assertHostedPolicyUnchanged(
  now: HostedPolicyRecord,
  frozen: HostedPolicyRecord | undefined,
  file: string,
): void {
  if (frozen === undefined) {
    throw new ImepError(
      'E_PROTOCOL_FROZEN',
      `the unit's precommit froze no hosted policy, but the protocol names hosted policy '${now.name}'`,
      {
        file,
        field: 'policy',
        hint: 'run the unit with the runtime it was precommitted with',
      },
    );
  }
  if (now.digest === frozen.digest) return;
  const was = new Map(frozen.files.map((f) => [f.path, f.sha256]));
  const is = new Map(now.files.map((f) => [f.path, f.sha256]));
  const changed = [...new Set([...was.keys(), ...is.keys()])]
    .sort()
    .filter((p) => was.get(p) !== is.get(p))
    .map((p) =>
      was.get(p) === undefined
        ? `${p} (added)`
        : is.get(p) === undefined
          ? `${p} (removed)`
          : `${p} (sha256 ${(is.get(p) as string).slice(0, 12)}…, frozen ${(was.get(p) as string).slice(0, 12)}…)`,
    );
  if (now.version !== frozen.version) changed.unshift(`version ${now.version} (frozen ${frozen.version})`);
  if (canonicalJson(now.memory) !== canonicalJson(frozen.memory))
    changed.unshift(`memory ${canonicalJson(now.memory)} (frozen ${canonicalJson(frozen.memory)})`);
  throw new ImepError(
    'E_CHECKPOINT_MISMATCH',
    `hosted policy '${now.name}' changed since precommit: ${changed.join('; ') || `identity digest ${now.digest.slice(0, 12)}…, frozen ${frozen.digest.slice(0, 12)}…`}`,
    {
      file,
      field: 'policy',
      hint: 'restore the policy files the unit was precommitted with; a changed policy is a new campaign',
    },
  );
}

/**
 * What a started policy host's sandbox is asked for (src/bridges/sandbox.ts): its module folders and its checkpoint
 * folder (policy.checkpoint), read-only at neutral paths, its socket folder, the declared devices, and what no bind may
 * expose (the campaigns folder among them).
 */
export function policyHostSandboxRequest(
  config: RemotePolicyConfig,
  ctx: RemotePolicyContext,
  pythonPath: readonly string[],
  writable: readonly string[],
  root: string,
  env: NodeJS.ProcessEnv = process.env,
): SandboxRequest {
  const checkpoint = resolveHostedCheckpoint(config, ctx);
  return {
    readOnly: [
      ...pythonPath.map((path, i) => ({ path, field: `policy.pythonPath[${i}]`, inside: `${INSIDE.policy}/${i}` })),
      ...(checkpoint === undefined
        ? []
        : [{ path: checkpoint, field: 'policy.checkpoint', inside: `${INSIDE.policy}/checkpoint` }]),
    ],
    writable,
    bridgePackage: join(root, 'sim-bridge', 'imep_sim_bridge'),
    pythonField: config.python === undefined ? 'IMEP_PYTHON' : 'policy.python',
    ...(config.devices === undefined ? {} : { devices: { names: config.devices, field: 'policy.devices' } }),
    protect: protectedZones({ campaignsDir: ctx.campaignsDir, env }),
    who: 'policy host',
    file: ctx.file,
  };
}

/** The policy host a provider talks to: where, how it was reached, and what (if anything) IMEP supervises. */
interface HostConnection {
  readonly endpoint: string;
  readonly how: string;
  readonly isolation: string;
  readonly limits: string;
  readonly deadlineMs: number;
  readonly supervisor?: ServerSupervisor;
  readonly host?: RestartingHostLike;
}

type RestartingHostLike = InstanceType<Awaited<typeof import('../bridges/index.js')>['RestartingHost']>;

/** A host someone else started at `config.endpoint`: its own isolation and limits, the policy host's call deadline. */
async function attachedHost(config: RemotePolicyConfig & { endpoint: string }): Promise<HostConnection> {
  const { resolveHostLimits } = await import('../bridges/index.js');
  const deadlineMs = resolveHostLimits('policy host', config.limits).callDeadlineS * 1000;
  return {
    endpoint: config.endpoint,
    how: 'started outside IMEP; never restarted by it',
    isolation: 'isolation: none (a host started outside IMEP: its isolation is whoever started it)',
    limits: `limits: none set by IMEP (a host started outside IMEP); call deadline ${deadlineMs / 1000} s, never restarted`,
    deadlineMs,
  };
}

/**
 * A host IMEP starts on a private ipc endpoint: it reads only the system, its Python, imep_sim_bridge and the folders
 * its module declares (each at INSIDE.policy/<i>), opens only the devices the protocol declares, and runs under the
 * registered resource limits (rlimits inside the sandbox, a cgroup where one is writable). Its cleanups are pushed.
 */
async function startedHost(
  config: RemotePolicyConfig,
  ctx: RemotePolicyContext,
  maxBatch: number,
  cleanups: (() => Promise<void>)[],
): Promise<HostConnection> {
  const [{ privateIpcEndpoint }, { ServerSupervisor, packageRoot }, { policyHostCommand }, bridges] = await Promise.all(
    [
      import('../bridges/endpoint.js'),
      import('../bridges/supervisor.js'),
      import('../policies/remote-policy.js'),
      import('../bridges/index.js'),
    ],
  );
  const pythonPath = resolvePythonPath(config, ctx);
  const checkpoint = resolveHostedCheckpoint(config, ctx);
  const python = resolveHostPython(config, ctx);
  const ipc = await privateIpcEndpoint('policy.sock');
  cleanups.push(ipc.dispose);
  const endpoint = ipc.endpoint;
  const plain = policyHostCommand(endpoint, {
    policy: config.name,
    maxBatch,
    ...(config.module === undefined ? {} : { module: config.module }),
    ...(python === undefined ? {} : { python }),
    ...(checkpoint === undefined ? {} : { checkpoint }),
    pythonPath,
  });
  const limiter = bridges.hostLimiter('policy host', config.limits);
  const boxed = bridges.sandboxed(plain, {
    ...policyHostSandboxRequest(config, ctx, pythonPath, [ipc.dir], packageRoot()),
    wrap: limiter.insideSandbox,
  });
  const inSandbox = boxed.isolation.mode === 'bubblewrap';
  const supervisor = new ServerSupervisor(limiter.finish(boxed.command, inSandbox), { endpoint });
  const host = new bridges.RestartingHost(supervisor);
  cleanups.push(() => supervisor.dispose());
  try {
    await supervisor.start();
  } catch (e) {
    if (!isImepError(e)) throw e;
    throw new ImepError(e.code, `the policy host for '${config.name}' did not start: ${e.message}`, {
      file: ctx.file,
      field: config.module === undefined ? 'policy.name' : 'policy.module',
      hint: 'check policy.name / policy.module / policy.pythonPath (the host lists what it can serve), and that python has zmq, msgpack and numpy',
      cause: e,
    });
  }
  return {
    endpoint,
    how: `started by IMEP: ${plain.file} ${plain.args.join(' ').replace(endpoint, 'ipc://…')}`,
    isolation: bridges.describeIsolation(boxed.isolation),
    limits: limiter.describe(inSandbox, boxed.isolation.mode === 'bubblewrap' && boxed.isolation.uid !== null),
    deadlineMs: limiter.limits.callDeadlineS * 1000,
    supervisor,
    host,
  };
}

/** A connection to the host for `batch` slots (a refusal names the protocol field to fix); closed with the provider. */
async function connectTo(
  conn: HostConnection,
  config: RemotePolicyConfig,
  ctx: RemotePolicyContext,
  curve: CurveClientKeys | undefined,
  cleanups: (() => Promise<void>)[],
  batch: number,
  decisionFromStep?: number,
): Promise<RemotePolicy> {
  const { RemotePolicy } = await import('../policies/remote-policy.js');
  try {
    const p = await RemotePolicy.connect({
      endpoint: conn.endpoint,
      policy: config.name,
      maxBatch: batch,
      deadlineMs: conn.deadlineMs,
      ...(curve === undefined ? {} : { curve }),
      ...(conn.supervisor === undefined ? {} : { liveness: conn.supervisor }),
      ...(conn.host === undefined ? {} : { host: conn.host }),
      ...(decisionFromStep === undefined ? {} : { decisionStep: (step: number) => step >= decisionFromStep }),
    });
    cleanups.push(() => p.close());
    return p;
  } catch (e) {
    if (!isImepError(e)) throw e;
    throw new ImepError(e.code, e.message, {
      file: ctx.file,
      field: config.endpoint === undefined ? 'policy.name' : 'policy.endpoint',
      hint:
        e.hint ??
        (config.endpoint === undefined
          ? 'check policy.name'
          : `start a policy host at ${config.endpoint} (python3 -m imep_sim_bridge.policy_host --endpoint E --policy ${config.name}), or remove endpoint so IMEP starts one`),
      cause: e,
    });
  }
}

/** Starts (or attaches to) the protocol's policy host and checks what it serves; `maxBatch` = the lockstep batch. */
export async function remotePolicyProvider(
  protocol: Protocol,
  ctx: RemotePolicyContext,
  maxBatch: number,
): Promise<RemotePolicyProvider> {
  const config = remotePolicyConfig(protocol);
  if (config === undefined)
    throw new ImepError('E_INTERNAL', 'remotePolicyProvider: the protocol names no remote policy');
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async (): Promise<void> => {
    for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined);
  };
  try {
    const curve = await curveOf(config, ctx);
    const { endpoint } = config;
    const conn =
      endpoint !== undefined
        ? await attachedHost({ ...config, endpoint })
        : await startedHost(config, ctx, maxBatch, cleanups);
    const connect = (batch: number, from?: number): Promise<RemotePolicy> =>
      connectTo(conn, config, ctx, curve, cleanups, batch, from);
    const probe = await connect(1);
    const record = checkIdentity(protocol, config, probe, ctx);
    const description = `remote ${config.name} v${record.version} on ${record.host.name} ${record.host.version} (${conn.how}; identity sha256 ${record.digest})`;
    return {
      description: `${description}; ${conn.isolation}; ${conn.limits}`,
      record,
      isolation: conn.isolation,
      limits: conn.limits,
      async policyFor(task: TaskContext, batchSize: number): Promise<RunnerPolicy> {
        const policy = adapt(await connect(batchSize, task.facts.decisionFromStep));
        const mem = protocol.memory;
        // a hosted policy with no bank of its own is given IMEP's history of the episode (history-policy.ts)
        return mem.bank === 'history'
          ? withHistory(policy, new HistoryMemory(mem, batchSize), task.facts.decisionFromStep)
          : policy;
      },
      release: cleanup,
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
