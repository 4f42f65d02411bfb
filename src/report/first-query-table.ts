/**
 * Where each episode's FIRST memory query happened, per condition and attempt, from the sealed rows
 * (EpisodeRow.reads.firstQuery): how many episodes queried at all, and min / median / max of the
 * per-scope query clock and of the candidate count at that query. The clock and candidate gates
 * compare these with the reference; the table lets a reader see the distributions the gates judged.
 * Conditions in protocol order, then attempt. Pure.
 */
import type { EpisodeRow } from '../evidence/index.js';
import type { Table } from './model.js';

function spread(values: number[]): string {
  if (values.length === 0) return '—';
  const s = [...values].sort((x, y) => x - y);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return `${s[0]} / ${median} / ${s[s.length - 1]}`;
}

export function firstQueryTable(rows: readonly EpisodeRow[], conditionOrder: readonly string[]): Table {
  const groups = new Map<string, { condition: string; attempt: number; rows: EpisodeRow[] }>();
  for (const r of rows) {
    const key = `${r.condition}\u0000${r.attempt}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { condition: r.condition, attempt: r.attempt, rows: [] }));
    g.rows.push(r);
  }
  const rank = (c: string): number => {
    const k = conditionOrder.indexOf(c);
    return k < 0 ? conditionOrder.length : k;
  };
  const ordered = [...groups.values()].sort(
    (x, y) => rank(x.condition) - rank(y.condition) || x.condition.localeCompare(y.condition) || x.attempt - y.attempt,
  );
  return {
    caption:
      'First memory query of each episode (sealed rows): clock = per-scope query clock, candidates = records before top-k; min / median / max',
    header: ['condition', 'attempt', 'episodes', 'with a query', 'clock', 'candidates'],
    rows: ordered.map((g) => {
      const firsts = g.rows.flatMap((r) => (r.reads.firstQuery === null ? [] : [r.reads.firstQuery]));
      return [
        g.condition,
        String(g.attempt),
        String(g.rows.length),
        String(firsts.length),
        spread(firsts.map((f) => f.clock)),
        spread(firsts.map((f) => f.candidates)),
      ];
    }),
  };
}
