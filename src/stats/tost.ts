/**
 * Two one-sided tests (TOST) for equivalence, by the interval-inclusion rule.
 *
 * Definition followed (Schuirmann, 1987; the IMEP paper's frozen 690-pair test): TOST at level α against
 * a registered margin (−m_lo, +m_hi) declares equivalence iff the 1 − 2α confidence interval lies wholly
 * inside the margin: −m_lo < lower and upper < +m_hi (strict; an endpoint on the boundary is not inside).
 * The margin may be symmetric (a number m means (−m, +m)) or asymmetric ([−m_lo, +m_hi]).
 *
 * The result is a discriminated union that always carries the interval, the margin and the level; it is
 * never a bare boolean. `direction` places the interval relative to zero. In the paper's orientation
 * (Δ = structured − comparator, negative = harm), 'not-equivalent' with direction 'below-zero' is the
 * "harm criterion met, difference not shown small" outcome: the interval is wholly below 0 and reaches
 * the lower margin.
 *
 * Degenerate inputs: NaN or reversed interval endpoints, a margin that does not contain 0 in its interior,
 * a level outside (0, 1) and alpha outside (0, 0.5) throw E_STATS_DOMAIN naming the argument. Infinite
 * margin bounds are allowed (one-sided non-inferiority).
 */
import { domainError } from '../core/index.js';
import { tango } from './tango.js';
import { assertLevel } from './wilson.js';

export type Margin = number | readonly [number, number];

/** Where the interval lies relative to zero. */
export type Direction = 'below-zero' | 'above-zero' | 'includes-zero';

interface TostCommon {
  readonly interval: readonly [number, number];
  /** The margin as [lower, upper] (lower < 0 < upper). */
  readonly margin: readonly [number, number];
  /** Confidence level of the interval (1 − 2α for a TOST at level α). */
  readonly level: number;
  /** The per-side test level α = (1 − level)/2. */
  readonly alpha: number;
  readonly direction: Direction;
}

export interface TostEquivalent extends TostCommon {
  readonly outcome: 'equivalent';
}

export interface TostNotEquivalent extends TostCommon {
  readonly outcome: 'not-equivalent';
  /** Which margin bound(s) the interval reaches or passes. */
  readonly beyond: 'lower' | 'upper' | 'both';
}

export type TostResult = TostEquivalent | TostNotEquivalent;

export interface TostInput {
  readonly interval: readonly [number, number];
  readonly margin: Margin;
  /** Level of `interval`; defaults to 0.90 (TOST at α = 0.05). */
  readonly level?: number;
}

/** Normalises a symmetric or asymmetric margin to [lower, upper] with lower < 0 < upper. */
export function normaliseMargin(margin: Margin): [number, number] {
  const pair: readonly [number, number] = typeof margin === 'number' ? [-margin, margin] : margin;
  if (!Array.isArray(pair) || pair.length !== 2)
    domainError('margin', 'margin must be a number m or a pair [lower, upper]');
  const [lo, hi] = pair;
  if (Number.isNaN(lo) || Number.isNaN(hi) || !(lo < 0 && hi > 0)) {
    domainError('margin', `margin must satisfy lower < 0 < upper, got [${lo}, ${hi}]`);
  }
  return [lo, hi];
}

function directionOf(lo: number, hi: number): Direction {
  if (hi < 0) return 'below-zero';
  if (lo > 0) return 'above-zero';
  return 'includes-zero';
}

/** TOST by interval inclusion: the 1 − 2α interval against a registered margin. */
export function tost(input: TostInput): TostResult {
  const level = input.level ?? 0.9;
  assertLevel('level', level);
  const iv = input.interval;
  if (!Array.isArray(iv) || iv.length !== 2) domainError('interval', 'interval must be a pair [lower, upper]');
  const [lo, hi] = iv;
  if (Number.isNaN(lo) || Number.isNaN(hi) || lo > hi)
    domainError('interval', `interval must satisfy lower ≤ upper, got [${lo}, ${hi}]`);
  const margin = normaliseMargin(input.margin);
  const common = {
    interval: [lo, hi] as const,
    margin,
    level,
    alpha: (1 - level) / 2,
    direction: directionOf(lo, hi),
  };
  const lowOut = lo <= margin[0];
  const highOut = hi >= margin[1];
  if (!lowOut && !highOut) return { outcome: 'equivalent', ...common };
  return { outcome: 'not-equivalent', beyond: lowOut && highOut ? 'both' : lowOut ? 'lower' : 'upper', ...common };
}

/**
 * Paired TOST on D = (b − c)/n with the 1 − 2α Tango score interval (90% at the default α = 0.05).
 * Orientation as in tango.ts: b = reference succeeds, intervention fails.
 */
export function tostPairedTango(
  b: number,
  c: number,
  n: number,
  margin: Margin,
  alpha = 0.05,
): TostResult & { readonly method: 'tango-score'; readonly estimate: number } {
  if (!(alpha > 0 && alpha < 0.5)) domainError('alpha', `alpha must lie in (0, 0.5), got ${alpha}`);
  const level = 1 - 2 * alpha;
  const ci = tango(b, c, n, level);
  return { ...tost({ interval: ci.interval, margin, level }), alpha, method: 'tango-score', estimate: ci.estimate };
}
