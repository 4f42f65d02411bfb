/**
 * Identification bounds for success rates when some outcomes are unresolved (failed executions, missing
 * rows), keeping every planned unit instead of dropping it (update-sufficiency audit, §4.4).
 *
 * Model. An arm is a list of blocks (units); a block has one or more constituent outcomes, each 1
 * (observed success), 0 (observed failure) or null (unresolved). A block succeeds iff ALL of its
 * constituents succeed (the joint endpoint J = ∏ Y), so:
 *   - any observed 0 identifies the block as 0, whatever else is unresolved;
 *   - otherwise, any null leaves the block in [0, 1];
 *   - a fully observed all-1 block is 1.
 * A block with a single constituent is simply that outcome.
 *
 * Arm bounds [L, U]: block lower (upper) values are averaged within each cluster, then the cluster means
 * are averaged with equal weight. A block without a cluster id is its own cluster. (With equal cluster
 * sizes this equals the plain block mean.) A contrast x − y is bounded by [L_x − U_y, U_x − L_y].
 *
 * These are identification bounds over unobserved outcomes within the fixed sample: every value between
 * them is attained by some filling-in of the unresolved constituents. They are NOT confidence intervals
 * and carry no sampling uncertainty; every result is labelled so. Exact rational endpoints (BigInt
 * numerator/denominator, reduced, denominator > 0) are returned alongside the floats.
 *
 * Degenerate inputs: an arm with no blocks, a block with no constituents, or a constituent other than
 * 0, 1 or null throws E_STATS_DOMAIN naming the offending path (e.g. `blocks[3].outcomes[1]`).
 */
import { domainError } from '../core/index.js';

export const IDENTIFICATION_LABEL =
  'identification bounds over unobserved outcomes (not a confidence interval)' as const;

export type ConstituentOutcome = 0 | 1 | null;

export interface Block {
  /** Constituent outcomes: 1 success, 0 observed failure, null unresolved. */
  readonly outcomes: readonly ConstituentOutcome[];
  /** Cluster (e.g. source pair) the block belongs to; absent means the block is its own cluster. */
  readonly cluster?: string;
}

export type BlockStatus = 'success' | 'failure' | 'unresolved';

export interface BlockBounds {
  readonly status: BlockStatus;
  readonly lower: 0 | 1;
  readonly upper: 0 | 1;
}

export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

export interface IdentificationBounds {
  readonly label: typeof IDENTIFICATION_LABEL;
  readonly lower: number;
  readonly upper: number;
  readonly exact: { readonly lower: Rational; readonly upper: Rational };
}

export interface ArmIdentificationBounds extends IdentificationBounds {
  readonly counts: {
    readonly blocks: number;
    readonly clusters: number;
    readonly success: number;
    readonly failure: number;
    readonly unresolved: number;
  };
}

// ------------------------------------------------------------ rationals ----

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** The reduced rational num/den (den ≠ 0), with a positive denominator. */
export function rational(num: bigint, den: bigint): Rational {
  if (den === 0n) domainError('den', 'denominator must be non-zero');
  const sign = den < 0n ? -1n : 1n;
  const g = gcd(num, den) || 1n;
  return { num: (sign * num) / g, den: (sign * den) / g };
}

export function addRational(x: Rational, y: Rational): Rational {
  return rational(x.num * y.den + y.num * x.den, x.den * y.den);
}

export function subRational(x: Rational, y: Rational): Rational {
  return rational(x.num * y.den - y.num * x.den, x.den * y.den);
}

function bitLength(v: bigint): number {
  return v === 0n ? 0 : v.toString(2).length;
}

/** Nearest double to a rational (to within 1 ulp), also for numerators/denominators beyond 2^53. */
export function rationalToNumber(r: Rational): number {
  const limit = 2n ** 53n;
  const absNum = r.num < 0n ? -r.num : r.num;
  if (absNum <= limit && r.den <= limit) return Number(r.num) / Number(r.den);
  const shift = Math.max(0, 64 - (bitLength(absNum) - bitLength(r.den)));
  const q = (absNum << BigInt(shift)) / r.den;
  const v = Number(q) / 2 ** shift;
  return r.num < 0n ? -v : v;
}

export function rationalToString(r: Rational): string {
  return `${r.num}/${r.den}`;
}

// --------------------------------------------------------------- blocks ----

/** Bounds of one block's joint success (all constituents must succeed). */
export function blockBounds(outcomes: readonly ConstituentOutcome[], field = 'outcomes'): BlockBounds {
  if (!Array.isArray(outcomes) || outcomes.length === 0)
    domainError(field, 'a block needs at least one constituent outcome');
  let unresolved = false;
  let failed = false;
  outcomes.forEach((o, j) => {
    if (o === 0) failed = true;
    else if (o === null) unresolved = true;
    else if (o !== 1) domainError(`${field}[${j}]`, `an outcome must be 1, 0 or null (unresolved), got ${String(o)}`);
  });
  if (failed) return { status: 'failure', lower: 0, upper: 0 };
  if (unresolved) return { status: 'unresolved', lower: 0, upper: 1 };
  return { status: 'success', lower: 1, upper: 1 };
}

function make(lower: Rational, upper: Rational): IdentificationBounds {
  return {
    label: IDENTIFICATION_LABEL,
    lower: rationalToNumber(lower),
    upper: rationalToNumber(upper),
    exact: { lower, upper },
  };
}

/** Identification bounds [L, U] of an arm's success rate, averaging blocks within clusters first. */
export function armBounds(blocks: readonly Block[]): ArmIdentificationBounds {
  if (!Array.isArray(blocks) || blocks.length === 0) domainError('blocks', 'an arm needs at least one block');
  const clusters = new Map<string, { lower: number; upper: number; size: number }>();
  const counts = { blocks: blocks.length, clusters: 0, success: 0, failure: 0, unresolved: 0 };
  blocks.forEach((block, i) => {
    const bb = blockBounds(block.outcomes, `blocks[${i}].outcomes`);
    counts[bb.status] += 1;
    if (block.cluster !== undefined && typeof block.cluster !== 'string') {
      domainError(`blocks[${i}].cluster`, 'a cluster id must be a string');
    }
    // Unclustered blocks get a key no string id can collide with.
    const key = block.cluster === undefined ? `\u0000block:${i}` : `id:${block.cluster}`;
    const acc = clusters.get(key) ?? { lower: 0, upper: 0, size: 0 };
    acc.lower += bb.lower;
    acc.upper += bb.upper;
    acc.size += 1;
    clusters.set(key, acc);
  });
  counts.clusters = clusters.size;
  const k = BigInt(clusters.size);
  let lower = rational(0n, 1n);
  let upper = rational(0n, 1n);
  for (const acc of clusters.values()) {
    const den = BigInt(acc.size) * k;
    lower = addRational(lower, rational(BigInt(acc.lower), den));
    upper = addRational(upper, rational(BigInt(acc.upper), den));
  }
  return { ...make(lower, upper), counts };
}

/** Bounds of the contrast x − y: [L_x − U_y, U_x − L_y]. */
export function contrastBounds(x: IdentificationBounds, y: IdentificationBounds): IdentificationBounds {
  return make(subRational(x.exact.lower, y.exact.upper), subRational(x.exact.upper, y.exact.lower));
}

/** Convenience: contrast bounds straight from two arms' blocks. */
export function armContrastBounds(x: readonly Block[], y: readonly Block[]): IdentificationBounds {
  return contrastBounds(armBounds(x), armBounds(y));
}
