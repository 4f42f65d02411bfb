/** What the `imep stats …` subcommands share: JSON-or-table output, statistics errors as usage errors, a level. */
import { asUsageError } from '../../args.js';

/** Prints JSON (proportions, full precision) or a short human table (percentage points). */
export function emit(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

/** Runs `f`; a statistics domain error is refused as a usage error naming the flag (`flags`: field → flag). */
export function guarded<T>(flags: Readonly<Record<string, string>>, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw asUsageError(e, flags);
  }
}

/** 0.95 → "95%". */
export function formatLevel(level: number): string {
  return `${Number((100 * level).toPrecision(6))}%`;
}
