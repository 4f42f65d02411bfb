/**
 * Exact McNemar test for paired binary outcomes, conditional on the m = b + c discordant pairs.
 *
 * Definition. Under H0 each discordant pair is b-type with probability ½, so X ~ Bin(m, ½) and
 * - 'two-sided': p = min(1, 2·min(P(X ≤ b), P(X ≥ b)));
 * - 'greater' (H1: b > c, i.e. b-type flips are more likely): p = P(X ≥ b);
 * - 'less' (H1: b < c): p = P(X ≤ b).
 * Because Bin(m, ½) is symmetric, min(P(X ≤ b), P(X ≥ b)) = P(X ≤ min(b, c)), which is what is
 * evaluated (one incomplete-beta tail; exact, no normal approximation, no continuity correction).
 * For m ≤ 50 the tail is the integer sum Σ_{j≤k} C(m, j) (exact in doubles below 2^53) times 2^−m, so
 * the p-value is the correctly rounded rational (e.g. (9, 1) → 22/1024); above, the incomplete-beta tail
 * with p = ½ (both arguments exact) gives ≈1e-15 relative precision for m up to 1e7.
 *
 * Degenerate input: m = 0 (no discordant pairs) gives p = 1 for every alternative.
 * b and c must be integers ≥ 0 (E_STATS_DOMAIN naming 'b' or 'c'). Pure, no I/O.
 */
import { domainError } from '../core/index.js';
import { binomialCdf } from './binomial.js';

export type McNemarAlternative = 'two-sided' | 'greater' | 'less';

const ALTERNATIVES: readonly McNemarAlternative[] = ['two-sided', 'greater', 'less'];

/** Largest m whose binomial coefficients and partial sums (with the update c·(m−j+1)) stay below 2^53. */
const EXACT_SUM_MAX_M = 50;

/** P(X ≤ k) for X ~ Bin(m, ½): exact integer sum for small m, incomplete beta otherwise. */
function lowerTailHalf(k: number, m: number): number {
  if (k < 0) return 0;
  if (k >= m) return 1;
  if (m > EXACT_SUM_MAX_M) return binomialCdf(k, m, 0.5);
  let c = 1;
  let sum = 1;
  for (let j = 1; j <= k; j++) {
    c = (c * (m - j + 1)) / j; // exact: an integer below 2^53
    sum += c;
  }
  return sum * 2 ** -m;
}

function checkCount(field: 'b' | 'c', v: number): void {
  if (!Number.isSafeInteger(v) || v < 0) domainError(field, `${field} must be an integer ≥ 0, got ${v}`);
}

/** Exact conditional McNemar p-value for b (reference succeeds, intervention fails) and c (the reverse). */
export function mcnemarExact(b: number, c: number, alternative: McNemarAlternative = 'two-sided'): number {
  checkCount('b', b);
  checkCount('c', c);
  if (!ALTERNATIVES.includes(alternative)) {
    domainError('alternative', `alternative must be one of ${ALTERNATIVES.join(', ')}, got ${String(alternative)}`);
  }
  const m = b + c;
  if (m === 0) return 1;
  // P(X ≥ b) = P(X ≤ c) by the symmetry of Bin(m, ½)
  if (alternative === 'greater') return lowerTailHalf(c, m);
  if (alternative === 'less') return lowerTailHalf(b, m);
  if (b === c) return 1;
  return Math.min(1, 2 * lowerTailHalf(Math.min(b, c), m));
}
