/**
 * The "Failures" summary of a run's rows: how many rows failed to execute, and per failure code its count and the
 * first message (by seq) — what the run summary on the terminal, a budget stop, a smoke run and the report print,
 * so the error text of a failing policy or simulator is never only inside rows.jsonl. Pure; rows are read as plain
 * records (the runner's row schema is not needed to count them).
 */

/** The fields of a row the summary reads. */
export interface FailureRowLike {
  readonly seq?: unknown;
  readonly wave?: unknown;
  readonly condition?: unknown;
  readonly status?: unknown;
  readonly failure?: unknown;
}

export interface FailureCodeSummary {
  readonly code: string;
  /** Failed rows carrying this code (later attempts not run because an earlier one failed included). */
  readonly count: number;
  /** The first failed row of this code, by seq. */
  readonly first: { readonly seq: number; readonly wave: string; readonly condition: string; readonly message: string };
}

export interface FailureSummary {
  readonly rows: number;
  readonly failed: number;
  /** By code, the code whose first failure came first leading. */
  readonly codes: readonly FailureCodeSummary[];
}

/** Longest message the summary prints (the row keeps what the runner stored). */
export const FAILURE_MESSAGE_CHARS = 400;

function shortMessage(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= FAILURE_MESSAGE_CHARS ? one : `${one.slice(0, FAILURE_MESSAGE_CHARS - 1)}…`;
}

export function failureSummary(rows: readonly FailureRowLike[]): FailureSummary {
  const codes = new Map<string, { code: string; count: number; first: FailureCodeSummary['first'] }>();
  let failed = 0;
  const sorted = [...rows].sort((a, b) => Number(a.seq) - Number(b.seq));
  for (const r of sorted) {
    if (r.status !== 'failed') continue;
    failed += 1;
    const f = (r.failure ?? {}) as { code?: unknown; message?: unknown };
    const code = typeof f.code === 'string' ? f.code : 'unknown';
    const entry = codes.get(code);
    if (entry !== undefined) {
      entry.count += 1;
      continue;
    }
    codes.set(code, {
      code,
      count: 1,
      first: {
        seq: Number(r.seq),
        wave: String(r.wave ?? '?'),
        condition: String(r.condition ?? '?'),
        message: shortMessage(typeof f.message === 'string' ? f.message : '(no message)'),
      },
    });
  }
  return { rows: rows.length, failed, codes: [...codes.values()] };
}

/** One line per code: `E_X ×3 — first at row 12 (wave 1 × A): message`. */
export function failureCodeLines(s: FailureSummary): string[] {
  return s.codes.map(
    (c) =>
      `${c.code} ×${c.count} — first at row ${c.first.seq} (wave ${c.first.wave} × ${c.first.condition}): ${c.first.message}`,
  );
}

/** The terminal's "Failures" section: nothing when no row failed. */
export function failureSectionLines(
  s: FailureSummary,
  note = 'recorded as failed; they stay in the denominators',
): string[] {
  if (s.failed === 0) return [];
  return [
    `Failures: ${s.failed} of ${s.rows} rows failed to execute (${note})`,
    ...failureCodeLines(s).map((l) => `  ${l}`),
  ];
}
