/**
 * The bridge layer a simulator kind's `open` asks for (SimulatorOpenContext.bridged, src/runtime/simulator-kind.ts):
 * the servers a ServerSource names — `imep sim serve lite` servers IMEP starts, Python sim-bridge servers IMEP
 * starts in a sandbox under the registered limits, or the one server someone else started — on a BridgeServerPool
 * (src/bridges/server-pool.ts). Before anything runs, each protocol environment is made once on the server (slot 0
 * adopts it later) and its spec checked against the protocol's allowlists: a method-visible field the simulator
 * declares evaluator-only is E_ALLOWLIST_OVERLAP, a method-visible field it does not show is E_PROTOCOL_INVALID.
 * During the run the episode loop splits every observation by the protocol's allowlists exactly as in process.
 */
import { join } from 'node:path';
import { RemoteEnvironment, protectedZones } from '../bridges/index.js';
import type { BridgeServerPool, ServerCommand, SimulatorSandboxOptions } from '../bridges/index.js';
import type {
  BridgedRequest,
  EnvSpec,
  ServerSource,
  SimulatorContext,
  Simulators,
  TaskEntry,
} from '../runtime/index.js';
import { ImepError, isImepError } from '../core/index.js';
import { envField, type Protocol } from '../protocol/index.js';
import { simulatorEnvironmentOf } from '../evidence/index.js';
import type { SimulatorOptions } from './bridge-envs.js';
import { assertAdapterAvailable, assertSeedsTaken, makeRefusal } from './bridge-preflight.js';
import { envKey, makeSlotBatches, slotKey, vectorizedNote, type BatchMade } from './slot-batches.js';
import { OPEN_TASK_ENVS } from './run-plan.js';

/** The servers IMEP starts for `source` in a sandbox (Python sim-bridge servers): what each sandbox is given. */
export type StartedPythonServers = Extract<ServerSource, { readonly start: 'python' }>;

/**
 * What a started simulator server's sandbox is given (src/bridges/simulator-sandbox.ts): the replay folder, the devices
 * `simulator.devices` declares, and what no bind may expose (the campaigns folder among them).
 */
export function simulatorSandboxOptions(
  source: StartedPythonServers,
  ctx: SimulatorContext,
  root: string,
  env: NodeJS.ProcessEnv = process.env,
): SimulatorSandboxOptions {
  return {
    bridgePackage: join(root, 'sim-bridge', 'imep_sim_bridge'),
    ...(source.replayDir === undefined ? {} : { replayDir: source.replayDir }),
    ...(source.devices !== undefined ? { devices: source.devices } : {}),
    protect: protectedZones({ campaignsDir: ctx.campaignsDir, env }),
    file: ctx.file,
  };
}

interface OpenedPool {
  readonly pool: BridgeServerPool;
  readonly description: string;
  readonly isolation: string;
  readonly limits: string | null;
}

async function openPool(
  request: BridgedRequest,
  ctx: SimulatorContext,
  options: SimulatorOptions,
): Promise<OpenedPool> {
  // imported here, not at the top: in-process lite runs (every shard of a lite campaign) never load the
  // ZeroMQ client, msgpackr and execa (a tenth of a second of start-up per process)
  const [{ BridgeServerPool }, { liteServerCommand, pythonServerCommand }] = await Promise.all([
    import('../bridges/server-pool.js'),
    import('../bridges/supervisor.js'),
  ]);
  const source = request.servers;
  const poolOptions = {
    ...(options.deadlines ? { deadlines: options.deadlines } : {}),
    ...(options.connectMs === undefined ? {} : { connectMs: options.connectMs }),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(request.vectorize ? { vectorize: true } : {}),
  };
  const servers = options.servers ?? 1;
  const plural = servers === 1 ? 'server' : 'servers';
  if ('attach' in source) return attachPool(BridgeServerPool, source, request.adapter, ctx, poolOptions);
  if (source.start === 'imep-lite') {
    const pool = await BridgeServerPool.spawn(servers, (endpoint) => liteServerCommand(endpoint), poolOptions);
    return {
      pool,
      description: `lite simulators over the bridge: ${servers} \`imep sim serve lite\` ${plural} started by IMEP`,
      isolation: "isolation: none (IMEP's own lite simulator server: no third-party code runs in it)",
      limits: null,
    };
  }
  const { adapter, replayDir } = source;
  const plain = (endpoint: string): ServerCommand =>
    pythonServerCommand(endpoint, { adapters: [adapter], ...(replayDir === undefined ? {} : { replayDir }) });
  const [{ sandboxSimulator, describeIsolation, hostLimiter }, { packageRoot }] = await Promise.all([
    import('../bridges/index.js'),
    import('../bridges/supervisor.js'),
  ]);
  const boxOptions = simulatorSandboxOptions(source, ctx, packageRoot());
  // every server (and every restart) is started in the sandbox; all get the same isolation (bwrap is probed once per process)
  let isolation = 'isolation: none (no server started)';
  let limits: string | null = null;
  // each server runs under the registered limits (simulator.limits over the simulator-server defaults), in a cgroup
  // of its own where one can be made; a server past a call deadline is restarted by the pool (it kills its group)
  const limiters = new Map<string, ReturnType<typeof hostLimiter>>();
  const command = (endpoint: string): ServerCommand => {
    let limiter = limiters.get(endpoint);
    if (limiter === undefined) limiters.set(endpoint, (limiter = hostLimiter('simulator server', source.limits)));
    const boxed = sandboxSimulator(plain(endpoint), endpoint, { ...boxOptions, wrap: limiter.insideSandbox });
    isolation = describeIsolation(boxed.isolation);
    const inSandbox = boxed.isolation.mode === 'bubblewrap';
    limits = limiter.describe(inSandbox, boxed.isolation.mode === 'bubblewrap' && boxed.isolation.uid !== null);
    return limiter.finish(boxed.command, inSandbox);
  };
  const registered = source.limits?.callDeadlineS;
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
    description: `sim-bridge adapter ${adapter}: ${servers} ${plural} started by IMEP (${[shown.file, ...shown.args].join(' ')})`,
    isolation,
    limits,
  };
}

/** The one server someone else started at `source.attach`, checked to have the adapter. */
async function attachPool(
  Pool: typeof BridgeServerPool,
  source: Extract<ServerSource, { readonly attach: string }>,
  adapter: string,
  ctx: SimulatorContext,
  poolOptions: Parameters<typeof BridgeServerPool.attach>[1],
): Promise<OpenedPool> {
  let pool: BridgeServerPool;
  try {
    pool = await Pool.attach(source.attach, poolOptions);
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
      `the simulator server at ${source.attach} has no '${adapter}' adapter (it has: ${adapters.join(', ') || 'none'})`,
      {
        file: ctx.file,
        field: 'simulator.adapter',
        hint: `start the server with --adapters ${adapter}`,
      },
    );
  }
  return {
    pool,
    description: `sim-bridge adapter ${adapter} at ${source.attach} (started outside IMEP; never restarted by it)`,
    isolation: 'isolation: none (a server started outside IMEP: its isolation is whoever started it)',
    limits: null,
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
  const shownBy = new Map<string, readonly string[]>();
  for (const [k, entry] of protocol.envs.entries()) {
    const kwargs = { ...(entry.kwargs ?? {}) };
    const key = envKey(entry.id, kwargs);
    if (specs.has(key)) continue;
    let env: RemoteEnvironment;
    try {
      env = await RemoteEnvironment.make(pool.client(0), entry.id, kwargs, pool.deadlines);
    } catch (e) {
      throw makeRefusal(
        e,
        entry.id,
        (sub) => envField(protocol, k, sub),
        pool.hello(0).envs,
        `at ${endpoint}`,
        ctx.file,
      );
    }
    const spec = env.spec;
    // the first tasks' environments stay open for their slot 0 to adopt; the others are closed once checked (a real
    // simulator's env holds its scene: a libero-90 suite's 90 LIBERO envs would take ~77 GB at once)
    if (made.size < OPEN_TASK_ENVS) made.set(key, env);
    else await env.close().catch(() => undefined);
    assertSeedsTaken(protocol, spec, entry.id, ctx.file);
    const evaluatorOnly = new Set(spec.evaluatorOnly);
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
    });
    shownBy.set(entry.id, spec.methodVisible);
    specs.set(key, spec);
  }
  assertEveryFieldShown(methodVisible, shownBy, ctx.file);
  return specs;
}

/**
 * Every method-visible field the protocol lists is shown by some environment: by its one env, or — a suite of tasks
 * that differ in what a camera shows (RememberColor's `cubes`, Intercept's `ball`) — by at least one of them.
 */
export function assertEveryFieldShown(
  methodVisible: readonly string[],
  shownBy: ReadonlyMap<string, readonly string[]>,
  file: string,
): void {
  methodVisible.forEach((f, i) => {
    if ([...shownBy.values()].some((fields) => fields.includes(f))) return;
    const field = `allowlists.methodVisible[${i}]`;
    const only = shownBy.size === 1 ? [...shownBy][0] : undefined;
    if (only !== undefined)
      throw new ImepError('E_PROTOCOL_INVALID', `${only[0]} does not show "${f}" to the policy`, {
        file,
        field,
        hint: `method-visible fields of ${only[0]}: ${only[1].join(', ')}`,
      });
    throw new ImepError('E_PROTOCOL_INVALID', `no environment of the protocol shows "${f}" to the policy`, {
      file,
      field,
      hint: [...shownBy].map(([id, fields]) => `${id}: ${fields.join(', ')}`).join('; '),
    });
  });
}

/**
 * Opens bridged simulators for a kind's `open`: the servers started or attached, every protocol environment made
 * once and checked (and, with vectorised hosting, every slot's environment made in one batch per server).
 */
export async function openBridged(
  request: BridgedRequest,
  protocol: Protocol,
  ctx: SimulatorContext,
  options: SimulatorOptions,
): Promise<Simulators> {
  const { pool, description: poolDescription, isolation, limits } = await openPool(request, ctx, options);
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
    if (request.checkAdapter)
      assertAdapterAvailable(pool.hello(0), request.adapter, `at ${pool.endpoints[0] as string}`, ctx.file);
    specs = await preflightSpecs(pool, protocol, ctx, made);
    if (request.vectorize)
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
  const { adapter } = request;
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
    description: `${poolDescription}${vectorizedNote(pool, request.vectorize)}`,
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
