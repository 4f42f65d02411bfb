/**
 * The survival-coverage figure's data, from the sealed rows (EpisodeRow.reads): for each substituting
 * condition (rows whose `covered` is not null) and task, on the registered attempts and ok rows,
 *   units    the units whose every decision query selected ≥ 1 unmodified substituted record,
 *   queries  the decision queries that did, over all decision queries of those units.
 * Conditions in the adjudication's order; tasks in the design's order. Pure.
 */
import type { Adjudication } from '../adjudication/index.js';
import type { EpisodeRow } from '../evidence/index.js';

export interface CoverageDatum {
  readonly group: string;
  readonly condition: string;
  readonly task: string;
  readonly measure: 'units' | 'queries';
  readonly coverage: number;
  readonly count: string;
}

export function coverageData(a: Adjudication, rows: readonly EpisodeRow[]): CoverageDatum[] {
  const registered = new Set(a.design.registeredAttempts);
  const tasks = [...new Set(rows.map((r) => r.task))].sort(
    (x, y) => a.design.tasks.indexOf(x) - a.design.tasks.indexOf(y) || x.localeCompare(y),
  );
  const multiTask = tasks.length > 1;
  const out: CoverageDatum[] = [];
  const seen = new Set<string>();
  for (const c of a.conditions) {
    if (seen.has(c.condition)) continue;
    seen.add(c.condition);
    for (const t of tasks) {
      const rs = rows.filter(
        (r) =>
          r.condition === c.condition &&
          r.task === t &&
          registered.has(r.attempt) &&
          r.status === 'ok' &&
          r.reads.covered !== null,
      );
      if (rs.length === 0) continue;
      const covered = rs.filter((r) => r.reads.covered === true).length;
      const q = rs.reduce((s, r) => s + r.reads.decisionQueries, 0);
      const qc = rs.reduce((s, r) => s + r.reads.coveredDecisionQueries, 0);
      const group = multiTask ? `${c.condition} · ${t}` : c.condition;
      const pctOf = (k: number, n: number): number => (n === 0 ? 0 : Number(((100 * k) / n).toFixed(6)));
      out.push({
        group,
        condition: c.condition,
        task: t,
        measure: 'units',
        coverage: pctOf(covered, rs.length),
        count: `${covered}/${rs.length}`,
      });
      out.push({
        group,
        condition: c.condition,
        task: t,
        measure: 'queries',
        coverage: pctOf(qc, q),
        count: `${qc}/${q}`,
      });
    }
  }
  return out;
}
