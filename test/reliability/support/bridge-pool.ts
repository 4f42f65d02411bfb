/**
 * K supervised lite simulator servers (`imep sim serve lite`) behind the runner's EnvProvider — the
 * product's BridgeServerPool (src/bridges/server-pool.ts: failure detection, suspect servers failing
 * fast, restart on the next reset, environments re-made on the new process) — plus FAULT INJECTION
 * through the pool's observer seam:
 *
 *   before the step with global number `atStep` that goes to server `server`, that server's process gets
 *   `signal`; the time until the first call on it fails is the detection latency.
 */
import { makeLiteEnv } from '../../../src/sims/lite/registry.js';
import type { RemoteDeadlines } from '../../../src/bridges/remote-environment.js';
import { BridgeServerPool } from '../../../src/bridges/server-pool.js';
import { liteServerCommand } from '../../../src/bridges/supervisor.js';
import type { EnvProvider } from '../../../src/campaign/index.js';

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

export class BridgePool {
  steps = 0;
  readonly faults: FaultRecord[];
  #pool: BridgeServerPool | null = null;

  private constructor(faults: readonly Fault[]) {
    this.faults = faults.map((f) => ({ ...f, sentAt: null, detectedMs: null, code: null }));
  }

  /** `nodeFlags` go before the server's own arguments (e.g. a V8 heap limit). */
  static async start(
    k: number,
    deadlines: Partial<RemoteDeadlines>,
    faults: readonly Fault[] = [],
    nodeFlags: readonly string[] = [],
  ): Promise<BridgePool> {
    const self = new BridgePool(faults);
    self.#pool = await BridgeServerPool.spawn(
      k,
      (endpoint) => {
        const cmd = liteServerCommand(endpoint, { runtime: 'dist' });
        return { ...cmd, args: [...nodeFlags, ...cmd.args] };
      },
      {
        deadlines,
        observer: {
          beforeStep: (i) => self.#beforeStep(i),
          onFailure: (i, e) => self.#onFailure(i, e.code),
        },
      },
    );
    return self;
  }

  get pool(): BridgeServerPool {
    if (this.#pool === null) throw new Error('pool not started');
    return this.#pool;
  }

  get size(): number {
    return this.pool.size;
  }

  get restarts(): number {
    return this.pool.stats().recoveries;
  }

  get failuresByCode(): ReadonlyMap<string, number> {
    return new Map(Object.entries(this.pool.stats().failedCalls));
  }

  /** Process ids of the servers now (for RSS sampling). */
  pids(): (number | undefined)[] {
    return this.pool.pids();
  }

  /** The runner's EnvProvider: slot s runs on server s mod K (lite specs are known locally). */
  envs(): EnvProvider {
    return (task, slot) =>
      this.pool.environment(slot % this.pool.size, task.envId, task.kwargs, makeLiteEnv(task.envId, task.kwargs).spec);
  }

  /** Injects the faults due now (before a step sent to server i). */
  #beforeStep(i: number): void {
    this.steps += 1;
    for (const f of this.faults) {
      if (f.sentAt === null && f.server === i && this.steps >= f.atStep) {
        const pid = this.pool.pids()[i];
        if (pid === undefined) continue;
        f.sentAt = performance.now();
        process.kill(pid, f.signal);
      }
    }
  }

  /** The first failure on server i after a fault dates its detection. */
  #onFailure(i: number, code: string): void {
    for (const f of this.faults) {
      if (f.server === i && f.sentAt !== null && f.detectedMs === null) {
        f.detectedMs = performance.now() - f.sentAt;
        f.code = code;
      }
    }
  }

  async dispose(): Promise<void> {
    await this.#pool?.dispose();
  }
}
