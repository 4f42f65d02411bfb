/**
 * Exact Clopper–Pearson bounds for a binomial proportion x/n.
 *
 * Definitions (B⁻¹ = inverse regularized incomplete beta, ./special-functions.ts):
 * - clopperPearsonLower(x, n, α) = B⁻¹(α; x, n−x+1): one-sided 1−α lower bound;
 * - clopperPearsonUpper(x, n, α) = B⁻¹(1−α; x+1, n−x): one-sided 1−α upper bound, solved as
 *   1 − I_u(x+1, n−x) = α so that a tiny α is never rounded through 1 − α;
 * - clopperPearson(x, n, level) = [lower at α, upper at α] with α = (1 − level)/2: the two-sided
 *   equal-tailed interval (coverage ≥ level).
 * Closed forms: x = 0 → lower 0, upper 1 − α^{1/n} (as −expm1(ln α / n)); x = n → upper 1, lower α^{1/n}.
 *
 * Degenerate input: n = 0 (no trials) gives the uninformative [0, 1]. x and n must be integers with
 * 0 ≤ x ≤ n; α and level must lie strictly in (0, 1). Violations throw E_STATS_DOMAIN. Pure, no I/O.
 */
import { domainError } from '../core/index.js';
import { inverseRegularizedIncompleteBeta, inverseRegularizedIncompleteBetaComplement } from './special-functions.js';

function checkCounts(x: number, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) domainError('n', `n must be an integer ≥ 0, got ${n}`);
  if (!Number.isSafeInteger(x) || x < 0 || x > n) domainError('x', `x must be an integer in [0, n=${n}], got ${x}`);
}

function checkOpenUnit(field: string, v: number): void {
  if (!(v > 0 && v < 1)) domainError(field, `${field} must lie strictly between 0 and 1, got ${v}`);
}

/** One-sided (1 − α) lower Clopper–Pearson bound for x successes in n trials. */
export function clopperPearsonLower(x: number, n: number, alpha: number): number {
  checkCounts(x, n);
  checkOpenUnit('alpha', alpha);
  if (x === 0) return 0;
  if (x === n) return Math.exp(Math.log(alpha) / n);
  return inverseRegularizedIncompleteBeta(alpha, x, n - x + 1);
}

/** One-sided (1 − α) upper Clopper–Pearson bound for x successes in n trials. */
export function clopperPearsonUpper(x: number, n: number, alpha: number): number {
  checkCounts(x, n);
  checkOpenUnit('alpha', alpha);
  if (x === n) return 1;
  if (x === 0) return -Math.expm1(Math.log(alpha) / n);
  return inverseRegularizedIncompleteBetaComplement(alpha, x + 1, n - x);
}

/** Two-sided equal-tailed Clopper–Pearson interval at confidence `level` (default 0.95): [lower, upper]. */
export function clopperPearson(x: number, n: number, level = 0.95): readonly [number, number] {
  checkCounts(x, n);
  checkOpenUnit('level', level);
  const alpha = (1 - level) / 2;
  return [clopperPearsonLower(x, n, alpha), clopperPearsonUpper(x, n, alpha)];
}
