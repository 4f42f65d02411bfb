/**
 * Descriptive per-condition summaries (every condition in every wave that runs it), the data of the
 * report's figures: rows by execution status; success on the registered attempts with Wilson and
 * Clopper–Pearson 95%; the outcome-change rate ρ against the wave's anchor with its two-sided
 * Clopper–Pearson 95% interval and its one-sided 95% bounds (as the paper's Figure 3); and survival
 * coverage for substituting conditions. Competent tasks only; success readout.
 */
import type { Protocol } from '../protocol/index.js';
import { hasRole } from '../protocol/index.js';
import { clopperPearson, clopperPearsonLower, clopperPearsonUpper, wilson } from '../stats/index.js';
import { outcomeOf, type RowIndex } from './joint-cohort.js';
import type { ConditionSummary } from './types.js';

export function conditionSummaries(
  protocol: Protocol,
  index: RowIndex,
  excludedTasks: ReadonlySet<string>,
): ConditionSummary[] {
  const out: ConditionSummary[] = [];
  for (const wave of protocol.waves) {
    for (const condition of wave.conditions) {
      const kind = protocol.conditions.find((c) => c.id === condition)?.kind ?? 'A';
      const all = index.registeredRowsOf(wave.id, condition).filter((r) => !excludedTasks.has(r.task));
      const rows = {
        total: all.length,
        ok: all.filter((r) => r.status === 'ok').length,
        failed: all.filter((r) => r.status === 'failed').length,
        removed: all.filter((r) => r.status === 'removed').length,
        unavailable: all.filter((r) => r.status === 'unavailable').length,
      };
      const ys = all.map((r) => outcomeOf(r, 'success')).filter((y) => y !== null);
      const n = ys.length;
      const successes = ys.filter((y) => y === 1).length;
      const success =
        n === 0 || rows.unavailable > 0
          ? null
          : (() => {
              const [wl, wu] = wilson(successes, n, 0.95);
              const [cl, cu] = clopperPearson(successes, n, 0.95);
              return {
                successes,
                n,
                rate: successes / n,
                wilson95: { lower: wl, upper: wu },
                cp95: { lower: cl, upper: cu },
              };
            })();
      let vsAnchor: ConditionSummary['vsAnchor'] = null;
      if (condition !== wave.anchor) {
        const cohort = index.cohort([wave.anchor, condition], 'success', excludedTasks, `waves.${wave.id}`, wave.id);
        if (cohort.status === 'available') {
          let b = 0,
            c = 0,
            m = 0;
          for (const u of cohort.units) {
            const a = u.outcomes[wave.anchor],
              x = u.outcomes[condition];
            if (a === null || a === undefined || x === null || x === undefined) continue;
            m++;
            if (a > x) b++;
            else if (a < x) c++;
          }
          if (m > 0) {
            const [l, u] = clopperPearson(b + c, m, 0.95);
            vsAnchor = {
              anchor: wave.anchor,
              n: m,
              b,
              c,
              D: (b - c) / m,
              rho: (b + c) / m,
              rhoCp95: { lower: l, upper: u },
              rhoCpOneSided95: {
                lower: clopperPearsonLower(b + c, m, 0.05),
                upper: clopperPearsonUpper(b + c, m, 0.05),
              },
            };
          }
        }
      }
      let coverage: ConditionSummary['coverage'] = null;
      if (hasRole({ kind }, 'substituting')) {
        const okRows = all.filter((r) => r.status === 'ok');
        const covered = okRows.filter((r) => r.reads.covered === true).length;
        coverage = okRows.length === 0 ? null : { covered, units: okRows.length, rate: covered / okRows.length };
      }
      out.push({
        id: `${condition}@w${wave.id}`,
        condition,
        wave: wave.id,
        kind,
        anchor: condition === wave.anchor,
        rows,
        success,
        vsAnchor,
        coverage,
      });
    }
  }
  return out;
}
