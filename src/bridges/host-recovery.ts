/**
 * Recovery of a host IMEP started (a policy host): a call past its deadline, or the host's death (a limit it hit, a
 * crash, the OOM killer), kills the host — its whole process group and cgroups, at once (ServerSupervisor.kill) — and
 * starts a fresh one on the same endpoint. Every connection to it then says hello again before its next call
 * (`generation` moved), and an episode that began on the old host fails (its memory went with it): nothing runs on
 * against a host whose state was lost, and nothing waits a second deadline on a host that is stuck.
 */
import type { ImepError } from '../core/index.js';
import type { ServerSupervisor } from './supervisor.js';

export interface HostRecovery {
  /** Bumped each time the host is replaced. */
  readonly generation: number;
  /**
   * A call on a connection made at `generation` failed with `error` (deadline or death): replace the host unless that
   * already happened since. Rejects when the fresh host does not start (the next failing call tries again).
   */
  recover(generation: number, error: ImepError): Promise<void>;
}

export class RestartingHost implements HostRecovery {
  readonly #supervisor: ServerSupervisor;
  #generation = 0;
  #recovering: Promise<void> | undefined;
  /** Hosts replaced so far, with why (for the run's summary line). */
  readonly replaced: { readonly pid: number | undefined; readonly why: string }[] = [];

  constructor(supervisor: ServerSupervisor) {
    this.#supervisor = supervisor;
  }

  get generation(): number {
    return this.#generation;
  }

  recover(generation: number, error: ImepError): Promise<void> {
    if (generation !== this.#generation) return Promise.resolve(); // replaced since that connection was made
    if (this.#recovering !== undefined) return this.#recovering;
    this.#recovering = (async () => {
      const pid = this.#supervisor.pid;
      await this.#supervisor.kill();
      this.replaced.push({ pid, why: `${error.code}: ${error.message}` });
      this.#generation += 1; // even if the start below fails: the old host is gone
      await this.#supervisor.start();
    })().finally(() => {
      this.#recovering = undefined;
    });
    return this.#recovering;
  }
}
