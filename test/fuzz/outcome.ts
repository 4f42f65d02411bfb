/**
 * What one fuzz case did, and the tally of a campaign of cases. A case is
 *   accepted — the input was still valid and loaded;
 *   refused  — a clean refusal: the expected error type/code, one line, naming the file;
 *   crash    — anything else: another exception type, E_INTERNAL, a multi-line message, no file named,
 *              a throw where a result was promised;
 *   hang     — no answer within the deadline (only the report script, running cases in a worker, can
 *              tell a hang from a slow case; tests bound the time per case instead).
 */
import { isImepError } from '../../src/core/errors.js';

export type FuzzOutcome =
  | { readonly kind: 'accepted' }
  | { readonly kind: 'refused'; readonly code: string; readonly line: string }
  | { readonly kind: 'crash'; readonly reason: string; readonly category: CrashCategory };

/** type: not the promised error class · code: another code · multiline / no-file: a bad message · throw / result / server: bridges. */
export type CrashCategory = 'type' | 'code' | 'multiline' | 'no-file' | 'throw' | 'result' | 'server';

export interface Tally {
  cases: number;
  refused: number;
  accepted: number;
  crashes: number;
  hangs: number;
  /** Crashes matching a known finding (known-findings.ts), by finding id; not counted in `crashes`. */
  known: Record<string, number>;
  /** Refusals by error code. */
  codes: Record<string, number>;
  /** The slowest case, in milliseconds. */
  maxMs: number;
  /** The first few crashes and hangs, for the report. */
  examples: string[];
}

export function emptyTally(): Tally {
  return { cases: 0, refused: 0, accepted: 0, crashes: 0, hangs: 0, known: {}, codes: {}, maxMs: 0, examples: [] };
}

export function record(
  t: Tally,
  o: FuzzOutcome | { kind: 'hang' },
  ms: number,
  label: string,
  known: { readonly id: string } | null = null,
): void {
  t.cases++;
  t.maxMs = Math.max(t.maxMs, ms);
  if (known !== null) {
    t.known[known.id] = (t.known[known.id] ?? 0) + 1;
    return;
  }
  switch (o.kind) {
    case 'accepted':
      t.accepted++;
      break;
    case 'refused':
      t.refused++;
      t.codes[o.code] = (t.codes[o.code] ?? 0) + 1;
      break;
    case 'crash':
      t.crashes++;
      if (t.examples.length < 10) t.examples.push(`crash: ${label}: ${o.reason}`);
      break;
    case 'hang':
      t.hangs++;
      if (t.examples.length < 10) t.examples.push(`hang: ${label}`);
      break;
  }
}

/** Classifies an error thrown by a loader that promises ImepError with `codes` and a one-line message naming `file`. */
export function classifyThrown(e: unknown, file: string, codes: readonly string[]): FuzzOutcome {
  if (!isImepError(e)) {
    const name = e instanceof Error ? e.constructor.name : typeof e;
    const message = e instanceof Error ? e.message : String(e);
    return { kind: 'crash', reason: `${name} (not ImepError): ${message.slice(0, 200)}`, category: 'type' };
  }
  const line = e.oneLine();
  if (!codes.includes(e.code))
    return {
      kind: 'crash',
      reason: `code ${e.code}, expected ${codes.join('/')}: ${line.slice(0, 200)}`,
      category: 'code',
    };
  if (/[\r\n\u2028\u2029]/.test(line))
    return {
      kind: 'crash',
      reason: `a multi-line message: ${JSON.stringify(line.slice(0, 200))}`,
      category: 'multiline',
    };
  if (!line.includes(file))
    return { kind: 'crash', reason: `the message does not name ${file}: ${line.slice(0, 200)}`, category: 'no-file' };
  return { kind: 'refused', code: e.code, line };
}

export function formatTally(name: string, t: Tally): string {
  const codes = Object.entries(t.codes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  const known = Object.entries(t.known)
    .map(([id, n]) => `${id} ${n}`)
    .join(', ');
  return `${name}: ${t.cases} cases — refused cleanly ${t.refused}${codes ? ` (${codes})` : ''}, accepted ${t.accepted}, crashes ${t.crashes}, hangs ${t.hangs}${known ? `; known findings (not counted as crashes): ${known}` : ''}; slowest ${t.maxMs.toFixed(0)} ms`;
}
