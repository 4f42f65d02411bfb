/**
 * K supervised lite simulator servers (`imep sim serve lite`, each its own process on a private ipc://
 * endpoint, src/bridges/supervisor.ts) behind the runner's SimEnvironment contract, with recovery:
 *
 *   a call that fails (E_BRIDGE_REMOTE: the process died; E_BRIDGE_TIMEOUT: it stopped answering within
 *   the call's deadline) fails that episode — the runner records it under the protocol's registered
 *   execution-failure policy — and marks the server suspect; other episodes on that server then fail
 *   fast instead of waiting a deadline each, since the server's state of them is gone;
 *   the next reset on that server restarts it (SIGCONT + SIGTERM, then a fresh process) and reconnects,
 *   and every environment re-makes itself on the new process.
 *
 * Faults are injected at seeded points: before the step with global number `atStep` that goes to server
 * `server`, the server gets `signal`; the time until the first call on it fails is the detection latency.
 */
import { BridgeClient } from '../../../src/bridges/client.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../../src/bridges/endpoint.js';
import { makeLiteEnv } from '../../../src/bridges/lite/registry.js';
import { RemoteEnvironment, type RemoteDeadlines } from '../../../src/bridges/remote-environment.js';
import type { NdArray, ResetRequest, SimEnvironment, StepResult } from '../../../src/bridges/sim-environment.js';
import { liteServerCommand, ServerSupervisor } from '../../../src/bridges/supervisor.js';
import type { EnvProvider } from '../../../src/campaign/runner/index.js';
import { ImepError, isImepError } from '../../../src/core/errors.js';

export interface Fault {
  readonly atStep: number;
  readonly server: number;
  readonly signal: 'SIGKILL' | 'SIGSTOP';
}

export interface FaultRecord extends Fault {
  sentAt: number | null;
  detectedMs: number | null;
  code: string | null;
}

interface Server {
  readonly ipc: PrivateIpcEndpoint;
  readonly sup: ServerSupervisor;
  readonly client: BridgeClient;
  generation: number;
  suspect: ImepError | null;
  recovering: Promise<void> | null;
}

export class BridgePool {
  restarts = 0;
  steps = 0;
  readonly faults: FaultRecord[];
  readonly failuresByCode = new Map<string, number>();

  private constructor(
    private readonly servers: Server[],
    readonly deadlines: Partial<RemoteDeadlines>,
    faults: readonly Fault[],
  ) {
    this.faults = faults.map((f) => ({ ...f, sentAt: null, detectedMs: null, code: null }));
  }

  /** `nodeFlags` go before the server's own arguments (e.g. a V8 heap limit). */
  static async start(k: number, deadlines: Partial<RemoteDeadlines>, faults: readonly Fault[] = [], nodeFlags: readonly string[] = []): Promise<BridgePool> {
    const servers: Server[] = [];
    try {
      for (let i = 0; i < k; i++) {
        const ipc = await privateIpcEndpoint();
        const cmd = liteServerCommand(ipc.endpoint, { runtime: 'dist' });
        const sup = new ServerSupervisor({ ...cmd, args: [...nodeFlags, ...cmd.args] }, { endpoint: ipc.endpoint, readyTimeoutMs: 60_000 });
        const client = new BridgeClient({ endpoint: ipc.endpoint, liveness: sup, heartbeatMs: 0 });
        servers.push({ ipc, sup, client, generation: 0, suspect: null, recovering: null });
        await sup.start();
        await client.connect({ deadlineMs: 30_000 });
      }
    } catch (e) {
      await new BridgePool(servers, deadlines, []).dispose();
      throw e;
    }
    return new BridgePool(servers, deadlines, faults);
  }

  get size(): number {
    return this.servers.length;
  }

  /** Process ids of the servers now (for RSS sampling). */
  pids(): (number | undefined)[] {
    return this.servers.map((s) => s.sup.pid);
  }

  /** The runner's EnvProvider: slot s runs on server s mod K. */
  envs(): EnvProvider {
    return (task, slot) => new PooledEnv(this, slot % this.servers.length, task.envId, task.kwargs);
  }

  server(i: number): Server {
    return this.servers[i] as Server;
  }

  /** Restarts server i if it died or missed a deadline (one restart at a time per server). */
  async ensure(i: number): Promise<void> {
    const s = this.server(i);
    while (s.recovering) await s.recovering;
    if (s.suspect === null && s.client.alive && s.sup.running) return;
    s.recovering = (async () => {
      await s.sup.restart();
      await s.client.reconnect({ deadlineMs: 30_000 });
      s.generation += 1;
      s.suspect = null;
      this.restarts += 1;
    })();
    try {
      await s.recovering;
    } finally {
      s.recovering = null;
    }
  }

  /** Called before each step sent to server i: injects the faults due now. */
  beforeStep(i: number): void {
    this.steps += 1;
    for (const f of this.faults) {
      if (f.sentAt === null && f.server === i && this.steps >= f.atStep) {
        f.sentAt = performance.now();
        this.server(i).sup.signal(f.signal);
      }
    }
  }

  /** A call on server i failed: the server is suspect until restarted; the first failure after a fault dates its detection. */
  fault(i: number, e: unknown): void {
    const code = isImepError(e) ? e.code : 'E_INTERNAL';
    this.failuresByCode.set(code, (this.failuresByCode.get(code) ?? 0) + 1);
    const s = this.server(i);
    s.suspect ??= isImepError(e) ? e : new ImepError('E_BRIDGE_REMOTE', String(e));
    for (const f of this.faults) {
      if (f.server === i && f.sentAt !== null && f.detectedMs === null) {
        f.detectedMs = performance.now() - f.sentAt;
        f.code = code;
      }
    }
  }

  async dispose(): Promise<void> {
    for (const s of this.servers) {
      await s.client.close().catch(() => undefined);
      await s.sup.dispose().catch(() => undefined);
      await s.ipc.dispose().catch(() => undefined);
    }
  }
}

/** One slot's environment on a pooled server; re-made on the server after each restart. */
class PooledEnv implements SimEnvironment {
  readonly spec: SimEnvironment['spec'];
  private remote: RemoteEnvironment | null = null;
  private generation = -1;

  constructor(
    private readonly pool: BridgePool,
    private readonly i: number,
    private readonly envId: string,
    private readonly kwargs: Readonly<Record<string, unknown>>,
  ) {
    // the lite servers host the same simulators: the spec (allowlists, limits) is known locally
    this.spec = makeLiteEnv(envId, kwargs).spec;
  }

  private async call<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e) {
      this.pool.fault(this.i, e);
      throw e;
    }
  }

  async reset(req: ResetRequest): Promise<StepResult> {
    await this.pool.ensure(this.i);
    const s = this.pool.server(this.i);
    if (this.remote === null || this.generation !== s.generation) {
      this.remote = await this.call(() => RemoteEnvironment.make(s.client, this.envId, this.kwargs, this.pool.deadlines));
      this.generation = s.generation;
    }
    const remote = this.remote;
    return this.call(() => remote.reset(req));
  }

  async step(action: NdArray): Promise<StepResult> {
    const s = this.pool.server(this.i);
    if (this.remote === null || this.generation !== s.generation) {
      throw new ImepError('E_BRIDGE_REMOTE', `simulator server ${this.i} was restarted during this episode; its simulator state is gone`);
    }
    if (s.suspect !== null) {
      throw new ImepError(s.suspect.code, `simulator server ${this.i} failed during this episode (${s.suspect.message})`);
    }
    this.pool.beforeStep(this.i);
    const remote = this.remote;
    return this.call(() => remote.step(action));
  }

  async close(): Promise<void> {
    const s = this.pool.server(this.i);
    if (this.remote !== null && this.generation === s.generation && s.suspect === null && s.client.alive) await this.remote.close().catch(() => undefined);
    this.remote = null;
  }
}
