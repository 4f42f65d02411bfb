/**
 * A clean stop of a formal run (SIGINT / SIGTERM in the CLI, src/cli/interrupt.ts). The CLI owns the signals; the
 * runner owns what a stop means:
 *   - while a formal run's loop is ARMED (formalRun, campaign.ts), a stop request freezes the row sink (a row the
 *     loop finishes after the request is not written: a simulator child killed by the same Ctrl-C must not leave a
 *     failed row that resume could not recompute), ends the loop at its next batched step, waits for every row
 *     already queued to be fsync'd, and throws E_INTERRUPTED: "interrupted: 876/5600 rows durable in DIR; resume
 *     with: COMMAND" (exit 130). The unit stays 'running'; rerunning the command resumes at exactly that row.
 *   - outside an armed loop (assembly, seal, closeout) there is nothing to drain: the CLI exits at once (every write
 *     there is crash-safe, as under kill -9).
 */
import { ImepError } from '../core/index.js';

export class RunStop {
  private signal: string | null = null;
  private readonly listeners = new Set<() => void>();
  private armedCount = 0;

  /** @param command the command the user ran, shell-quoted (printed as the way to resume) */
  constructor(readonly command: string) {}

  /** A stop was requested (the signal's name), or null. */
  get requested(): string | null {
    return this.signal;
  }

  /** A formal run's loop is running and will honour a stop request. */
  get armed(): boolean {
    return this.armedCount > 0;
  }

  request(signal: string): void {
    if (this.signal !== null) return;
    this.signal = signal;
    for (const l of this.listeners) l();
  }

  /** While `fn` runs, stop requests reach `onStop` (called at once if one came before). */
  async armedDuring<T>(onStop: () => void, fn: () => Promise<T>): Promise<T> {
    this.armedCount += 1;
    this.listeners.add(onStop);
    if (this.signal !== null) onStop();
    try {
      return await fn();
    } finally {
      this.listeners.delete(onStop);
      this.armedCount -= 1;
    }
  }
}

/** The loop's abort reason after a stop request (replaced by interruptedError once the rows are durable). */
export const STOP_REQUESTED = new ImepError('E_INTERRUPTED', 'the run was asked to stop');

/** The one line an interrupted formal run ends with. */
export function interruptedError(durable: number, planned: number, dir: string, command: string): ImepError {
  return new ImepError(
    'E_INTERRUPTED',
    `interrupted: ${durable}/${planned} rows durable in ${dir}; resume with: ${command}`,
  );
}
