/**
 * One-sided task-stratified permutation test for θ̄ (H1: θ̄ > 0).
 *
 * With d_i = f_T,i − f_S,i ∈ {−1, 0, 1} (flip indicators against reference A),
 * θ̄ = Σ_t w_t/n_t Σ_{i∈t} d_i (w normalised; default equal weights). Under H0 the labels T and S are
 * exchangeable within each unit, so each d_i flips sign independently, and the p-value is
 * P(θ̄* ≥ θ̄) over all 2^n sign assignments (ties count; units with d_i = 0 are unaffected by a swap).
 *
 * Exact path: with integer relative weights W_t and L = lcm of the n_t (tasks with W_t > 0), unit i in
 * task t carries the integer a_t = W_t·L/n_t (divided by the gcd of all a_t), so θ̄ = Σ_i a_t d_i / scale
 * exactly, and the null is the cluster sign-flip distribution with each unit a one-unit cluster of sum
 * a_t d_i — computed exactly by cluster-sign-flip's DP. With equal weights a single task reduces this to
 * the exact one-sided McNemar test on (b′, c′).
 * Weights given as decimals are read with up to 6 decimal places (w·10^k within 1e-9 of an integer);
 * otherwise, or when the DP exceeds `maxWork` / `maxCells`, the p-value is Monte Carlo: R seeded draws of
 * independent signs, p̂ = (1 + #{θ̄* ≥ θ̄ − tol})/(1 + R) with tol = 1e-12·Σ|coefficients|, and
 * mcError = √(p̂(1 − p̂)/R); `method` says which path ran and the PRNG spec is recorded.
 *
 * Empty input: zero units throws E_STATS_DOMAIN; a design with no discordant unit (all d_i = 0) gives
 * θ̄ = 0 and p = 1.
 */
import { domainError, Prng, type PrngSpec, type Seed } from '../core/index.js';
import { clusterSignFlipTest, signFlipFeasible, type SignFlipResult } from './cluster-sign-flip.js';
import { taskWeights, thetaBar, unitContributions } from './estimands.js';
import { taskSizes, type PairedDesign } from './paired-outcomes.js';

export interface PermutationOptions {
  /** Relative task weights by task name (see estimands.taskWeights). Default: equal. */
  readonly weights?: Readonly<Record<string, number>>;
  /** Exact DP limits (see cluster-sign-flip); above either, the Monte-Carlo path runs. */
  readonly maxWork?: number;
  readonly maxCells?: number;
  /** Monte-Carlo fallback: seed (required only if the fallback runs; default 0, recorded) and draws. */
  readonly seed?: Seed;
  readonly mcReplicates?: number;
  /** Force the Monte-Carlo path (for checks). */
  readonly forceMonteCarlo?: boolean;
}

export interface PermutationResult {
  readonly thetaBar: number;
  readonly pValue: number;
  readonly alternative: 'greater';
  readonly method: 'exact-dp' | 'monte-carlo';
  /** Units whose d_i ≠ 0 (each carries a sign flip). */
  readonly discordant: number;
  /** Exact path: the integer statistic and scale (θ̄ = statistic/scale) and the sign-flip counts. */
  readonly exact?: SignFlipResult;
  /** Monte-Carlo path: the standard error of p̂, the draws and the PRNG that made them. */
  readonly mcError?: number;
  readonly mcReplicates?: number;
  readonly prng?: PrngSpec;
}

export const DEFAULT_MC_REPLICATES = 100_000;

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

/** Integer relative weights for the exact path, or undefined when they are not (short) decimals. */
function integerWeights(w: Float64Array): bigint[] | undefined {
  for (let k = 0; k <= 6; k++) {
    const f = 10 ** k;
    const ints = Array.from(w, (x) => x * f);
    if (ints.every((x) => Math.abs(x - Math.round(x)) <= 1e-9 * Math.max(1, Math.abs(x)))) {
      const big = ints.map((x) => BigInt(Math.round(x)));
      const g = big.reduce((a, b) => gcd(a, b), 0n);
      return big.map((x) => (g === 0n ? x : x / g));
    }
  }
  return undefined;
}

/** Exact-path coefficients a_t (bigint, per task) and the scale with θ̄ = Σ a_t d_i / scale. */
function integerCoefficients(
  design: PairedDesign,
  weights: Readonly<Record<string, number>> | undefined,
): { a: bigint[]; scale: bigint } | undefined {
  // The relative weights as given (validated by taskWeights), or 1 per task by default.
  const raw = Float64Array.from(design.taskNames, (name) => (weights === undefined ? 1 : (weights[name] ?? 0)));
  const ints = integerWeights(raw);
  if (ints === undefined) return undefined;
  const sizes = taskSizes(design);
  let L = 1n;
  for (let t = 0; t < sizes.length; t++) {
    if ((ints[t] as bigint) > 0n) {
      const n = BigInt(sizes[t] as number);
      L = (L / gcd(L, n)) * n;
    }
  }
  const a = ints.map((W, t) => (W > 0n ? (W * L) / BigInt(sizes[t] as number) : 0n));
  const g = a.reduce((x, y) => gcd(x, y), 0n);
  const W = ints.reduce((x, y) => x + y, 0n);
  return { a: a.map((x) => x / g), scale: (W * L) / g };
}

/** P(θ̄* ≥ θ̄) under within-unit exchangeability of T and S, stratified by task. */
export function thetaBarPermutationTest(
  design: PairedDesign,
  reference: string,
  target: string,
  sham: string,
  options: PermutationOptions = {},
): PermutationResult {
  if (design.n === 0) domainError('design', 'has no resolved units; θ̄ is undefined');
  const estimand = { kind: 'thetaBar', reference, target, sham } as const;
  const d = unitContributions(design, estimand);
  const w = taskWeights(design, options.weights);
  const observed = thetaBar(design, reference, target, sham, options.weights);
  const sizes = taskSizes(design);
  let discordant = 0;
  for (let i = 0; i < design.n; i++) if (d[i] !== 0 && (w[design.task[i] as number] as number) > 0) discordant++;
  const limits = { maxWork: options.maxWork, maxCells: options.maxCells };
  if (!options.forceMonteCarlo) {
    const coef = integerCoefficients(design, options.weights);
    if (
      coef !== undefined &&
      coef.a.every((x) => x <= BigInt(Number.MAX_SAFE_INTEGER)) &&
      coef.scale <= BigInt(Number.MAX_SAFE_INTEGER)
    ) {
      const sums: number[] = [];
      let S = 0;
      for (let i = 0; i < design.n; i++) {
        const di = d[i] as number;
        if (di === 0) continue;
        const a = Number(coef.a[design.task[i] as number] as bigint);
        if (a === 0) continue;
        sums.push(di * a);
        S += a;
      }
      if (Number.isSafeInteger(S) && signFlipFeasible(sums, limits)) {
        const exact = clusterSignFlipTest(sums, { ...limits, scale: Number(coef.scale) });
        return {
          thetaBar: observed,
          pValue: exact.pGreater,
          alternative: 'greater',
          method: 'exact-dp',
          discordant,
          exact,
        };
      }
    }
  }
  // Monte-Carlo fallback on float coefficients w_t/n_t.
  const R = options.mcReplicates ?? DEFAULT_MC_REPLICATES;
  if (!(Number.isInteger(R) && R >= 1)) domainError('mcReplicates', `must be a positive integer; got ${R}`);
  const values: number[] = [];
  for (let i = 0; i < design.n; i++) {
    const t = design.task[i] as number;
    const c = (w[t] as number) / (sizes[t] as number);
    if (d[i] !== 0 && c > 0) values.push((d[i] as number) * c);
  }
  const abs = Float64Array.from(values, Math.abs);
  const T = values.reduce((s, v) => s + v, 0);
  const tol = 1e-12 * abs.reduce((s, v) => s + v, 0);
  const prng = new Prng(options.seed ?? 0);
  let hits = 0;
  for (let r = 0; r < R; r++) {
    let t = 0,
      bits = 0;
    for (let j = 0; j < abs.length; j++) {
      if ((j & 31) === 0) bits = prng.nextUint32();
      t += (bits & 1) === 1 ? (abs[j] as number) : -(abs[j] as number);
      bits >>>= 1;
    }
    if (t >= T - tol) hits++;
  }
  const p = (1 + hits) / (1 + R);
  return {
    thetaBar: observed,
    pValue: p,
    alternative: 'greater',
    method: 'monte-carlo',
    discordant,
    mcError: Math.sqrt((p * (1 - p)) / R),
    mcReplicates: R,
    prng: prng.spec,
  };
}
