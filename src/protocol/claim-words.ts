/**
 * A criterion's registered claim in plain words, e.g. "D_N lies below +10.00 pp: its upper bound lies below that".
 * One wording for every place a claim is shown — the terminal's verdict lines, the report's verdict table and the
 * unit's in-toto statements — taken from the frozen protocol's criterion. Pure.
 */
import type { Criterion } from './schema-analysis.js';

/** The registered claim of a bound rule in plain words, e.g. "D_N's lower bound exceeds +10.00 pp". */
export function claimWords(
  rule: Criterion['rule'],
  estimand: string,
  x: { margin?: number; alpha?: number; direction?: string; than?: string; companions?: readonly string[] },
): string {
  const pp = (v: number): string => `${v > 0 ? '+' : ''}${(100 * v).toFixed(2)} pp`;
  switch (rule) {
    case 'lower-bound-above': {
      const also = x.companions && x.companions.length > 0 ? ` and the upper bound of ${x.companions.join(', ')}` : '';
      return `${estimand} exceeds ${pp(x.margin ?? 0)}${also}: its lower bound lies above that`;
    }
    case 'upper-bound-below':
      return `${estimand} lies below ${pp(x.margin ?? 0)}: its upper bound lies below that`;
    case 'equivalence':
      return `${estimand} lies within ±${(100 * (x.margin ?? 0)).toFixed(2)} pp: its interval lies inside the margins`;
    case 'p-below': {
      const dir =
        x.direction === 'greater' ? 'lowers success' : x.direction === 'less' ? 'raises success' : 'changes success';
      return `the intervention ${dir} on ${estimand}: exact McNemar p below ${x.alpha}`;
    }
    case 'point-below':
      return `${estimand}'s point estimate lies below ${x.than ?? '?'}'s (a point check, no error control)`;
  }
}

/** The registered claim of one criterion in words (from the frozen protocol). */
export function claimText(c: Criterion): string {
  switch (c.rule) {
    case 'lower-bound-above':
      return claimWords(c.rule, c.estimand, { margin: c.margin, companions: c.aboveUpperBoundOf ?? [] });
    case 'upper-bound-below':
    case 'equivalence':
      return claimWords(c.rule, c.estimand, { margin: c.margin });
    case 'p-below':
      return claimWords(c.rule, c.estimand, { alpha: c.alpha, direction: c.direction });
    case 'point-below':
      return claimWords(c.rule, c.estimand, { than: c.than });
  }
}
