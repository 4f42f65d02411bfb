/**
 * What a probe or smoke run found, for stdout: per wave, task and condition (in plan order) the rows, how many ran to
 * their end (status ok), how many failed to execute, successes and correct decisions. Descriptive only — small runs are stored apart from the formal
 * evidence and no statistic is computed from them. Pure but for reading the run's rows.jsonl.
 */
import { ImepError } from '../../../core/index.js';
import { failureSummary, readRows } from '../../../evidence/index.js';
import { textTable } from '../../../report/index.js';

interface SmallRow {
  readonly wave?: unknown;
  readonly task?: unknown;
  readonly condition?: unknown;
  readonly status?: unknown;
  readonly success?: unknown;
  readonly decisionCorrect?: unknown;
}

export function smallRunTable(rows: readonly SmallRow[]): string {
  const cells = new Map<
    string,
    {
      wave: string;
      task: string;
      condition: string;
      n: number;
      completed: number;
      failed: number;
      success: number;
      decided: number;
      correct: number;
    }
  >();
  for (const r of rows) {
    const task = String(r.task ?? '?');
    const condition = String(r.condition ?? '?');
    const wave = String(r.wave ?? '?');
    const key = `${wave}\u0000${task}\u0000${condition}`;
    const c = cells.get(key) ?? {
      wave,
      task,
      condition,
      n: 0,
      completed: 0,
      failed: 0,
      success: 0,
      decided: 0,
      correct: 0,
    };
    c.n++;
    if (r.status === 'ok') c.completed++;
    if (r.status === 'failed') c.failed++;
    if (r.success === true) c.success++;
    if (typeof r.decisionCorrect === 'boolean') {
      c.decided++;
      if (r.decisionCorrect) c.correct++;
    }
    cells.set(key, c);
  }
  const body = [...cells.values()].map((c) => [
    c.wave,
    c.task,
    c.condition,
    String(c.n),
    String(c.completed),
    String(c.failed),
    `${c.success}/${c.n}`,
    c.decided === 0 ? '—' : `${c.correct}/${c.decided}`,
  ]);
  return textTable(
    [['wave', 'task', 'condition', 'rows', 'completed', 'failed', 'successes', 'correct decisions'], ...body],
    ['r', 'l', 'l', 'r', 'r', 'r', 'r', 'r'],
  );
}

/** The table of the small run whose rows are in `rowsFile`. */
export async function smallRunSummary(rowsFile: string): Promise<string> {
  return smallRunTable((await readRows(rowsFile)).rows as SmallRow[]);
}

/**
 * A small run with failed rows is not a green light: refused with exit 6 (E_FAILURE_BUDGET), after its table and its
 * Failures section were printed, so a script never goes on to the formal run.
 */
export async function refuseFailedSmallRun(rowsFile: string, kind: string): Promise<void> {
  const s = failureSummary((await readRows(rowsFile)).rows);
  if (s.failed === 0) return;
  const first = s.codes[0];
  throw new ImepError(
    'E_FAILURE_BUDGET',
    `the ${kind} run had ${s.failed} of ${s.rows} rows fail to execute${first ? ` (first: ${first.code}: ${first.first.message})` : ''}`,
    {
      file: rowsFile,
      hint: `fix the cause (the Failures section above names each code's first message) and run the ${kind} again before the formal run`,
    },
  );
}
