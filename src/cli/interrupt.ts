/**
 * SIGINT / SIGTERM during `imep campaign run|resume` (src/campaign/run-stop.ts says what a stop means):
 *   - first signal while the formal run's loop is armed: a clean stop — the rows already computed are fsync'd, then
 *     the run ends with "imep: interrupted: 876/5600 rows durable in DIR; resume with: COMMAND" (exit 130);
 *   - a signal outside the loop (assembly, seal, report), or a second one: the unit's lock is removed and IMEP exits
 *     at once with 128 + the signal's number (130 SIGINT, 143 SIGTERM) and the command that goes on (every write
 *     there is crash-safe, as under kill -9).
 * While this runs, unit-lock.ts leaves the stop signals to it (setStopSignalOwner).
 * COMMAND is the command the user ran, each argument shell-quoted, `npx imep` when npx started it.
 */
import { RunStop } from '../campaign/index.js';
import { cliName } from '../core/index.js';
import { releaseLocksNow, setStopSignalOwner } from '../evidence/index.js';

const PLAIN = /^[A-Za-z0-9_/.,:=@%+-]+$/;

/** One argument as a POSIX shell reads it back. */
export function shellQuote(arg: string): string {
  return PLAIN.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command line the user ran: `npx imep …` under npx, else `imep …` (cliName). */
export function userCommand(args: readonly string[], env: NodeJS.ProcessEnv): string {
  return [cliName(env), ...args.map(shellQuote)].join(' ');
}

const SIGNAL_NUMBER: Readonly<Record<string, number>> = { SIGINT: 2, SIGTERM: 15 };

/** Runs `fn` with a RunStop that SIGINT/SIGTERM request; the handlers are removed afterwards. */
export async function withInterrupts<T>(fn: (stop: RunStop) => Promise<T>): Promise<T> {
  const command = userCommand(process.argv.slice(2), process.env);
  const stop = new RunStop(command);
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.armed && stop.requested === null) {
      stop.request(signal);
      process.stderr.write(
        `\n${signal}: stopping — the rows already computed are being made durable (again to quit at once; durable rows are kept either way)\n`,
      );
      return;
    }
    process.stderr.write(
      `\nimep: interrupted (${signal}) ${stop.armed ? 'while the run was stopping' : 'outside the run loop'}; what was written is durable — go on with: ${command}\n`,
    );
    releaseLocksNow();
    process.exit(128 + (SIGNAL_NUMBER[signal] ?? 2));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  setStopSignalOwner(() => true);
  try {
    return await fn(stop);
  } finally {
    setStopSignalOwner(null);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
