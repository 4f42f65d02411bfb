/**
 * Exact cluster sign-flip test.
 *
 * Given integer per-cluster sums s_1..s_C (rationals are passed as integer numerators over a common
 * integer `scale`), the statistic is T = Σ_c s_c and its null distribution is that of T* = Σ_c ε_c s_c
 * over all 2^C equally likely sign assignments ε ∈ {−1,+1}^C: each cluster (a chain, or a single unit)
 * swaps its two labels as one block. For paired binary outcomes s_c = Σ_{i∈c} (Y_A,i − Y_X,i), so T > 0
 * means the intervention lowers success (positive D).
 *
 * Exact computation: with a_c = |s_c| and S = Σ a_c, T* = S − 2K where K is the sum of a_c over the
 * clusters given a minus sign, so the null is the subset-sum count distribution of the a_c. It is computed
 * by dynamic programming over reachable sums 0..⌊S/2⌋ (the distribution is symmetric, count[K] =
 * count[S − K]) with exact integer counts held in 32-bit limbs of Float64Arrays (carries are normalised
 * every 20 clusters, so every float stays below 2^53 and no count is ever rounded); tail counts are
 * summed into BigInt. No normal approximation is used. Cost: about C·S/2·⌈(C+1)/32⌉ additions over
 * (S/2)·⌈(C+1)/32⌉ float cells; `maxWork` / `maxCells` refuse larger problems (signFlipFeasible tells first).
 *
 * Ties and zeros: p-values count assignments with T* at least as extreme as T, ties included
 * (P(T* ≥ T), P(T* ≤ T), and two-sided P(|T*| ≥ |T|); so T = 0 gives a two-sided p of 1). A cluster with
 * s_c = 0 gives the same T* under either sign; it is dropped before counting (`zeroClusters` reports how
 * many), which multiplies every count and the total by the same 2^zeros and leaves every p-value unchanged.
 * Counts and `total` are over the 2^(C − zeros) assignments of the nonzero clusters.
 *
 * Empty input: no clusters, or only zero sums, gives T = 0 and every p-value 1 (the null is a point mass).
 */
import { domainError } from '../core/index.js';
import { resolvedOutcomes, type PairedDesign } from './paired-outcomes.js';

export interface SignFlipResult {
  /** T = Σ s_c, in units of 1/scale. */
  readonly statistic: number;
  /** T / scale. */
  readonly value: number;
  readonly scale: number;
  readonly clusters: number;
  readonly zeroClusters: number;
  /** Number of sign assignments counted: 2^(clusters − zeroClusters). */
  readonly total: bigint;
  readonly countGreater: bigint; // #{T* ≥ T}
  readonly countLess: bigint; // #{T* ≤ T}
  readonly countTwoSided: bigint; // #{|T*| ≥ |T|}
  readonly pGreater: number;
  readonly pLess: number;
  readonly pTwoSided: number;
  readonly method: 'exact-dp' | 'exact-enumeration';
}

export interface SignFlipOptions {
  /** Common positive integer denominator of the sums (reported only). Default 1. */
  readonly scale?: number;
  /** Refuse (E_STATS_DOMAIN) when the DP would need more limb-additions than this. Default 2e9. */
  readonly maxWork?: number;
  /** Refuse when the count table would hold more float cells ((⌊S/2⌋+1)·limbs) than this. Default 2^25 (256 MiB). */
  readonly maxCells?: number;
}

const LIMB = 4294967296; // 2^32
const NORMALISE_EVERY = 20;
export const DEFAULT_MAX_WORK = 2e9;
export const DEFAULT_MAX_CELLS = 2 ** 25;

function validateSums(sums: ArrayLike<number>, field: string): { abs: number[]; T: number; S: number; zeros: number } {
  const abs: number[] = [];
  let T = 0,
    S = 0,
    zeros = 0;
  for (let c = 0; c < sums.length; c++) {
    const s = sums[c] as number;
    if (!Number.isSafeInteger(s)) {
      domainError(`${field}[${c}]`, `must be a safe integer (express rationals over a common integer scale); got ${s}`);
    }
    if (s === 0) zeros++;
    else abs.push(Math.abs(s));
    T += s;
    S += Math.abs(s);
  }
  if (!Number.isSafeInteger(S)) domainError(field, 'Σ|s_c| exceeds 2^53; rescale the sums');
  return { abs, T, S, zeros };
}

export interface SignFlipCost {
  /** Limb-additions of the DP. */
  readonly work: number;
  /** Float cells of the count table. */
  readonly cells: number;
}

function costOf(m: number, S: number): SignFlipCost {
  const limbs = Math.floor(m / 32) + 1,
    half = Math.floor(S / 2) + 1;
  return { work: m * half * limbs, cells: half * limbs };
}

/** What the exact DP costs for these sums (compare with maxWork / maxCells before calling). */
export function signFlipCost(sums: ArrayLike<number>): SignFlipCost {
  const { abs, S } = validateSums(sums, 'sums');
  return costOf(abs.length, S);
}

/** Whether clusterSignFlipTest would accept these sums under the given limits. */
export function signFlipFeasible(sums: ArrayLike<number>, options: SignFlipOptions = {}): boolean {
  const { work, cells } = signFlipCost(sums);
  return work <= (options.maxWork ?? DEFAULT_MAX_WORK) && cells <= (options.maxCells ?? DEFAULT_MAX_CELLS);
}

/**
 * The subset-sum counts of positive integers `values` on 0..⌊S/2⌋, as exact limbs:
 * count[K] = Σ_l limbs[l][K] · 2^(32 l).
 */
function halfSubsetCounts(values: readonly number[], S: number): Float64Array[] {
  const H = Math.floor(S / 2);
  const nl = Math.floor(values.length / 32) + 1;
  const limbs = Array.from({ length: nl }, () => new Float64Array(H + 1));
  (limbs[0] as Float64Array)[0] = 1;
  const sorted = [...values].sort((x, y) => x - y);
  let reach = 0;
  for (let j = 0; j < sorted.length; j++) {
    const v = sorted[j] as number;
    reach = Math.min(H, reach + v);
    for (let l = 0; l < nl; l++) {
      const a = limbs[l] as Float64Array;
      for (let k = reach; k >= v; k--) a[k] = (a[k] as number) + (a[k - v] as number);
    }
    if ((j + 1) % NORMALISE_EVERY === 0 || j === sorted.length - 1) {
      for (let l = 0; l + 1 < nl; l++) {
        const a = limbs[l] as Float64Array,
          up = limbs[l + 1] as Float64Array;
        for (let k = 0; k <= reach; k++) {
          const x = a[k] as number;
          if (x >= LIMB) {
            const carry = Math.floor(x / LIMB);
            a[k] = x - carry * LIMB;
            up[k] = (up[k] as number) + carry;
          }
        }
      }
    }
  }
  return limbs;
}

/** Σ_{K=0..upTo} count[K] over the stored half (upTo ≤ ⌊S/2⌋), exactly. */
function cumulativeHalf(limbs: Float64Array[], upTo: number): bigint {
  let total = 0n;
  const CHUNK = 1 << 20; // chunk sums of limbs < 2^32 stay below 2^52
  for (let l = 0; l < limbs.length; l++) {
    const a = limbs[l] as Float64Array;
    let limbTotal = 0n;
    for (let start = 0; start <= upTo; start += CHUNK) {
      let s = 0;
      const end = Math.min(upTo, start + CHUNK - 1);
      for (let k = start; k <= end; k++) s += a[k] as number;
      limbTotal += BigInt(s);
    }
    total += limbTotal << BigInt(32 * l);
  }
  return total;
}

/** count / 2^m as a double (correctly rounded for m ≤ 1000). */
export function dyadicRatio(count: bigint, m: number): number {
  if (m <= 1000) return Number(count) / 2 ** m;
  return Number(count >> BigInt(m - 1000)) / 2 ** 1000;
}

function finish(
  T: number,
  scale: number,
  clusters: number,
  zeros: number,
  m: number,
  countGreater: bigint,
  countLess: bigint,
  countTwoSided: bigint,
  method: SignFlipResult['method'],
): SignFlipResult {
  return {
    statistic: T,
    value: T / scale,
    scale,
    clusters,
    zeroClusters: zeros,
    total: 1n << BigInt(m),
    countGreater,
    countLess,
    countTwoSided,
    pGreater: dyadicRatio(countGreater, m),
    pLess: dyadicRatio(countLess, m),
    pTwoSided: dyadicRatio(countTwoSided, m),
    method,
  };
}

function checkScale(scale: number): void {
  if (!(Number.isSafeInteger(scale) && scale >= 1)) domainError('scale', `must be a positive integer; got ${scale}`);
}

/** The exact sign-flip test by dynamic programming over cluster sums. */
export function clusterSignFlipTest(sums: ArrayLike<number>, options: SignFlipOptions = {}): SignFlipResult {
  const scale = options.scale ?? 1;
  checkScale(scale);
  const maxWork = options.maxWork ?? DEFAULT_MAX_WORK;
  const maxCells = options.maxCells ?? DEFAULT_MAX_CELLS;
  const { abs, T, S, zeros } = validateSums(sums, 'sums');
  const m = abs.length;
  const { work, cells } = costOf(m, S);
  if (work > maxWork || cells > maxCells) {
    domainError(
      'sums',
      `the exact DP needs ${work.toExponential(2)} additions over ${cells.toExponential(2)} cells ` +
        `(limits ${maxWork.toExponential(2)} / ${maxCells.toExponential(2)}); rescale or use a Monte-Carlo test`,
    );
  }
  const total = 1n << BigInt(m);
  const limbs = halfSubsetCounts(abs, S);
  const H = Math.floor(S / 2);
  // #{K ≤ k}, any k, through the symmetry count[K] = count[S − K].
  const cum = (k: number): bigint => {
    if (k < 0) return 0n;
    if (k >= S) return total;
    if (k <= H) return cumulativeHalf(limbs, k);
    return total - cumulativeHalf(limbs, S - k - 1);
  };
  // T* ≥ T ⇔ K ≤ (S − T)/2 ;  T* ≤ T ⇔ K ≥ (S − T)/2.
  const countGreater = cum(Math.floor((S - T) / 2));
  const countLess = total - cum(Math.ceil((S - T) / 2) - 1);
  const a = Math.abs(T);
  const countTwoSided = a === 0 ? total : 2n * cum(Math.floor((S - a) / 2));
  return finish(T, scale, sums.length, zeros, m, countGreater, countLess, countTwoSided, 'exact-dp');
}

/** The same test by enumerating all 2^C' assignments of the nonzero clusters (C' ≤ 26); an independent check. */
export function clusterSignFlipEnumeration(sums: ArrayLike<number>, options: { scale?: number } = {}): SignFlipResult {
  const scale = options.scale ?? 1;
  checkScale(scale);
  const { T, zeros } = validateSums(sums, 'sums');
  const nonzero = Array.from(sums).filter((s) => s !== 0);
  const m = nonzero.length;
  if (m > 26) domainError('sums', `enumeration is limited to 26 nonzero clusters; got ${m}`);
  let g = 0,
    l = 0,
    two = 0;
  const a = Math.abs(T);
  for (let mask = 0; mask < 2 ** m; mask++) {
    let t = 0;
    for (let c = 0; c < m; c++) t += (mask >>> c) & 1 ? -(nonzero[c] as number) : (nonzero[c] as number);
    if (t >= T) g++;
    if (t <= T) l++;
    if (Math.abs(t) >= a) two++;
  }
  return finish(T, scale, sums.length, zeros, m, BigInt(g), BigInt(l), BigInt(two), 'exact-enumeration');
}

/**
 * Per-cluster Σ_{i∈c} (Y_A,i − Y_X,i) of a clustered design (indexed like clusterNames; a cluster with
 * no units sums to 0). Requires both conditions resolved on every unit.
 */
export function clusterDifferenceSums(design: PairedDesign, reference: string, intervention: string): Int32Array {
  if (design.cluster === undefined || design.clusterNames === undefined) {
    domainError('design.cluster', 'the cluster sign-flip test needs a clustered design (give clusters)');
  }
  const a = resolvedOutcomes(design, reference, 'reference');
  const x = resolvedOutcomes(design, intervention, 'intervention');
  const sums = new Int32Array(design.clusterNames.length);
  for (let i = 0; i < design.n; i++) sums[design.cluster[i] as number]! += (a[i] as number) - (x[i] as number);
  return sums;
}

/** The exact cluster sign-flip test of D on a clustered paired design (T = Σ_c s_c = b − c). */
export function pairedClusterSignFlip(
  design: PairedDesign,
  reference: string,
  intervention: string,
  options: SignFlipOptions = {},
): SignFlipResult {
  return clusterSignFlipTest(clusterDifferenceSums(design, reference, intervention), options);
}
