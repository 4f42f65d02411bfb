/**
 * The runner's environments, chosen by the frozen protocol's `simulator`:
 *
 *   { kind: lite }                          in-process lite simulators (the default; fastest)
 *   { kind: lite, transport: bridge }       the same simulators behind `imep sim serve lite` servers
 *                                           started by IMEP (testing and parity: rows are identical)
 *   { kind: sim-bridge, adapter, endpoint } the Python sim-bridge the user started at `endpoint`
 *                                           (never restarted by IMEP)
 *   { kind: sim-bridge, adapter }           `python3 -m imep_sim_bridge serve --adapters A` started
 *                                           and supervised by IMEP (restarted on death or wedge)
 *
 * Bridged environments sit on a BridgeServerPool (src/bridges/server-pool.ts). Before anything runs,
 * each protocol environment is made once on the server (slot 0 adopts it later) and its spec checked against the protocol's
 * allowlists: a method-visible field the simulator declares evaluator-only is E_ALLOWLIST_OVERLAP, a
 * method-visible field it does not show is E_PROTOCOL_INVALID. During the run the episode loop splits
 * every observation by the protocol's allowlists exactly as on the in-process path.
 */
import { join } from 'node:path';
import { makeLiteEnv } from '../sims/index.js';
import { MAX_HANDLES_PER_CLIENT, RemoteEnvironment, type RemoteDeadlines } from '../bridges/index.js';
import type { BridgeServerPool, ServerPoolObserver, ServerCommand, SimulatorSandboxOptions } from '../bridges/index.js';
import { protectedZones } from '../bridges/index.js';
import type { EnvSpec } from '../runtime/index.js';
import { canonicalJson, ImepError, isImepError } from '../core/index.js';
import type { Protocol } from '../protocol/index.js';
import type { EnvProvider, TaskEntry, SpecSource } from './types.js';
import { simulatorEnvironmentOf, type SimulatorEnvironment } from '../evidence/index.js';
import { assertAdapterAvailable, assertSeedsTaken, makeRefusal } from './bridge-preflight.js';
import { assertSimulatorSettings } from './simulator-settings.js';
import { asksVectorized, envKey, makeSlotBatches, slotKey, vectorizedNote, type BatchMade } from './slot-batches.js';

/** Execution details of bridged simulators (none of them changes a row). */
export interface SimulatorOptions {
  /** Servers IMEP starts (lite over the bridge, or a sim-bridge without endpoint); batch slot s uses server s mod K. Default 1. */
  readonly servers?: number;
  readonly deadlines?: Partial<RemoteDeadlines>;
  /** Deadline of the hello that (re)connects to a server (ms). */
  readonly connectMs?: number;
  readonly observer?: ServerPoolObserver;
  /** The run's batch slots: with `simulator.vectorize`, each server makes its slots' environments with one makeBatch. */
  readonly slots?: number;
}

/** The environments of a run, and what reaches them. */
export interface Simulators {
  readonly envs: EnvProvider;
  /** One line naming the simulator and how it is reached; null for in-process lite. */
  readonly description: string | null;
  /**
   * How the simulator servers were isolated from IMEP's files and secrets, one line (src/bridges/sandbox.ts):
   * "isolation: bubblewrap (…)" or "isolation: none (why)"; null for in-process lite (no server).
   */
  readonly isolation: string | null;
  /** The resource limits in force on the servers IMEP started, one line (src/bridges/resource-limits.ts); else null. */
  readonly limits: string | null;
  /** The spec each protocol environment declared when it was checked (undefined: in-process lite, not asked). */
  readonly specOf: SpecSource;
  /**
   * What the sim-bridge adapter reports about the simulator stack it drives (hello.environment[adapter]:
   * packages, versions, renderer), for the run's record; undefined where the server reports nothing.
   */
  readonly environment: SimulatorEnvironment | undefined;
  /** Recoveries and failed calls so far (null for in-process lite). */
  summary(): string | null;
  close(): Promise<void>;
}

/** Where the protocol's relative paths (replayDir) resolve, in order: the first that holds the path. */
export interface SimulatorContext {
  readonly file: string;
  readonly roots: readonly string[];
  /** The run's campaigns folder: no folder a simulator server's sandbox binds may expose it (sandbox-binds.ts). */
  readonly campaignsDir?: string;
}

export const inProcessLiteEnvs: EnvProvider = (task) => makeLiteEnv(task.envId, task.kwargs);

/** Protocol adapter names → the sim-bridge's `--adapters` names (sim-bridge/imep_sim_bridge/adapters). */
export const SIM_BRIDGE_ADAPTERS = {
  mikasa: 'mikasa',
  simplerenv: 'simplerenv',
  libero: 'libero',
  replay: 'replay',
} as const;

export { resolveReplayDir } from './simulator-settings.js';

/**
 * What a started simulator server's sandbox is given (src/bridges/simulator-sandbox.ts): the replay folder, the devices
 * `simulator.devices` declares, and what no bind may expose (the campaigns folder among them).
 */
export function simulatorSandboxOptions(
  protocol: Protocol,
  ctx: SimulatorContext,
  root: string,
  replayDir: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): SimulatorSandboxOptions {
  const sim = protocol.simulator;
  return {
    bridgePackage: join(root, 'sim-bridge', 'imep_sim_bridge'),
    ...(replayDir === undefined ? {} : { replayDir }),
    ...(sim.kind === 'sim-bridge' && sim.devices !== undefined ? { devices: sim.devices } : {}),
    protect: protectedZones({ campaignsDir: ctx.campaignsDir, env }),
    file: ctx.file,
  };
}

async function openPool(
  protocol: Protocol,
  ctx: SimulatorContext,
  options: SimulatorOptions,
): Promise<{ pool: BridgeServerPool; description: string; isolation: string; limits: string | null }> {
  // imported here, not at the top: in-process lite runs (every shard of a lite campaign) never load the
  // ZeroMQ client, msgpackr and execa (a tenth of a second of start-up per process)
  const [{ BridgeServerPool }, { liteServerCommand, pythonServerCommand }] = await Promise.all([
    import('../bridges/server-pool.js'),
    import('../bridges/supervisor.js'),
  ]);
  const sim = protocol.simulator;
  const poolOptions = {
    ...(options.deadlines ? { deadlines: options.deadlines } : {}),
    ...(options.connectMs === undefined ? {} : { connectMs: options.connectMs }),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(asksVectorized(protocol) ? { vectorize: true } : {}),
  };
  const servers = options.servers ?? 1;
  const plural = servers === 1 ? 'server' : 'servers';
  if (sim.kind === 'lite') {
    const pool = await BridgeServerPool.spawn(servers, (endpoint) => liteServerCommand(endpoint), poolOptions);
    return {
      pool,
      description: `lite simulators over the bridge: ${servers} \`imep sim serve lite\` ${plural} started by IMEP`,
      isolation: "isolation: none (IMEP's own lite simulator server: no third-party code runs in it)",
      limits: null,
    };
  }
  const adapter = SIM_BRIDGE_ADAPTERS[sim.adapter];
  const replayDir = assertSimulatorSettings(protocol, ctx);
  if (sim.endpoint !== undefined) {
    let pool: BridgeServerPool;
    try {
      pool = await BridgeServerPool.attach(sim.endpoint, poolOptions);
    } catch (e) {
      if (!isImepError(e)) throw e;
      throw new ImepError(e.code, e.message, {
        file: ctx.file,
        field: 'simulator.endpoint',
        ...(e.hint ? { hint: e.hint } : {}),
        cause: e,
      });
    }
    const adapters = pool.hello(0).adapters;
    if (!adapters.includes(adapter)) {
      await pool.dispose();
      throw new ImepError(
        'E_PROTOCOL_INVALID',
        `the simulator server at ${sim.endpoint} has no '${adapter}' adapter (it has: ${adapters.join(', ') || 'none'})`,
        {
          file: ctx.file,
          field: 'simulator.adapter',
          hint: `start the server with --adapters ${adapter}`,
        },
      );
    }
    return {
      pool,
      description: `sim-bridge adapter ${sim.adapter} at ${sim.endpoint} (started outside IMEP; never restarted by it)`,
      isolation: 'isolation: none (a server started outside IMEP: its isolation is whoever started it)',
      limits: null,
    };
  }
  const plain = (endpoint: string): ServerCommand =>
    pythonServerCommand(endpoint, { adapters: [adapter], ...(replayDir === undefined ? {} : { replayDir }) });
  const [{ sandboxSimulator, describeIsolation, hostLimiter }, { packageRoot }] = await Promise.all([
    import('../bridges/index.js'),
    import('../bridges/supervisor.js'),
  ]);
  const boxOptions = simulatorSandboxOptions(protocol, ctx, packageRoot(), replayDir);
  // every server (and every restart) is started in the sandbox; all get the same isolation (bwrap is probed once per process)
  let isolation = 'isolation: none (no server started)';
  let limits: string | null = null;
  // each server runs under the registered limits (simulator.limits over the simulator-server defaults), in a cgroup
  // of its own where one can be made; a server past a call deadline is restarted by the pool (it kills its group)
  const limiters = new Map<string, ReturnType<typeof hostLimiter>>();
  const command = (endpoint: string): ServerCommand => {
    let limiter = limiters.get(endpoint);
    if (limiter === undefined) limiters.set(endpoint, (limiter = hostLimiter('simulator server', sim.limits)));
    const boxed = sandboxSimulator(plain(endpoint), endpoint, { ...boxOptions, wrap: limiter.insideSandbox });
    isolation = describeIsolation(boxed.isolation);
    const inSandbox = boxed.isolation.mode === 'bubblewrap';
    limits = limiter.describe(inSandbox, boxed.isolation.mode === 'bubblewrap' && boxed.isolation.uid !== null);
    return limiter.finish(boxed.command, inSandbox);
  };
  const registered = sim.limits?.callDeadlineS;
  const pool = await BridgeServerPool.spawn(servers, command, {
    ...poolOptions,
    // a registered call deadline bounds every step and reset (an explicit option, e.g. a test's, still wins)
    ...(registered === undefined
      ? {}
      : { deadlines: { stepMs: registered * 1000, resetMs: registered * 1000, ...(options.deadlines ?? {}) } }),
  });
  const shown = plain('ipc://…');
  return {
    pool,
    description: `sim-bridge adapter ${sim.adapter}: ${servers} ${plural} started by IMEP (${[shown.file, ...shown.args].join(' ')})`,
    isolation,
    limits,
  };
}

/**
 * Makes every protocol environment once on server 0 and checks its spec against the protocol's allowlists and seeds.
 * The environments it made stay open in `made` (by key): the run's slot 0 of each adopts its own instead of making
 * another (a real simulator's make takes seconds: LIBERO ~7 s); whatever is not adopted is closed with the pool.
 */
async function preflightSpecs(
  pool: BridgeServerPool,
  protocol: Protocol,
  ctx: SimulatorContext,
  made: Map<string, RemoteEnvironment>,
): Promise<Map<string, EnvSpec>> {
  const specs = new Map<string, EnvSpec>();
  const endpoint = pool.endpoints[0] as string;
  const { methodVisible } = protocol.allowlists;
  for (const [k, entry] of protocol.envs.entries()) {
    const kwargs = { ...(entry.kwargs ?? {}) };
    const key = envKey(entry.id, kwargs);
    if (specs.has(key)) continue;
    let env: RemoteEnvironment;
    try {
      env = await RemoteEnvironment.make(pool.client(0), entry.id, kwargs, pool.deadlines);
    } catch (e) {
      throw makeRefusal(e, entry.id, k, pool.hello(0).envs, `at ${endpoint}`, ctx.file);
    }
    const spec = env.spec;
    made.set(key, env);
    assertSeedsTaken(protocol, spec, entry.id, ctx.file);
    const evaluatorOnly = new Set(spec.evaluatorOnly);
    const shown = new Set(spec.methodVisible);
    methodVisible.forEach((f, i) => {
      if (evaluatorOnly.has(f)) {
        throw new ImepError(
          'E_ALLOWLIST_OVERLAP',
          `field "${f}" is evaluator-only in ${entry.id} (as the server at ${endpoint} declares it) but on the protocol's method-visible allowlist`,
          {
            file: ctx.file,
            field: `allowlists.methodVisible[${i}]`,
            hint: 'a field the simulator keeps for the evaluator is never shown to the policy: remove it from methodVisible',
          },
        );
      }
      if (!shown.has(f)) {
        throw new ImepError('E_PROTOCOL_INVALID', `${entry.id} does not show "${f}" to the policy`, {
          file: ctx.file,
          field: `allowlists.methodVisible[${i}]`,
          hint: `method-visible fields of ${entry.id}: ${spec.methodVisible.join(', ')}`,
        });
      }
    });
    specs.set(key, spec);
  }
  return specs;
}

/**
 * Refuses more than one server where IMEP starts none — in-process lite simulators, or a server the user started at
 * `simulator.endpoint` (campaign run calls it before anything is written; openSimulators again).
 */
export function checkServerCount(protocol: Protocol, file: string, servers: number | undefined): void {
  const sim = protocol.simulator;
  const inProcess = sim.kind === 'lite' && (sim.transport ?? 'in-process') === 'in-process';
  const attached = sim.kind === 'sim-bridge' ? sim.endpoint : undefined;
  if ((servers ?? 1) <= 1 || (!inProcess && attached === undefined)) return;
  const why = inProcess
    ? 'runs the lite simulators in process: there are no servers to start'
    : `connects to the one server you started at ${attached}: IMEP starts none`;
  throw new ImepError('E_USAGE', `${servers} simulator servers asked for, but the protocol's simulator ${why}`, {
    file,
    field: '--servers',
    hint: inProcess
      ? 'drop --servers, or use a protocol whose simulator is { kind: lite, transport: bridge }'
      : 'drop --servers',
  });
}

/**
 * Refuses a bridged run whose environments would exceed what one simulator server serves one client
 * (MAX_HANDLES_PER_CLIENT): the runner holds one environment per task and batch slot, slot s on server s mod K.
 */
export function checkHandlesPerServer(
  protocol: Protocol,
  file: string,
  batch: number,
  servers: number | undefined,
): void {
  const sim = protocol.simulator;
  if (sim.kind === 'lite' && (sim.transport ?? 'in-process') === 'in-process') return;
  const k = Math.max(1, servers ?? 1);
  const perServer = protocol.envs.length * Math.ceil(batch / k);
  if (perServer <= MAX_HANDLES_PER_CLIENT) return;
  throw new ImepError(
    'E_USAGE',
    `${protocol.envs.length} tasks × ${Math.ceil(batch / k)} batch slots per server need ${perServer} open environments on one simulator server, over the ${MAX_HANDLES_PER_CLIENT} a server holds for one client`,
    {
      file,
      field: '--batch',
      hint: `lower --batch, or spread the slots over more servers with --servers (${Math.ceil(perServer / MAX_HANDLES_PER_CLIENT) * k} or more)`,
    },
  );
}

/** Opens the simulators a protocol names (servers started or attached, every environment checked). */
export async function openSimulators(
  protocol: Protocol,
  ctx: SimulatorContext,
  options: SimulatorOptions = {},
): Promise<Simulators> {
  const sim = protocol.simulator;
  checkServerCount(protocol, ctx.file, options.servers);
  if (sim.kind === 'lite' && (sim.transport ?? 'in-process') === 'in-process') {
    // the lite environments' specs are known without starting anything: made once per task, asked by the checks
    const specs = new Map<string, EnvSpec>();
    return {
      envs: inProcessLiteEnvs,
      description: null,
      isolation: null,
      limits: null,
      specOf: (task) => {
        const key = envKey(task.envId, task.kwargs);
        let spec = specs.get(key);
        if (spec === undefined) specs.set(key, (spec = makeLiteEnv(task.envId, task.kwargs).spec));
        return spec;
      },
      environment: undefined,
      summary: () => null,
      close: async () => undefined,
    };
  }
  const { pool, description: poolDescription, isolation, limits } = await openPool(protocol, ctx, options);
  const made = new Map<string, RemoteEnvironment>();
  const batchMade = new Map<string, BatchMade>();
  const generation = pool.generation(0);
  // the environments the check (and vectorised hosting) made and no slot adopted: closed (a server IMEP did not start keeps running)
  const closeMade = async (): Promise<void> => {
    for (const env of made.values())
      if (pool.generation(0) === generation && pool.client(0).alive) await env.close().catch(() => undefined);
    made.clear();
    for (const b of batchMade.values())
      if (pool.generation(b.server) === b.generation && pool.client(b.server).alive)
        await b.remote.close().catch(() => undefined);
    batchMade.clear();
  };
  let specs: Map<string, EnvSpec>;
  try {
    if (sim.kind === 'sim-bridge')
      assertAdapterAvailable(
        pool.hello(0),
        SIM_BRIDGE_ADAPTERS[sim.adapter],
        `at ${pool.endpoints[0] as string}`,
        ctx.file,
      );
    specs = await preflightSpecs(pool, protocol, ctx, made);
    if (asksVectorized(protocol))
      await makeSlotBatches(pool, protocol, Math.max(1, options.slots ?? 1), specs, made, batchMade);
  } catch (e) {
    await closeMade();
    await pool.dispose();
    throw e;
  }
  const specFor = (task: TaskEntry): EnvSpec => {
    const spec = specs.get(envKey(task.envId, task.kwargs));
    if (spec === undefined)
      throw new ImepError(
        'E_INTERNAL',
        `no checked spec for ${task.envId}; the runner asked for an environment the protocol does not list`,
      );
    return spec;
  };
  const adapter = sim.kind === 'sim-bridge' ? SIM_BRIDGE_ADAPTERS[sim.adapter] : 'lite';
  return {
    envs: (task, slot) => {
      const key = envKey(task.envId, task.kwargs);
      const batched = batchMade.get(slotKey(key, slot));
      if (batched !== undefined) {
        batchMade.delete(slotKey(key, slot));
        return pool.environment(batched.server, task.envId, task.kwargs, specFor(task), {
          remote: batched.remote,
          generation: batched.generation,
        });
      }
      const checked = slot % pool.size === 0 ? made.get(key) : undefined;
      if (checked !== undefined) made.delete(key);
      return pool.environment(
        slot % pool.size,
        task.envId,
        task.kwargs,
        specFor(task),
        checked === undefined ? undefined : { remote: checked, generation },
      );
    },
    description: `${poolDescription}${vectorizedNote(pool, asksVectorized(protocol))}`,
    isolation,
    limits,
    specOf: (task) => specs.get(envKey(task.envId, task.kwargs)),
    environment: simulatorEnvironmentOf(adapter, pool.hello(0).environment?.[adapter]),
    summary: () => {
      const s = pool.stats();
      const failed = Object.entries(s.failedCalls);
      const recovered =
        s.origin === 'spawned'
          ? `${s.recoveries} restart${s.recoveries === 1 ? '' : 's'}`
          : `${s.recoveries} reconnect${s.recoveries === 1 ? '' : 's'}`;
      const b = pool.batchStats();
      const batched = b.messages === 0 ? '' : `; ${b.steps} steps in ${b.messages} stepBatch messages`;
      return `${recovered}, failed calls: ${failed.length === 0 ? 'none' : failed.map(([c, n]) => `${c} ${n}`).join(', ')}${batched}`;
    },
    close: async () => {
      await closeMade();
      await pool.dispose();
    },
  };
}
