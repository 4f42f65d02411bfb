import { readRows } from '../evidence/index.js';
import { textTable } from '../report/index.js';

/**
 * What a probe or smoke run found, for stdout: per wave, task and condition (in plan order) the rows, how many ran to
 * their end, successes and correct decisions. Descriptive only — small runs are stored apart from the formal
 * evidence and no statistic is computed from them. Pure but for reading the run's rows.jsonl.
 */

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
    const c = cells.get(key) ?? { wave, task, condition, n: 0, completed: 0, success: 0, decided: 0, correct: 0 };
    c.n++;
    if (r.status === 'completed') c.completed++;
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
    `${c.success}/${c.n}`,
    c.decided === 0 ? '—' : `${c.correct}/${c.decided}`,
  ]);
  return textTable(
    [['wave', 'task', 'condition', 'rows', 'completed', 'successes', 'correct decisions'], ...body],
    ['r', 'l', 'l', 'r', 'r', 'r', 'r'],
  );
}

/** The table of the small run whose rows are in `rowsFile`. */
export async function smallRunSummary(rowsFile: string): Promise<string> {
  return smallRunTable((await readRows(rowsFile)).rows as SmallRow[]);
}
