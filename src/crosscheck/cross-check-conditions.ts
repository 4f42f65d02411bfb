/**
 * The cross-check's recomputation of the per-condition summaries (see src/adjudication conditions.ts): for each
 * condition of each wave, its row counts by status, its success rate with Wilson and Clopper–Pearson intervals,
 * its paired contrast against the wave's anchor (b, c, D, ρ with exact bounds) and, for a condition that
 * substitutes reads, the share of its 'ok' units the substitution covered.
 */
import { cpLower, cpUpper, wilsonClosed } from './cross-check-math.js';
import type { Obj, PlainRow, PlainStudy } from './cross-check-model.js';

/** The condition kinds whose interventions substitute memory reads (they report coverage). */
const SUBSTITUTING = ['U', 'S_pi', 'T_mu', 'S', 'T'];

/** Success over the resolved rows; null when none resolved or some row is unavailable. */
function successOf(study: PlainStudy, rows: readonly PlainRow[], unavailable: number): Obj | null {
  let n = 0,
    s = 0;
  for (const r of rows) {
    const y = study.outcome(r, 'success');
    if (y === null) continue;
    n++;
    s += y;
  }
  if (n === 0 || unavailable !== 0) return null;
  const [wl, wu] = wilsonClosed(s, n, 0.95);
  return {
    successes: s,
    n,
    rate: s / n,
    wilson95: { lower: wl, upper: wu },
    cp95: { lower: cpLower(s, n, 0.025), upper: cpUpper(s, n, 0.025) },
  };
}

/** The paired contrast against the wave's anchor; null for the anchor, an unavailable pair or no resolved pair. */
function vsAnchorOf(
  study: PlainStudy,
  excluded: Set<string>,
  w: { id: number; anchor: string },
  condition: string,
): Obj | null {
  if (condition === w.anchor) return null;
  const co = study.cohort([w.anchor, condition], 'success', excluded, w.id);
  if (co.unavailable.length !== 0) return null;
  let b = 0,
    c = 0,
    m = 0;
  for (const u of co.units) {
    if (u.y[0] === null || u.y[1] === null) continue;
    m++;
    if (u.y[0] === 1 && u.y[1] === 0) b++;
    if (u.y[0] === 0 && u.y[1] === 1) c++;
  }
  if (m === 0) return null;
  return {
    n: m,
    b,
    c,
    D: (b - c) / m,
    rho: (b + c) / m,
    rhoCp95: { lower: cpLower(b + c, m, 0.025), upper: cpUpper(b + c, m, 0.025) },
    rhoCpOneSided95: { lower: cpLower(b + c, m, 0.05), upper: cpUpper(b + c, m, 0.05) },
  };
}

/** The covered share of a substituting condition's 'ok' rows; null for other kinds or no 'ok' row. */
function coverageOf(study: PlainStudy, condition: string, rows: readonly PlainRow[]): Obj | null {
  if (!SUBSTITUTING.includes(study.kindOf(condition))) return null;
  const okRows = rows.filter((r) => r.status === 'ok');
  let covered = 0;
  for (const r of okRows) if (r.reads.covered === true) covered++;
  return okRows.length === 0 ? null : { covered, units: okRows.length, rate: covered / okRows.length };
}

/** One summary per condition per wave (registered attempts, competent tasks), in wave then condition order. */
export function expectedConditions(study: PlainStudy, excluded: Set<string>): Obj[] {
  const out: Obj[] = [];
  for (const w of study.waves()) {
    for (const condition of w.conditions) {
      const rows = study.rows.filter(
        (r) =>
          r.wave === w.id && r.condition === condition && study.registered.includes(r.attempt) && !excluded.has(r.task),
      );
      const count = (s: string): number => rows.filter((r) => r.status === s).length;
      const unavailable = count('unavailable');
      out.push({
        id: `${condition}@w${w.id}`,
        rows: { total: rows.length, ok: count('ok'), failed: count('failed'), removed: count('removed'), unavailable },
        success: successOf(study, rows, unavailable),
        vsAnchor: vsAnchorOf(study, excluded, w, condition),
        coverage: coverageOf(study, condition, rows),
      });
    }
  }
  return out;
}
