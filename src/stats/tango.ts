/**
 * Tango (1998) score interval and score test for a paired difference of proportions.
 *
 * Orientation (docs/architecture.md "Vocabulary"): b counts pairs in which the reference succeeds and the
 * intervention fails, c the reverse, n all pairs; the difference is D = (b − c)/n = SR(reference) − SR(intervention).
 *
 * Definition followed (Tango, Stat Med 1998;17:891–908): for a hypothesised difference δ the score
 * statistic is
 *   T(δ) = (b − c − n·δ) / √(n·(2·q̂ + δ·(1 − δ))),
 * where q̂ is the maximum-likelihood estimate of the discordance probability p₂₁ (the cell counted by c)
 * restricted to p₁₂ − p₂₁ = δ, the non-negative root of 2n·q² + (−b − c + (2n − b + c)·δ)·q − c·δ·(1 − δ) = 0.
 * The root is taken in the cancellation-free form and clamped to the feasible range
 * [max(0, −δ), (1 − δ)/2]. The level-(1 − α) interval is {δ : |T(δ)| ≤ z_{1−α/2}}; T decreases in δ, so
 * each endpoint is the single crossing on its side of D̂, found by bisection to full double precision.
 *
 * Degenerate inputs: where the restricted variance is 0 (δ = ±1, or b = c = 0 at δ = 0) T is 0 when its
 * numerator is 0 and ±∞ otherwise. b = c = 0 gives the symmetric interval ±z²/(n + z²); c = n gives a
 * lower endpoint of exactly −1 and b = n an upper endpoint of exactly 1. n = 0, negative or non-integer
 * counts, b + c > n and a level outside (0, 1) throw E_STATS_DOMAIN naming the argument.
 */
import { domainError } from '../core/index.js';
import { normalSf, upperCriticalValue } from './normal.js';
import { assertCount, assertLevel } from './wilson.js';

export interface TangoInterval {
  readonly method: 'tango-score';
  /** D̂ = (b − c)/n. */
  readonly estimate: number;
  /** [lower, upper] on the D scale (fractions, not percentage points). */
  readonly interval: readonly [number, number];
  /** Two-sided confidence level of the interval. */
  readonly level: number;
  readonly b: number;
  readonly c: number;
  readonly n: number;
}

export interface TangoTest {
  readonly delta0: number;
  /** T(δ₀); positive when D̂ > δ₀. */
  readonly statistic: number;
  /** Two-sided asymptotic p-value 2·(1 − Φ(|T|)). */
  readonly pValue: number;
}

function validate(b: number, c: number, n: number): void {
  assertCount('b', b);
  assertCount('c', c);
  assertCount('n', n);
  if (n === 0) domainError('n', 'n must be positive: there are no pairs');
  if (b + c > n) domainError('b', `b + c (${b + c}) cannot exceed n (${n})`);
}

function assertDelta(delta: number): void {
  if (!(delta >= -1 && delta <= 1)) domainError('delta0', `delta0 must lie in [−1, 1], got ${delta}`);
}

/** Restricted MLE of p₂₁ under p₁₂ − p₂₁ = δ (unvalidated core). */
function restrictedP21(b: number, c: number, n: number, delta: number): number {
  const A = 2 * n;
  const B = -b - c + (2 * n - b + c) * delta;
  const C = -c * delta * (1 - delta);
  const disc = Math.max(0, B * B - 4 * A * C);
  const root = B >= 0 ? (B === 0 && C === 0 ? 0 : (2 * C) / (-B - Math.sqrt(disc))) : (-B + Math.sqrt(disc)) / (2 * A);
  const lo = Math.max(0, -delta);
  const hi = (1 - delta) / 2;
  return Math.min(hi, Math.max(lo, root));
}

/** Score statistic T(δ) (unvalidated core). */
function statistic(b: number, c: number, n: number, delta: number): number {
  const q = restrictedP21(b, c, n, delta);
  const variance = n * Math.max(0, 2 * q + delta * (1 - delta));
  const numerator = b - c - n * delta;
  if (variance === 0) return numerator === 0 ? 0 : numerator > 0 ? Infinity : -Infinity;
  return numerator / Math.sqrt(variance);
}

/** Restricted maximum-likelihood estimate of the discordance probability p₂₁ under Δ = δ₀. */
export function tangoRestrictedP21(b: number, c: number, n: number, delta0: number): number {
  validate(b, c, n);
  assertDelta(delta0);
  return restrictedP21(b, c, n, delta0);
}

/** Tango's score statistic T(δ₀). */
export function tangoStatistic(b: number, c: number, n: number, delta0: number): number {
  validate(b, c, n);
  assertDelta(delta0);
  return statistic(b, c, n, delta0);
}

/** Tango's asymptotic score test of H₀: Δ = δ₀ (default 0), two-sided. */
export function tangoTest(b: number, c: number, n: number, delta0 = 0): TangoTest {
  const t = tangoStatistic(b, c, n, delta0);
  return { delta0, statistic: t, pValue: Math.min(1, 2 * normalSf(Math.abs(t))) };
}

/**
 * Bisection for the crossing of a decreasing function f between `left` (f ≥ 0 side) and `right`
 * (f < 0 side), to the last representable bit.
 */
function bisectDecreasing(f: (x: number) => number, left: number, right: number): number {
  let l = left;
  let r = right;
  for (let i = 0; i < 2000; i++) {
    const m = l + (r - l) / 2;
    if (m <= l || m >= r) break;
    if (f(m) >= 0) l = m;
    else r = m;
  }
  // Return the endpoint that is still inside the acceptance region |T| ≤ z when it is ambiguous.
  return Math.abs(f(l)) <= Math.abs(f(r)) ? l : r;
}

/** Tango score interval for D = (b − c)/n at the given two-sided level. */
export function tango(b: number, c: number, n: number, level = 0.95): TangoInterval {
  validate(b, c, n);
  assertLevel('level', level);
  const z = upperCriticalValue((1 - level) / 2);
  const estimate = (b - c) / n;
  const lower = c === n ? -1 : bisectDecreasing((d) => statistic(b, c, n, d) - z, -1, estimate);
  const upper = b === n ? 1 : bisectDecreasing((d) => statistic(b, c, n, d) + z, estimate, 1);
  return {
    method: 'tango-score',
    estimate,
    interval: [Math.min(lower, estimate), Math.max(upper, estimate)],
    level,
    b,
    c,
    n,
  };
}
