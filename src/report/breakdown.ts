/**
 * Per-task and per-attempt breakdowns from the sealed rows (the adjudication pools tasks for its pooled
 * estimands; a reader wants RememberColor3 and RememberColor5 apart, and attempt 2 beside attempt 1):
 *   - success per task × attempt × condition (ok rows with an observed outcome; registered attempts marked),
 *   - paired flips per task × attempt against each wave's anchor: b, c, n, ρ = (b + c)/n, D = (b − c)/n.
 * Descriptive only: no verdict routes on these. Units pair on (wave, task, seed, attempt). Pure.
 */
import type { Adjudication } from '../adjudication/index.js';
import type { EpisodeRow } from '../evidence/index.js';
import type { Table } from './model.js';
import { signedPp } from './text-table.js';

const pct = (k: number, n: number): string => (n === 0 ? '—' : `${k}/${n} (${((100 * k) / n).toFixed(2)}%)`);

function rank(order: readonly string[], x: string): number {
  const k = order.indexOf(x);
  return k < 0 ? order.length : k;
}

export interface FlipCell {
  readonly wave: number;
  readonly task: string;
  readonly attempt: number;
  readonly anchor: string;
  readonly condition: string;
  readonly n: number;
  readonly b: number;
  readonly c: number;
  /** Seeds of the b flips (anchor succeeds, condition fails) and of the c flips (the reverse), ascending. */
  readonly bSeeds: readonly number[];
  readonly cSeeds: readonly number[];
  readonly concordantSeeds: readonly number[];
}

const resolved = (r: EpisodeRow): boolean => r.status === 'ok' && r.success !== null;

/** Paired flips of every condition against its wave's anchor, per task and attempt. */
export function flipCells(a: Adjudication, rows: readonly EpisodeRow[]): FlipCell[] {
  const key = (r: EpisodeRow): string =>
    `${r.wave}\u0000${r.condition}\u0000${r.task}\u0000${r.seed}\u0000${r.attempt}`;
  const byKey = new Map(rows.map((r) => [key(r), r]));
  const cells = new Map<
    string,
    {
      wave: number;
      task: string;
      attempt: number;
      anchor: string;
      condition: string;
      b: number[];
      c: number[];
      same: number[];
    }
  >();
  for (const w of a.design.waves) {
    for (const r of rows) {
      if (r.wave !== w.id || r.condition === w.anchor || !resolved(r)) continue;
      const ref = byKey.get(key({ ...r, condition: w.anchor }));
      if (ref === undefined || !resolved(ref)) continue;
      const k = `${w.id}\u0000${r.task}\u0000${r.attempt}\u0000${r.condition}`;
      let cell = cells.get(k);
      if (cell === undefined)
        cells.set(
          k,
          (cell = {
            wave: w.id,
            task: r.task,
            attempt: r.attempt,
            anchor: w.anchor,
            condition: r.condition,
            b: [],
            c: [],
            same: [],
          }),
        );
      if (ref.success && !r.success) cell.b.push(r.seed);
      else if (!ref.success && r.success) cell.c.push(r.seed);
      else cell.same.push(r.seed);
    }
  }
  const asc = (xs: number[]): number[] => [...xs].sort((p, q) => p - q);
  return [...cells.values()].map((x) => ({
    wave: x.wave,
    task: x.task,
    attempt: x.attempt,
    anchor: x.anchor,
    condition: x.condition,
    n: x.b.length + x.c.length + x.same.length,
    b: x.b.length,
    c: x.c.length,
    bSeeds: asc(x.b),
    cSeeds: asc(x.c),
    concordantSeeds: asc(x.same),
  }));
}

export function breakdownTables(
  a: Adjudication,
  rows: readonly EpisodeRow[],
  conditionOrder: readonly string[],
): Table[] {
  const registered = new Set(a.design.registeredAttempts);
  const tasks = [...new Set(rows.map((r) => r.task))].sort(
    (x, y) => rank(a.design.tasks, x) - rank(a.design.tasks, y) || x.localeCompare(y),
  );
  const attempts = [...new Set(rows.map((r) => r.attempt))].sort((x, y) => x - y);
  const attemptText = (k: number): string => `${k}${registered.has(k) ? ' (registered)' : ''}`;
  const groups = new Map<string, { ok: number; k: number; rows: number }>();
  for (const r of rows) {
    const g = `${r.wave}\u0000${r.condition}\u0000${r.task}\u0000${r.attempt}`;
    const cur = groups.get(g) ?? { ok: 0, k: 0, rows: 0 };
    cur.rows++;
    if (resolved(r)) {
      cur.ok++;
      if (r.success) cur.k++;
    }
    groups.set(g, cur);
  }
  const successRows: string[][] = [];
  for (const w of a.design.waves) {
    const conds = [...w.conditions].sort((x, y) => rank(conditionOrder, x) - rank(conditionOrder, y));
    for (const t of tasks)
      for (const at of attempts)
        for (const c of conds) {
          const g = groups.get(`${w.id}\u0000${c}\u0000${t}\u0000${at}`);
          if (g === undefined) continue;
          const excluded = a.design.excludedTasks.includes(t) ? ' (excluded by competence)' : '';
          successRows.push([
            String(w.id),
            `${t}${excluded}`,
            attemptText(at),
            c,
            pct(g.k, g.ok),
            String(g.rows - g.ok),
          ]);
        }
  }
  const flips = flipCells(a, rows).sort(
    (x, y) =>
      x.wave - y.wave ||
      rank(tasks, x.task) - rank(tasks, y.task) ||
      x.attempt - y.attempt ||
      rank(conditionOrder, x.condition) - rank(conditionOrder, y.condition),
  );
  const flipRows = flips.map((f) => [
    String(f.wave),
    f.task,
    attemptText(f.attempt),
    `${f.condition} vs ${f.anchor}`,
    String(f.n),
    `b=${f.b}, c=${f.c}`,
    f.n === 0 ? '—' : `${((100 * (f.b + f.c)) / f.n).toFixed(2)}%`,
    f.n === 0 ? '—' : `${signedPp((f.b - f.c) / f.n)} pp`,
  ]);
  return [
    {
      caption: 'Success per task and attempt (ok rows with an observed outcome; descriptive, never a verdict)',
      header: ['wave', 'task', 'attempt', 'condition', 'success', 'unresolved rows'],
      rows: successRows,
    },
    {
      caption:
        'Paired flips per task and attempt against the wave’s anchor (units pair on task, seed and attempt; descriptive)',
      header: ['wave', 'task', 'attempt', 'contrast', 'n paired', 'flips', 'ρ', 'D'],
      rows: flipRows,
    },
  ];
}
