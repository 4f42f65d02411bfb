/** Strict argument parsers for the CLI: each names the offending argument in its error. */
import { ImepError } from '../core/index.js';

export function parseCount(flag: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) {
    throw new ImepError('E_USAGE', `expected a non-negative integer, got '${raw}'`, { field: flag });
  }
  const v = Number(raw);
  if (!Number.isSafeInteger(v)) throw new ImepError('E_USAGE', `'${raw}' is too large`, { field: flag });
  return v;
}

export function parseProbability(flag: string, raw: string, { open = true } = {}): number {
  const v = parseNumber(flag, raw);
  const ok = open ? v > 0 && v < 1 : v >= 0 && v <= 1;
  if (!ok)
    throw new ImepError('E_USAGE', `must lie ${open ? 'strictly between 0 and 1' : 'in [0, 1]'}, got ${raw}`, {
      field: flag,
    });
  return v;
}

export function parseNumber(flag: string, raw: string): number {
  const text = raw.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) {
    throw new ImepError('E_USAGE', `expected a number, got '${raw}'`, { field: flag });
  }
  return Number(text);
}

export function parseChoice<T extends string>(flag: string, raw: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(raw)) return raw as T;
  throw new ImepError('E_USAGE', `expected one of ${choices.join(', ')}, got '${raw}'`, { field: flag });
}

/** Renames a statistics domain error's field (`b`) to the flag the user typed (`--b`). */
export function asUsageError(e: unknown, flags: Readonly<Record<string, string>>): unknown {
  if (e instanceof ImepError && e.code === 'E_STATS_DOMAIN') {
    const base = e.field?.replace(/\[.*$/, '') ?? '';
    const flag = flags[base] ?? e.field;
    return new ImepError('E_USAGE', e.message, { field: flag, cause: e });
  }
  return e;
}
