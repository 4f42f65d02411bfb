/**
 * The steps of one tick on one server as ONE `stepBatch` message (PROTOCOL.md "Batch ops"), for a pool whose
 * simulators are hosted vectorised (`simulator.vectorize`).
 *
 * The episode loop sends every slot's step before it awaits one (runtime/send-steps.ts): each slot's environment
 * calls `step` here, in slot order, in the same turn of the event loop. The first opens a batch and queues its
 * sending in the server's turn (BridgeServerPool.inTurn); the steps that arrive before that turn comes join it.
 * When it is sent, each entry makes its slot's own checks (server restarted or suspect: that slot fails alone), and
 * each result — or the error the server answered for that entry — goes back to its slot, worded as a per-handle
 * `step` would have been, so a failed episode's record does not depend on how its steps travelled. The episode loop
 * itself is unchanged: it still takes the results in slot order.
 */
import { ImepError } from '../core/index.js';
import type { BridgeClient } from './client.js';
import { checkObservation } from './observation-spec.js';
import { stepBatchEntry } from './op-schemas.js';
import { errorFromWire } from './remote-error.js';
import type { RemoteEnvironment } from './remote-environment.js';
import type { NdArray, StepResult } from '../runtime/index.js';

interface Entry {
  /** The slot's checks, made when the batch is sent: its environment, or a throw that fails this entry alone. */
  readonly prepare: () => RemoteEnvironment;
  readonly action: NdArray;
  readonly resolve: (r: StepResult) => void;
  readonly reject: (e: unknown) => void;
}

export interface StepBatcherOptions {
  readonly client: () => BridgeClient;
  /** Runs `send` in the server's turn (one environment call in flight per server). */
  readonly schedule: (send: () => Promise<void>) => void;
  /** The deadline of one step (ms); a batch of steps made in parallel gets one, each stepped inline adds one. */
  readonly stepMs: number;
  /** Every failed entry (also one failed by a failed message), as a failed per-handle call would be reported. */
  readonly fault: (e: unknown) => void;
}

export class StepBatcher {
  readonly #o: StepBatcherOptions;
  #open: Entry[] | null = null;
  /** stepBatch messages sent, and the steps they carried (for tests and the bench). */
  messages = 0;
  steps = 0;

  constructor(options: StepBatcherOptions) {
    this.#o = options;
  }

  step(prepare: () => RemoteEnvironment, action: NdArray): Promise<StepResult> {
    let batch = this.#open;
    if (batch === null) {
      const opened: Entry[] = [];
      batch = opened;
      this.#open = opened;
      this.#o.schedule(async () => {
        if (this.#open === opened) this.#open = null;
        try {
          await this.#send(opened);
        } catch (e) {
          for (const entry of opened) entry.reject(e); // no entry is left waiting (settled ones stay as they are)
        }
      });
    }
    const entries = batch;
    return new Promise<StepResult>((resolve, reject) => entries.push({ prepare, action, resolve, reject }));
  }

  #fail(entry: Entry, e: unknown): void {
    this.#o.fault(e);
    entry.reject(e);
  }

  async #send(entries: readonly Entry[]): Promise<void> {
    const sent: { entry: Entry; remote: RemoteEnvironment }[] = [];
    for (const entry of entries) {
      try {
        sent.push({ entry, remote: entry.prepare() });
      } catch (e) {
        entry.reject(e); // the slot's own checks (as a per-handle step makes them before it is sent)
      }
    }
    if (sent.length === 0) return;
    const inline = sent.filter((x) => x.remote.host !== 'processes' && x.remote.host !== 'native').length;
    const parallel = inline < sent.length ? 1 : 0;
    const deadlineMs = this.#o.stepMs * (inline + parallel);
    let results: readonly Record<string, unknown>[];
    try {
      const steps = sent.map((x) => x.remote.batchEntry(x.entry.action));
      this.messages += 1;
      this.steps += steps.length;
      results = (await this.#o.client().call('stepBatch', { steps }, { deadlineMs })).results;
    } catch (e) {
      for (const x of sent) this.#fail(x.entry, e);
      return;
    }
    if (results.length !== sent.length) {
      const e = new ImepError(
        'E_BRIDGE_PROTOCOL',
        `stepBatch of ${sent.length} steps answered ${results.length} results`,
        { field: 'stepBatch' },
      );
      for (const x of sent) this.#fail(x.entry, e);
      return;
    }
    sent.forEach((x, k) => {
      const got = stepBatchEntry(results[k] as Record<string, unknown>);
      if ('ok' in got) {
        let checked: StepResult;
        try {
          checked = checkObservation(x.remote.spec, got.ok); // as a per-handle step checks it
        } catch (e) {
          this.#fail(x.entry, e);
          return;
        }
        x.entry.resolve(checked);
      } else if ('error' in got) this.#fail(x.entry, errorFromWire('step', got.error.code, got.error.message));
      else
        this.#fail(
          x.entry,
          new ImepError('E_BRIDGE_PROTOCOL', `stepBatch results[${k}]: ${got.invalid}`, { field: 'stepBatch' }),
        );
    });
  }
}
