/**
 * K bridge servers behind one object, with failure detection and recovery — what the runner needs to
 * drive simulators over the ZeroMQ bridge:
 *
 * - SPAWNED servers (`spawn`): each its own process on a private ipc:// endpoint (0700 directory),
 *   supervised (supervisor.ts: its death fails pending calls at once with E_BRIDGE_REMOTE).
 * - an ATTACHED server (`attach`): one the user started at an endpoint; IMEP never restarts it.
 *
 * A call that fails for want of a server (E_BRIDGE_REMOTE from a death, E_BRIDGE_TIMEOUT from a missed
 * deadline, anything that is not the server's own error reply) fails that episode — the runner records
 * it under the protocol's registered execution-failure policy — and marks the server SUSPECT: the other
 * episodes in flight on it then fail fast instead of waiting a deadline each, since the server's state
 * of them is gone. An error REPLY (BridgeCallError: the server answered) fails only its episode.
 *
 * `ensure(i)` (called before every reset) recovers a suspect server: a spawned one is restarted
 * (SIGCONT + SIGTERM, then a fresh process) and reconnected; an attached one is only reconnected (a fresh
 * socket and hello) — if it does not answer, the reset fails naming the endpoint, and further resets
 * fail fast for `attachedRetryMs` before the next try. Each recovery bumps the server's generation, and
 * environments made on an older generation re-make themselves (pooled-environment.ts).
 */
import { existsSync } from 'node:fs';
import { ImepError, isImepError } from '../core/index.js';
import { BridgeClient } from './client.js';
import { privateIpcEndpoint, type CurveClientKeys, type PrivateIpcEndpoint } from './endpoint.js';
import { BATCH_OPS, type HelloReply } from './op-schemas.js';
import { PooledEnvironment, type AdoptedEnvironment } from './pooled-environment.js';
import { BridgeCallError } from './remote-error.js';
import { DEFAULT_REMOTE_DEADLINES, type RemoteDeadlines } from './remote-environment.js';
import type { RemoteEnvironment } from './remote-environment.js';
import type { EnvSpec, NdArray, SimEnvironment, StepResult } from '../runtime/index.js';
import { StepBatcher } from './step-batcher.js';
import { ServerSupervisor, type ServerCommand } from './supervisor.js';

/**
 * What a pool reports as it runs — also the narrow seam tests use to inject faults (signal a server
 * before a given step, see test/reliability/support/bridge-pool.ts). Must not throw.
 */
export interface ServerPoolObserver {
  /** A step is about to be sent to server `server`. */
  beforeStep?(server: number): void;
  /** A call on server `server` failed (every failure, including error replies). */
  onFailure?(server: number, error: ImepError): void;
  /** Server `server` was restarted (spawned) or reconnected (attached). */
  onRecovered?(server: number, generation: number): void;
}

export interface ServerPoolOptions {
  /** Per-op deadlines of environment calls (defaults: DEFAULT_REMOTE_DEADLINES). */
  readonly deadlines?: Partial<RemoteDeadlines>;
  /** Deadline of the hello that (re)connects to a server (ms; default 30 000 spawned, 10 000 attached). */
  readonly connectMs?: number;
  /** How long a spawned server may take to answer its first hello (ms; default 60 000). */
  readonly readyTimeoutMs?: number;
  /** After an attached server failed to answer a reconnect, resets fail fast this long (ms; default 5 000). */
  readonly attachedRetryMs?: number;
  readonly observer?: ServerPoolObserver;
  /**
   * Vectorised hosting: on a server that lists the batch ops (`makeBatch`, `stepBatch`) in `hello.ops`, the steps
   * of one tick travel as one `stepBatch` (step-batcher.ts) and environments are made with `makeBatch`; a server
   * without them gets one message per handle, as without this option.
   */
  readonly vectorize?: boolean;
}

/** Whether a server's hello lists every batch op. */
export function servesBatchOps(hello: HelloReply): boolean {
  return BATCH_OPS.every((op) => hello.ops.includes(op));
}

/** How a pool's servers came to be. */
export type PoolOrigin = 'spawned' | 'attached';

interface Server {
  readonly endpoint: string;
  readonly ipc: PrivateIpcEndpoint | null;
  /** null for an attached server. */
  readonly sup: ServerSupervisor | null;
  readonly client: BridgeClient;
  hello: HelloReply;
  generation: number;
  suspect: ImepError | null;
  recovering: Promise<void> | null;
  /** Attached: performance.now() until which resets fail fast after a failed reconnect. */
  downUntil: number;
  /** The last environment call queued on this server (inTurn), settled or not; never rejects. */
  turn: Promise<unknown>;
}

/** A server as it is once connected: generation 0, healthy, nothing queued. */
function newServer(s: Pick<Server, 'endpoint' | 'ipc' | 'sup' | 'client' | 'hello'>): Server {
  return { ...s, generation: 0, suspect: null, recovering: null, downUntil: 0, turn: Promise.resolve() };
}

export interface ServerPoolStats {
  readonly origin: PoolOrigin;
  readonly servers: number;
  /** Spawned servers restarted / attached servers reconnected. */
  readonly recoveries: number;
  /** Failed calls by error code. */
  readonly failedCalls: Readonly<Record<string, number>>;
}

const isServerFailure = (e: unknown): boolean => !(e instanceof BridgeCallError);

export class BridgeServerPool {
  readonly origin: PoolOrigin;
  readonly deadlines: RemoteDeadlines;
  readonly #servers: Server[];
  readonly #options: ServerPoolOptions;
  readonly #failed = new Map<string, number>();
  readonly #batchers = new Map<number, StepBatcher>();
  #recoveries = 0;
  #disposed = false;

  private constructor(origin: PoolOrigin, servers: Server[], options: ServerPoolOptions) {
    this.origin = origin;
    this.#servers = servers;
    this.#options = options;
    this.deadlines = { ...DEFAULT_REMOTE_DEADLINES, ...options.deadlines };
  }

  /** Starts `count` servers, server i with `command(endpoint_i)` on its own private ipc:// endpoint. */
  static async spawn(
    count: number,
    command: (endpoint: string) => ServerCommand,
    options: ServerPoolOptions = {},
  ): Promise<BridgeServerPool> {
    if (!Number.isSafeInteger(count) || count < 1)
      throw new ImepError('E_USAGE', `a server pool needs at least one server, got ${count}`);
    const connectMs = options.connectMs ?? 30_000;
    const settled = await Promise.allSettled(
      Array.from({ length: count }, async (): Promise<Server> => {
        const ipc = await privateIpcEndpoint();
        const sup = new ServerSupervisor(command(ipc.endpoint), {
          endpoint: ipc.endpoint,
          readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
        });
        const client = new BridgeClient({ endpoint: ipc.endpoint, liveness: sup, heartbeatMs: 0 });
        try {
          await sup.start();
          const hello = await client.connect({ deadlineMs: connectMs });
          return newServer({ endpoint: ipc.endpoint, ipc, sup, client, hello });
        } catch (e) {
          await client.close().catch(() => undefined);
          await sup.dispose().catch(() => undefined);
          await ipc.dispose().catch(() => undefined);
          throw e;
        }
      }),
    );
    const servers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure !== undefined) {
      await new BridgeServerPool('spawned', servers, options).dispose();
      throw failure.reason;
    }
    return new BridgeServerPool('spawned', servers, options);
  }

  /**
   * Connects to a server someone else started at `endpoint` (never restarted by IMEP). A missing ipc://
   * socket file or no hello within `connectMs` is E_SIM_UNAVAILABLE / E_BRIDGE_TIMEOUT naming the endpoint.
   */
  static async attach(
    endpoint: string,
    options: ServerPoolOptions & { readonly curve?: CurveClientKeys } = {},
  ): Promise<BridgeServerPool> {
    const connectMs = options.connectMs ?? 10_000;
    const hint =
      'start the simulator server at that endpoint (e.g. `python3 -m imep_sim_bridge serve --endpoint ENDPOINT --adapters …` from sim-bridge/) and run the command again';
    if (endpoint.startsWith('ipc://')) {
      const path = endpoint.slice('ipc://'.length);
      if (!existsSync(path))
        throw new ImepError(
          'E_SIM_UNAVAILABLE',
          `no simulator server is listening at ${endpoint}: the socket file ${path} does not exist`,
          { hint },
        );
    }
    const client = new BridgeClient({ endpoint, ...(options.curve ? { curve: options.curve } : {}) });
    let hello: HelloReply;
    try {
      hello = await client.connect({ deadlineMs: connectMs });
    } catch (e) {
      await client.close().catch(() => undefined);
      if (isImepError(e) && e.code === 'E_BRIDGE_TIMEOUT') {
        throw new ImepError(
          'E_BRIDGE_TIMEOUT',
          `the simulator server at ${endpoint} did not answer hello within ${connectMs} ms`,
          { hint, cause: e },
        );
      }
      throw e;
    }
    return new BridgeServerPool('attached', [newServer({ endpoint, ipc: null, sup: null, client, hello })], options);
  }

  get size(): number {
    return this.#servers.length;
  }

  /** The endpoints of the servers, in order. */
  get endpoints(): string[] {
    return this.#servers.map((s) => s.endpoint);
  }

  /** The last hello reply of server i (its envs, adapters, version). */
  hello(i: number): HelloReply {
    return this.#server(i).hello;
  }

  /** The client of server i (for calls outside environments, e.g. a preflight `make`). */
  client(i: number): BridgeClient {
    return this.#server(i).client;
  }

  generation(i: number): number {
    return this.#server(i).generation;
  }

  /** Process ids of spawned servers (undefined for an attached one or a stopped process). */
  pids(): (number | undefined)[] {
    return this.#servers.map((s) => s.sup?.pid);
  }

  stats(): ServerPoolStats {
    return {
      origin: this.origin,
      servers: this.size,
      recoveries: this.#recoveries,
      failedCalls: Object.fromEntries([...this.#failed].sort(([a], [b]) => (a < b ? -1 : 1))),
    };
  }

  /**
   * Environment `envId` (with its known spec) on server i, re-made on the server after each recovery; `adopt`: one
   * already made on server i (the runner's check made it), used instead of making another.
   */
  environment(
    i: number,
    envId: string,
    kwargs: Readonly<Record<string, unknown>>,
    spec: EnvSpec,
    adopt?: AdoptedEnvironment,
  ): SimEnvironment {
    this.#server(i);
    return new PooledEnvironment(this, i, envId, kwargs, spec, adopt);
  }

  /**
   * Runs `op` once every environment call queued on server i before it has settled: one environment call in flight
   * per server. The episode loops send a batch's steps to every server at once (bridges/send-steps.ts); here they
   * reach each server one after another, so a call's deadline times that call alone, not its wait behind other
   * slots' steps, and a call queued behind one that failed makes its checks (suspect, restarted) when its turn comes.
   */
  inTurn<T>(i: number, op: () => Promise<T>): Promise<T> {
    const s = this.#server(i);
    const run = s.turn.then(op);
    s.turn = run.catch(() => undefined);
    return run;
  }

  /** Whether environments on server i are hosted vectorised: the option is on and the server serves the batch ops. */
  batches(i: number): boolean {
    return this.#options.vectorize === true && servesBatchOps(this.#server(i).hello);
  }

  /**
   * A step of an environment on server i, sent with the other steps of its tick as one `stepBatch` (only where
   * `batches(i)`); `prepare` makes the slot's checks when the batch is sent and gives its environment.
   */
  stepInBatch(i: number, prepare: () => RemoteEnvironment, action: NdArray): Promise<StepResult> {
    let batcher = this.#batchers.get(i);
    if (batcher === undefined) {
      batcher = new StepBatcher({
        client: () => this.client(i),
        schedule: (send) => void this.inTurn(i, send),
        stepMs: this.deadlines.stepMs,
        fault: (e) => this.fault(i, e),
      });
      this.#batchers.set(i, batcher);
    }
    return batcher.step(prepare, action);
  }

  /** stepBatch messages sent to each server so far and the steps they carried. */
  batchStats(): { readonly messages: number; readonly steps: number } {
    let messages = 0;
    let steps = 0;
    for (const b of this.#batchers.values()) {
      messages += b.messages;
      steps += b.steps;
    }
    return { messages, steps };
  }

  /** The error a call on server i must fail with now (it is suspect), or null. */
  suspectError(i: number): ImepError | null {
    const s = this.#server(i);
    if (s.suspect === null) return null;
    return new ImepError(
      s.suspect.code,
      `simulator server ${i} (${s.endpoint}) failed during this episode (${s.suspect.message})`,
    );
  }

  /** Called before each step sent to server i. */
  beforeStep(i: number): void {
    this.#options.observer?.beforeStep?.(i);
  }

  /** A call on server i failed: count it; unless the server answered with an error, it is suspect until recovered. */
  fault(i: number, e: unknown): void {
    const error = isImepError(e) ? e : new ImepError('E_INTERNAL', String(e), { cause: e });
    this.#failed.set(error.code, (this.#failed.get(error.code) ?? 0) + 1);
    const s = this.#server(i);
    if (isServerFailure(e)) s.suspect ??= error;
    this.#options.observer?.onFailure?.(i, error);
  }

  /** Recovers server i if it died, stopped answering or was marked suspect (one recovery at a time per server). */
  async ensure(i: number): Promise<void> {
    const s = this.#server(i);
    while (s.recovering) await s.recovering;
    if (this.#disposed) throw new ImepError('E_INTERNAL', 'the simulator server pool was disposed');
    if (s.suspect === null && s.client.alive && (s.sup === null || s.sup.running)) return;
    if (s.sup === null && performance.now() < s.downUntil) throw this.#attachedDown(s, null);
    s.recovering = (async () => {
      const connectMs = this.#options.connectMs ?? (s.sup === null ? 10_000 : 30_000);
      try {
        if (s.sup !== null) await s.sup.restart();
        s.hello = await s.client.reconnect({ deadlineMs: connectMs });
      } catch (e) {
        if (s.sup === null) {
          s.downUntil = performance.now() + (this.#options.attachedRetryMs ?? 5_000);
          throw this.#attachedDown(s, e);
        }
        throw e;
      }
      s.generation += 1;
      s.suspect = null;
      s.downUntil = 0;
      this.#recoveries += 1;
      this.#options.observer?.onRecovered?.(i, s.generation);
    })();
    try {
      await s.recovering;
    } finally {
      s.recovering = null;
    }
  }

  /** Closes the clients, stops the spawned servers and removes their private directories (idempotent). */
  async dispose(): Promise<void> {
    this.#disposed = true;
    for (const s of this.#servers) {
      await s.client.close().catch(() => undefined);
      await s.sup?.dispose().catch(() => undefined);
      await s.ipc?.dispose().catch(() => undefined);
    }
  }

  #attachedDown(s: Server, cause: unknown): ImepError {
    const why = isImepError(cause) ? cause.message : (s.suspect?.message ?? 'it stopped answering');
    return new ImepError(
      isImepError(cause) ? cause.code : (s.suspect?.code ?? 'E_BRIDGE_TIMEOUT'),
      `the simulator server at ${s.endpoint} (not started by IMEP) does not answer: ${why}`,
      {
        hint: "IMEP does not restart a server it did not start: restart it; episodes that fail meanwhile are recorded under the protocol's executionFailures policy",
        ...(cause === null ? {} : { cause }),
      },
    );
  }

  #server(i: number): Server {
    const s = this.#servers[i];
    if (s === undefined) throw new ImepError('E_INTERNAL', `server ${i} outside [0, ${this.#servers.length})`);
    return s;
  }
}
