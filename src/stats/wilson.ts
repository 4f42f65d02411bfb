/**
 * Wilson score interval for a single binomial proportion (Wilson, 1927), without continuity correction.
 *
 * Definition followed: the interval is the set of p with |x − n·p| ≤ z·√(n·p·(1 − p)), i.e.
 *   centre = (x + z²/2) / (n + z²),  half-width = z·√(x·(n − x)/n + z²/4) / (n + z²).
 * `sided = 'two'` uses z = Φ⁻¹(1 − (1 − level)/2) and returns [lo, hi]. `sided = 'upper'` returns the
 * one-sided upper bound at `level` (z = Φ⁻¹(level)) as [0, hi]; `sided = 'lower'` returns [lo, 1].
 *
 * Degenerate inputs: x = 0 gives a lower endpoint of exactly 0 and x = n an upper endpoint of exactly 1.
 * n = 0 (no trials) carries no information and throws E_STATS_DOMAIN, as do negative or non-integer
 * counts, x > n, and a level outside (0, 1).
 */
import { domainError } from '../core/index.js';
import { upperCriticalValue } from './normal.js';

export type Sided = 'two' | 'upper' | 'lower';

/** Throws unless `value` is a non-negative safe integer; `field` names the argument. */
export function assertCount(field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    domainError(field, `${field} must be a non-negative integer count, got ${value}`);
}

/** Throws unless 0 < level < 1. */
export function assertLevel(field: string, level: number): void {
  if (!(level > 0 && level < 1)) domainError(field, `${field} must lie strictly between 0 and 1, got ${level}`);
}

/** The z critical value of a two-sided (tail (1 − level)/2) or one-sided (tail 1 − level) bound. */
export function criticalValue(level: number, sided: Sided): number {
  return upperCriticalValue(sided === 'two' ? (1 - level) / 2 : 1 - level);
}

/** Wilson score interval [lo, hi] for x successes in n trials. */
export function wilson(x: number, n: number, level = 0.95, sided: Sided = 'two'): [number, number] {
  assertCount('x', x);
  assertCount('n', n);
  if (n === 0) domainError('n', 'n must be positive: a proportion over zero trials is undefined');
  if (x > n) domainError('x', `x (${x}) cannot exceed n (${n})`);
  assertLevel('level', level);
  if (sided !== 'two' && sided !== 'upper' && sided !== 'lower')
    domainError('sided', `sided must be 'two', 'upper' or 'lower', got ${String(sided)}`);
  const z = criticalValue(level, sided);
  const z2 = z * z;
  const denom = n + z2;
  const centre = (x + z2 / 2) / denom;
  const half = (z * Math.sqrt((x * (n - x)) / n + z2 / 4)) / denom;
  const lo = x === 0 ? 0 : Math.max(0, centre - half);
  const hi = x === n ? 1 : Math.min(1, centre + half);
  if (sided === 'upper') return [0, hi];
  if (sided === 'lower') return [lo, 1];
  return [lo, hi];
}
