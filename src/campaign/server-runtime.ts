/**
 * The policy-server runtimes `openpi-websocket` and `vla-eval`: a policy served by a server someone started,
 * unmodified, reached through a ServerConnector (one wire protocol each: src/policies/servers/openpi-session.ts,
 * vla-eval-session.ts) and driven by ServerPolicy. `serverRuntimeKind(name, connector)` makes the registered kind; its
 * `policy:` fields and protocol rules are in server-policy-config.ts.
 *
 * Memory: `memory.bank: history` (IMEP keeps the episode's observations and gives the window with each call, every
 * read through the hook: history-memory.ts), or `bankHook: true` with `memory.bank: episode-local` (the server keeps
 * its bank and routes each read through IMEP: a BankHookMemory, or `options.bankHookMemory`). Neither can be installed
 * into: point-acting conditions are refused (plan-checks.ts; src/protocol/cross-check.ts names the history case).
 *
 * Preflight reads files only (the server is not contacted). `open` connects one session per batch slot, each within
 * the registered deadline: a server not listening, one that sends no metadata, … refuses the run there, before
 * anything is written (assemble.ts opens the policy before precommit writes). Every session's metadata must be the
 * same; precommit freezes it and a later run refuses another (server-policy-record.ts). The environment's action dimension
 * comes from the specs `checkEnvironments` is handed (or the simulator kind's known specs), so a reply of another
 * dimension is refused naming both.
 */
import { ImepError, isImepError } from '../core/index.js';
import {
  BankHookMemory,
  HistoryMemory,
  ReconnectingSession,
  ServerPolicy,
  serverConventions,
} from '../policies/index.js';
import type { ServerConnector, ServerMemory, ServerSession } from '../policies/index.js';
import type { Protocol } from '../protocol/index.js';
import type { EnvSpec, ReportsChunkLength, SpecSource } from '../runtime/index.js';
import { simulatorKindOf } from './bridge-envs.js';
import { taskEntries } from './plan-segments.js';
import type { PolicyServerRecord } from '../evidence/index.js';
import type { PolicyRuntimeContext, PolicyRuntimeKind } from './policy-runtime-kind.js';
import {
  SERVER_POLICY_FIELDS,
  checkServerProtocol,
  serverPolicyConfig,
  type ServerPolicyConfig,
  type ServerRuntimeName,
} from './server-policy-config.js';
import { assertSessionMatches, policyServerRecord } from './server-policy-record.js';
import type { PolicyProvider, RunnerPolicy, SlotMemory, TaskContext } from './types.js';

export interface ServerRuntimeOptions {
  /**
   * The memory of a server that routes its own bank's reads through IMEP (bankHook: true). Default: a BankHookMemory
   * listening on a loopback port (bank-hook-memory.ts); null: bankHook: true is refused at preflight.
   */
  readonly bankHookMemory?: ((config: ServerPolicyConfig, slots: number) => Promise<ServerMemory>) | null;
}

const startBankHook = (): Promise<ServerMemory> => BankHookMemory.start();

/** The specs handed to checkEnvironments, per protocol object (what policyFor reads the action dimension from). */
const handedSpecs = new WeakMap<object, SpecSource>();

function configOf(protocol: Protocol, file?: string): ServerPolicyConfig {
  const config = serverPolicyConfig(protocol);
  if (config === undefined)
    throw new ImepError('E_INTERNAL', 'server runtime: the protocol names no policy server', {
      ...(file === undefined ? {} : { file }),
      field: 'policy',
    });
  return config;
}

function memoryName(protocol: Protocol, config: ServerPolicyConfig): string {
  const m = protocol.memory;
  return m.bank === 'history'
    ? `history window ${m.window}, stride ${m.stride} over [${m.keys.join(', ')}] kept by IMEP for the server at ${config.endpoint}`
    : `the bank of the server at ${config.endpoint}, read through IMEP's hook`;
}

const noOpMemory: SlotMemory = { target: null, beginScope: () => undefined, endScope: () => undefined };

/** Connects `count` sessions; on a failure the opened ones are closed and the refusal names the endpoint's field. */
async function connectAll(
  connector: ServerConnector,
  config: ServerPolicyConfig,
  count: number,
  file: string,
): Promise<ServerSession[]> {
  const settled = await Promise.allSettled(
    Array.from({ length: count }, () => connector(config.endpoint, { deadlineMs: config.deadlineMs })),
  );
  const opened = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  // a connection that breaks mid-run is opened again at its slot's next episode start (reconnecting-session.ts)
  if (failed === undefined)
    return opened.map(
      (s) => new ReconnectingSession(s, () => connector(config.endpoint, { deadlineMs: config.deadlineMs })),
    );
  await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
  const e: unknown = failed.reason;
  const message = e instanceof Error ? e.message : String(e);
  throw new ImepError(
    isImepError(e) ? e.code : 'E_BRIDGE_REMOTE',
    message.includes(config.endpoint) ? message : `the server at ${config.endpoint}: ${message}`,
    {
      file,
      field: 'policy.endpoint',
      hint:
        (isImepError(e) ? e.hint : undefined) ??
        `start the policy server at ${config.endpoint} (IMEP starts none), or fix policy.endpoint`,
      cause: e,
    },
  );
}

function specSourceOf(protocol: Protocol, file: string): SpecSource {
  const handed = handedSpecs.get(protocol);
  if (handed !== undefined) return handed;
  const kind = simulatorKindOf(protocol, file);
  const known = kind.knownSpec?.bind(kind, protocol.simulator);
  return known === undefined ? () => undefined : (task) => known(task.envId, task.kwargs);
}

function actionDimOf(spec: EnvSpec | undefined): number | undefined {
  if (spec === undefined) return undefined;
  return spec.action.shape.reduce((a, b) => a * b, 1);
}

async function serverPolicyProvider(
  name: ServerRuntimeName,
  connector: ServerConnector,
  options: ServerRuntimeOptions,
  protocol: Protocol,
  ctx: PolicyRuntimeContext,
): Promise<PolicyProvider> {
  const config = configOf(protocol, ctx.file);
  const sessions = await connectAll(connector, config, Math.max(1, ctx.batchSize), ctx.file);
  let serverRecord: PolicyServerRecord;
  try {
    serverRecord = policyServerRecord(name, config.endpoint, sessions, ctx.file);
  } catch (e) {
    await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
    throw e;
  }
  const memories: ServerMemory[] = [];
  const specs = (): SpecSource => specSourceOf(protocol, ctx.file);
  // what the server declares itself (a vla-eval HELLO's action_spec / observation_spec; an openpi metadata frame
  // carrying the same): checked by the convention preflight (convention-preflight.ts)
  const declared = sessions[0] === undefined ? null : serverConventions(name, sessions[0].metadata, config.endpoint);
  return {
    ...(declared === null ? {} : { conventions: declared }),
    description: `${name} policy server at ${config.endpoint} (started outside IMEP; never restarted by it); memory: ${memoryName(protocol, config)}`,
    serverRecord,
    async policyFor(task: TaskContext, batchSize: number): Promise<RunnerPolicy> {
      if (batchSize > sessions.length) {
        const added = await connectAll(connector, config, batchSize - sessions.length, ctx.file);
        sessions.push(...added);
        // a later connection must reach the same model (the new sessions are closed with the rest on release)
        sessions.forEach((s, slot) => assertSessionMatches(serverRecord, s, slot, ctx.file));
      }
      const mem = protocol.memory;
      let memory: ServerMemory;
      if (mem.bank === 'history') memory = new HistoryMemory(mem, batchSize);
      else if (config.bankHook && options.bankHookMemory !== null)
        memory = await (options.bankHookMemory ?? startBankHook)(config, batchSize);
      else
        throw new ImepError('E_PROTOCOL_INVALID', `the ${name} runtime has no memory for memory.bank ${mem.bank}`, {
          file: ctx.file,
          field: 'memory.bank',
        });
      memories.push(memory);
      const spec = specs()(task);
      const policy = new ServerPolicy({
        endpoint: config.endpoint,
        sessions: sessions.slice(0, batchSize),
        memory,
        observation: config.observation,
        action: config.action,
        envId: task.envId,
        ...(spec?.instruction === undefined ? {} : { instruction: spec.instruction }),
        ...(actionDimOf(spec) === undefined ? {} : { actionDim: actionDimOf(spec) as number }),
        decisionFromStep: task.facts.decisionFromStep,
      });
      const runner: RunnerPolicy & ReportsChunkLength = {
        maxBatch: policy.maxBatch,
        resetSlot: (slot, info) => policy.resetSlot(slot, info),
        inferBatch: (requests) => policy.inferBatch(requests),
        setReadHook: (hook) => policy.setReadHook(hook),
        slotMemory: () => noOpMemory,
        lastChunkLength: (slot) => policy.lastChunkLength(slot),
      };
      return runner;
    },
    async release() {
      await Promise.all(memories.splice(0).map((m) => m.close().catch(() => undefined)));
      await Promise.all(sessions.splice(0).map((s) => s.close().catch(() => undefined)));
    },
  };
}

/**
 * The fields the policy is given against each environment's spec known now: every mapped field and every history key
 * must be one the environment sends (a history key a numeric one); refused naming the field and the environment.
 */
function checkFieldsSent(protocol: Protocol, file: string, specs: SpecSource): void {
  const config = serverPolicyConfig(protocol);
  if (config === undefined) return;
  const history = protocol.memory.bank === 'history' ? protocol.memory.keys : [];
  for (const task of taskEntries(protocol).values()) {
    const spec = specs(task);
    if (spec === undefined) continue;
    const refuse = (field: string, what: string): never => {
      throw new ImepError('E_PROTOCOL_INVALID', `${what}, but the environment ${spec.id} sends no such field`, {
        file,
        field,
        hint: `its method-visible fields: ${spec.methodVisible.join(', ')}`,
      });
    };
    for (const [key, source] of Object.entries(config.observation))
      if (!source.startsWith('$') && !source.startsWith('history/') && spec.observation[source] === undefined)
        refuse(`policy.observation.${key}`, `policy.observation.${key} is ${source}`);
    history.forEach((field, i) => {
      const f = spec.observation[field];
      if (f === undefined) refuse(`memory.keys[${i}]`, `memory.keys lists ${field}`);
      else if (/^(str|string|object)/.test(f.dtype))
        throw new ImepError(
          'E_PROTOCOL_INVALID',
          `memory.keys lists ${field}, which the environment ${spec.id} sends as ${f.dtype}: history keeps numeric fields`,
          {
            file,
            field: `memory.keys[${i}]`,
          },
        );
    });
  }
}

/** The registered kind of one policy-server wire protocol (src/kinds registers it with the real connector). */
export function serverRuntimeKind(
  name: ServerRuntimeName,
  connector: ServerConnector,
  options: ServerRuntimeOptions = {},
): PolicyRuntimeKind {
  return {
    name,
    summary: `a policy served, unmodified, by ${name === 'openpi-websocket' ? "openpi's WebsocketPolicyServer" : 'a vla-eval model server'} someone started; IMEP speaks its wire protocol`,
    fields: SERVER_POLICY_FIELDS,
    checkProtocol: checkServerProtocol,
    preflight(protocol, ctx) {
      const config = configOf(protocol, ctx.file);
      if (config.bankHook && options.bankHookMemory === null)
        throw new ImepError(
          'E_PROTOCOL_INVALID',
          `policy.bankHook: true, but this build's ${name} runtime has no bank-hook memory`,
          { file: ctx.file, field: 'policy.bankHook', hint: 'set bankHook: false with memory.bank: history' },
        );
      return [
        `policy: the ${name} server at ${config.endpoint} is not contacted by the checks; the run connects ${ctx.batchSize} session(s) before anything is written`,
      ];
    },
    checkEnvironments(protocol, ctx, specs) {
      handedSpecs.set(protocol, specs);
      checkFieldsSent(protocol, ctx.file, specs);
    },
    memoryAccess(protocol) {
      const config = serverPolicyConfig(protocol);
      return { installable: false, name: config === undefined ? `${name} server` : memoryName(protocol, config) };
    },
    open(protocol, ctx) {
      return serverPolicyProvider(name, connector, options, protocol, ctx);
    },
    describe(protocol) {
      const config = serverPolicyConfig(protocol);
      return config === undefined
        ? `${name} policy server (none named)`
        : `${name} policy server at ${config.endpoint}`;
    },
  };
}
