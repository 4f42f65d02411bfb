/**
 * Seeded paired bootstrap of D, ρ, θ, θ̄ and success rates at three resampling levels, with
 * percentile intervals.
 *
 * Pairing: a unit is resampled whole (all its conditions together), so every replicate is again
 * seed-paired. Levels:
 *   - 'unit': n units drawn with replacement from all n units (θ̄ refuses this level: a task could
 *     receive no units, and θ̄ is a per-task average — use 'task-stratified').
 *   - 'task-stratified': within each task, n_t units drawn with replacement from that task's n_t units,
 *     so every replicate keeps the task sizes. Pooled estimands weight tasks by n_t/n; θ̄ by w_t.
 *   - 'cluster': whole clusters (chains) drawn with replacement, and the replicate estimand is the ratio
 *     Σ contributions / Σ units over the drawn clusters. Pooled estimands draw C clusters from all C;
 *     θ̄ draws, within each task, as many clusters as the task has (clusters must nest in tasks).
 *
 * Implementation: each unit's contribution (Y_X, Y_A − Y_X, |Y_A − Y_X| or f_T − f_S, an integer in
 * {−1,0,1}) is precomputed once, units are grouped into contiguous blocks per stratum, and a replicate is
 * the index draws plus integer sums — no allocation per replicate. Index draws are unbiased
 * (Lemire's method on 16-bit lanes of the Prng stream, two per uint32; see `drawIndices`) from a Prng
 * seeded with `options.seed`, strata in task-list order, so `{prng spec, replicates, level}` reproduces
 * every replicate bit for bit.
 *
 * Percentile rule: the replicates are sorted once; the p-quantile is Hyndman–Fan type 7 (R's default,
 * NumPy's 'linear'): h = (R − 1)p, Q(p) = x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]) on the sorted replicates
 * x[0..R−1]. A two-sided interval at confidence γ is [Q((1−γ)/2), Q((1+γ)/2)].
 *
 * Degenerate designs: when no unit is discordant (b = c = 0, or b′ = c′ = 0) every replicate is 0 and the
 * interval collapses to [0, 0] whatever n is. The bootstrap is anti-conservative exactly where a decision
 * is made on few discordant pairs, which is why reports also give the exact (Clopper–Pearson /
 * McNemar) bounds beside it.
 *
 * Empty input: zero units (or zero units in a task with positive θ̄ weight) throws E_STATS_DOMAIN.
 */
import { domainError, Prng, type PrngSpec, type Seed } from '../core/index.js';
import { estimate, taskWeights, unitContributions, type Estimand } from './estimands.js';
import { clusterTasks, taskSizes, type PairedDesign } from './paired-outcomes.js';

export type BootstrapLevel = 'unit' | 'task-stratified' | 'cluster';

export const DEFAULT_REPLICATES = 10_000;

export interface BootstrapOptions {
  readonly level: BootstrapLevel;
  readonly seed: Seed;
  /** Default 10,000. */
  readonly replicates?: number;
  /** Confidence levels of the percentile intervals to report. Default [0.95]. */
  readonly confidences?: readonly number[];
}

export interface PercentileInterval {
  readonly confidence: number;
  readonly lower: number;
  readonly upper: number;
}

export interface BootstrapRecord {
  readonly prng: PrngSpec;
  readonly replicates: number;
  readonly level: BootstrapLevel;
  readonly method: 'percentile';
  readonly quantileRule: 'hyndman-fan-7';
}

export interface BootstrapResult {
  readonly estimand: Estimand;
  /** The estimand on the original design. */
  readonly estimate: number;
  /** Replicate values, sorted ascending. */
  readonly replicates: Float64Array;
  /** Mean and standard deviation (R − 1 denominator) of the replicates. */
  readonly mean: number;
  readonly se: number;
  readonly intervals: readonly PercentileInterval[];
  readonly record: BootstrapRecord;
}

/** One resampling stratum: `count` blocks at [offset, offset+count) of the plan's arrays. */
interface Stratum {
  readonly offset: number;
  readonly count: number;
  readonly weight: number;
}

/** Blocks (units or clusters) with integer sums and sizes, grouped contiguously by stratum. */
export interface ResamplingPlan {
  readonly sums: Int32Array;
  /** Units per block; undefined when every block is one unit. */
  readonly sizes: Int32Array | undefined;
  readonly strata: readonly Stratum[];
}

/** Groups the design's per-unit contributions into the blocks and strata of a level. */
export function resamplingPlan(design: PairedDesign, estimand: Estimand, level: BootstrapLevel): ResamplingPlan {
  if (design.n === 0) domainError('design', 'has no resolved units; nothing to resample');
  const contrib = unitContributions(design, estimand);
  const byTask = estimand.kind === 'thetaBar';
  const weights = byTask ? taskWeights(design, estimand.weights) : undefined;
  if (level === 'unit') {
    if (byTask) domainError('level', "θ̄ is a per-task average; use 'task-stratified' (or 'cluster') resampling");
    return { sums: Int32Array.from(contrib), sizes: undefined, strata: [{ offset: 0, count: design.n, weight: 1 }] };
  }
  const k = design.taskNames.length;
  if (level === 'task-stratified') {
    const sizes = taskSizes(design);
    const start = new Int32Array(k);
    for (let t = 1; t < k; t++) start[t] = (start[t - 1] as number) + (sizes[t - 1] as number);
    const fill = Int32Array.from(start);
    const sums = new Int32Array(design.n);
    for (let i = 0; i < design.n; i++) sums[fill[design.task[i] as number]!++] = contrib[i] as number;
    const strata: Stratum[] = [];
    for (let t = 0; t < k; t++) {
      const w = weights === undefined ? (sizes[t] as number) / design.n : (weights[t] as number);
      if (sizes[t] !== 0 && w > 0) strata.push({ offset: start[t] as number, count: sizes[t] as number, weight: w });
    }
    return { sums, sizes: undefined, strata };
  }
  if (level !== 'cluster') domainError('level', `must be 'unit', 'task-stratified' or 'cluster'; got ${String(level)}`);
  if (design.cluster === undefined || design.clusterNames === undefined) {
    domainError('level', "'cluster' resampling needs a clustered design (give clusters)");
  }
  const nc = design.clusterNames.length;
  const csum = new Int32Array(nc),
    csize = new Int32Array(nc);
  for (let i = 0; i < design.n; i++) {
    const c = design.cluster[i] as number;
    csum[c]! += contrib[i] as number;
    csize[c]! += 1;
  }
  // Stratum of each cluster: its task for θ̄ (clusters must nest in tasks), one stratum otherwise.
  const owner = byTask ? clusterTasks(design) : new Int32Array(nc);
  const groups = byTask ? k : 1;
  const order: number[] = [];
  const strata: Stratum[] = [];
  for (let g = 0; g < groups; g++) {
    const offset = order.length;
    for (let c = 0; c < nc; c++) if (owner[c] === g && (csize[c] as number) > 0) order.push(c);
    const w = weights === undefined ? 1 : (weights[g] as number);
    if (order.length > offset && w > 0) strata.push({ offset, count: order.length - offset, weight: w });
  }
  return {
    sums: Int32Array.from(order, (c) => csum[c] as number),
    sizes: Int32Array.from(order, (c) => csize[c] as number),
    strata,
  };
}

/** Largest block count drawn from 16-bit lanes; larger strata use prng.nextInt. */
const LANE_MAX = 0x10000;

/**
 * Fills idx[0..m) with m uniform draws from [0, m). For m ≤ 2^16 each prng.nextUint32() gives two 16-bit
 * lanes, high half first; lane u maps to ⌊u·m / 2^16⌋ and is rejected when (u·m mod 2^16) < (2^16 − m) mod m
 * (Lemire's method: exactly uniform). Every call starts on a fresh uint32; a low lane left over after the
 * m-th draw is discarded. For m > 2^16 each draw is prng.nextInt(m).
 */
export function drawIndices(prng: Prng, m: number, idx: Int32Array): void {
  if (m > LANE_MAX) {
    for (let j = 0; j < m; j++) idx[j] = prng.nextInt(m);
    return;
  }
  const t = (LANE_MAX - m) % m;
  let j = 0;
  while (j < m) {
    const x = prng.nextUint32();
    const hi = (x >>> 16) * m; // < 2^32
    if ((hi & 0xffff) >= t) idx[j++] = hi >>> 16;
    if (j === m) break;
    const lo = (x & 0xffff) * m;
    if ((lo & 0xffff) >= t) idx[j++] = lo >>> 16;
  }
}

/** Σ sums[off + k] over m lane draws k (the fused form of drawIndices for one-unit blocks). */
function drawSum(prng: Prng, sums: Int32Array, off: number, m: number): number {
  const t = (LANE_MAX - m) % m;
  let s = 0,
    j = 0;
  while (j < m) {
    const x = prng.nextUint32();
    const hi = (x >>> 16) * m;
    if ((hi & 0xffff) >= t) {
      s += sums[off + (hi >>> 16)] as number;
      j++;
      if (j === m) break;
    }
    const lo = (x & 0xffff) * m;
    if ((lo & 0xffff) >= t) {
      s += sums[off + (lo >>> 16)] as number;
      j++;
    }
  }
  return s;
}

/**
 * Draws R replicate values of Σ_g w_g · (Σ drawn sums)/(Σ drawn sizes) into a new array (unsorted):
 * for each replicate, for each stratum in plan order, `count` block indices by drawIndices' rule.
 */
export function resample(plan: ResamplingPlan, prng: Prng, replicates: number): Float64Array {
  const out = new Float64Array(replicates);
  const { sums, sizes, strata } = plan;
  const ns = strata.length;
  const offsets = Int32Array.from(strata, (s) => s.offset);
  const counts = Int32Array.from(strata, (s) => s.count);
  const weights = Float64Array.from(strata, (s) => s.weight);
  const fused = sizes === undefined && strata.every((s) => s.count <= LANE_MAX);
  const idx = new Int32Array(fused ? 0 : Math.max(0, ...counts));
  for (let r = 0; r < replicates; r++) {
    let stat = 0;
    for (let g = 0; g < ns; g++) {
      const off = offsets[g] as number,
        m = counts[g] as number,
        w = weights[g] as number;
      if (fused) {
        stat += w * (drawSum(prng, sums, off, m) / m);
        continue;
      }
      drawIndices(prng, m, idx);
      let s = 0,
        z = 0;
      for (let j = 0; j < m; j++) s += sums[off + (idx[j] as number)] as number;
      if (sizes === undefined) z = m;
      else for (let j = 0; j < m; j++) z += sizes[off + (idx[j] as number)] as number;
      stat += w * (s / z);
    }
    out[r] = stat;
  }
  return out;
}

/** Hyndman–Fan type-7 quantile of an ascending-sorted, non-empty array. */
export function quantileType7(sorted: ArrayLike<number>, p: number): number {
  const R = sorted.length;
  if (R === 0) domainError('sorted', 'is empty; no quantile');
  if (!(p >= 0 && p <= 1)) domainError('p', `must lie in [0, 1]; got ${p}`);
  const h = (R - 1) * p;
  const lo = Math.floor(h);
  const a = sorted[lo] as number;
  if (lo + 1 >= R) return a;
  const b = sorted[lo + 1] as number;
  return a === b ? a : a + (h - lo) * (b - a);
}

/** The two-sided percentile interval [Q((1−γ)/2), Q((1+γ)/2)] of ascending-sorted replicates. */
export function percentileInterval(sorted: ArrayLike<number>, confidence: number): PercentileInterval {
  if (!(confidence > 0 && confidence < 1)) domainError('confidence', `must lie in (0, 1); got ${confidence}`);
  return {
    confidence,
    lower: quantileType7(sorted, (1 - confidence) / 2),
    upper: quantileType7(sorted, (1 + confidence) / 2),
  };
}

/** Seeded paired bootstrap of one estimand at one resampling level. */
export function pairedBootstrap(design: PairedDesign, estimand: Estimand, options: BootstrapOptions): BootstrapResult {
  const R = options.replicates ?? DEFAULT_REPLICATES;
  if (!(Number.isInteger(R) && R >= 2)) domainError('replicates', `must be an integer >= 2; got ${R}`);
  if (options.seed === undefined) domainError('seed', 'is required: every bootstrap is seeded and the seed recorded');
  const confidences = options.confidences ?? [0.95];
  for (const g of confidences) {
    if (!(g > 0 && g < 1)) domainError('confidences', `each must lie in (0, 1); got ${g}`);
  }
  const plan = resamplingPlan(design, estimand, options.level);
  const point = estimate(design, estimand);
  const prng = new Prng(options.seed);
  const reps = resample(plan, prng, R);
  reps.sort();
  let mean = 0;
  for (let r = 0; r < R; r++) mean += reps[r] as number;
  mean /= R;
  let ss = 0;
  for (let r = 0; r < R; r++) ss += ((reps[r] as number) - mean) ** 2;
  return {
    estimand,
    estimate: point,
    replicates: reps,
    mean,
    se: Math.sqrt(ss / (R - 1)),
    intervals: confidences.map((g) => percentileInterval(reps, g)),
    record: {
      prng: prng.spec,
      replicates: R,
      level: options.level,
      method: 'percentile',
      quantileRule: 'hyndman-fan-7',
    },
  };
}
