/**
 * Exact point estimands on a PairedDesign (pure; integers are counted, rates are one division).
 *
 * Against reference A and intervention X over n resolved units:
 *   b = #(A=1, X=0), c = #(A=0, X=1), D_X = (b − c)/n = SR_A − SR_X, ρ_X = (b + c)/n.
 * Positive D means the intervention lowers success.
 * With flip indicators f_X,i = |Y_A,i − Y_X,i| for target T and sham S:
 *   θ = ρ_T − ρ_S = mean_i(f_T,i − f_S,i), b′ = #(f_T=1, f_S=0), c′ = #(f_T=0, f_S=1), θ = (b′ − c′)/n.
 * θ̄ = Σ_t w_t θ_t with w normalised to sum 1 (default: equal weight per task — the task-macro mean).
 *
 * Resolution: every function requires the conditions it reads to be resolved on every unit
 * (use jointlyResolved() for the joint cohort); otherwise it throws naming the condition.
 * Empty input: counts are 0; a rate over zero units throws E_STATS_DOMAIN (field "design"), and θ̄
 * throws when a task with positive weight has no units (field "weights" / "design").
 */
import { domainError } from '../core/index.js';
import { resolvedOutcomes, taskSizes, type PairedDesign } from './paired-outcomes.js';

export interface DiscordantCounts {
  readonly n: number;
  /** Reference succeeds, intervention fails. */
  readonly b: number;
  /** Reference fails, intervention succeeds. */
  readonly c: number;
}

export interface FlipCounts {
  readonly n: number;
  /** f_T = 1, f_S = 0 (the target flips, the sham does not). */
  readonly bPrime: number;
  /** f_T = 0, f_S = 1. */
  readonly cPrime: number;
  /** Units where the target flips (b_T + c_T) and where the sham flips. */
  readonly flipsT: number;
  readonly flipsS: number;
}

/** The contrasts the bootstrap and the tests can take, named as in the paper. */
export type Estimand =
  | { readonly kind: 'successRate'; readonly condition: string }
  | { readonly kind: 'D'; readonly reference: string; readonly intervention: string }
  | { readonly kind: 'rho'; readonly reference: string; readonly intervention: string }
  | { readonly kind: 'theta'; readonly reference: string; readonly target: string; readonly sham: string }
  | {
      readonly kind: 'thetaBar';
      readonly reference: string;
      readonly target: string;
      readonly sham: string;
      /** Relative task weights by task name; omitted tasks get weight 0. Default: equal weights. */
      readonly weights?: Readonly<Record<string, number>>;
    };

function requireUnits(n: number): void {
  if (n === 0) domainError('design', 'has no resolved units; the rate is undefined');
}

/** Number of successes in a condition. */
export function successCount(design: PairedDesign, condition: string): number {
  const y = resolvedOutcomes(design, condition);
  let s = 0;
  for (let i = 0; i < design.n; i++) s += y[i] as number;
  return s;
}

/** SR_X = successes / n. */
export function successRate(design: PairedDesign, condition: string): number {
  requireUnits(design.n);
  return successCount(design, condition) / design.n;
}

/** b and c of reference vs intervention. */
export function discordantCounts(design: PairedDesign, reference: string, intervention: string): DiscordantCounts {
  const a = resolvedOutcomes(design, reference, 'reference');
  const x = resolvedOutcomes(design, intervention, 'intervention');
  let b = 0,
    c = 0;
  for (let i = 0; i < design.n; i++) {
    const ai = a[i] as number,
      xi = x[i] as number;
    if (ai > xi) b++;
    else if (ai < xi) c++;
  }
  return { n: design.n, b, c };
}

/** D_X = (b − c)/n; positive when the intervention lowers success. */
export function netBenefit(design: PairedDesign, reference: string, intervention: string): number {
  requireUnits(design.n);
  const { b, c, n } = discordantCounts(design, reference, intervention);
  return (b - c) / n;
}

/** ρ_X = (b + c)/n, the outcome-change rate. */
export function outcomeChangeRate(design: PairedDesign, reference: string, intervention: string): number {
  requireUnits(design.n);
  const { b, c, n } = discordantCounts(design, reference, intervention);
  return (b + c) / n;
}

function flipCountsOn(a: Uint8Array, t: Uint8Array, s: Uint8Array, units: Iterable<number>): FlipCounts {
  let n = 0,
    bPrime = 0,
    cPrime = 0,
    flipsT = 0,
    flipsS = 0;
  for (const i of units) {
    const ft = (a[i] as number) ^ (t[i] as number);
    const fs = (a[i] as number) ^ (s[i] as number);
    n++;
    flipsT += ft;
    flipsS += fs;
    if (ft > fs) bPrime++;
    else if (ft < fs) cPrime++;
  }
  return { n, bPrime, cPrime, flipsT, flipsS };
}

function range(n: number): Iterable<number> {
  return {
    *[Symbol.iterator]() {
      for (let i = 0; i < n; i++) yield i;
    },
  };
}

/** b′, c′ and the flip totals of target T vs sham S, both against reference A. */
export function flipCounts(design: PairedDesign, reference: string, target: string, sham: string): FlipCounts {
  return flipCountsOn(
    resolvedOutcomes(design, reference, 'reference'),
    resolvedOutcomes(design, target, 'target'),
    resolvedOutcomes(design, sham, 'sham'),
    range(design.n),
  );
}

/** θ = ρ_T − ρ_S = (b′ − c′)/n. */
export function theta(design: PairedDesign, reference: string, target: string, sham: string): number {
  requireUnits(design.n);
  const { bPrime, cPrime, n } = flipCounts(design, reference, target, sham);
  return (bPrime - cPrime) / n;
}

export interface TaskTheta extends FlipCounts {
  readonly task: string;
  /** θ_t; NaN when the task has no units. */
  readonly theta: number;
}

/** θ_t and the flip counts of every task in the design's task list (order kept). */
export function taskThetas(design: PairedDesign, reference: string, target: string, sham: string): TaskTheta[] {
  const a = resolvedOutcomes(design, reference, 'reference');
  const t = resolvedOutcomes(design, target, 'target');
  const s = resolvedOutcomes(design, sham, 'sham');
  const members: number[][] = design.taskNames.map(() => []);
  for (let i = 0; i < design.n; i++) members[design.task[i] as number]?.push(i);
  return design.taskNames.map((task, k) => {
    const counts = flipCountsOn(a, t, s, members[k] as number[]);
    return { task, ...counts, theta: counts.n === 0 ? Number.NaN : (counts.bPrime - counts.cPrime) / counts.n };
  });
}

/**
 * Normalised task weights (indexed like taskNames). Default: equal weight on every task of the design.
 * Given weights are relative, non-negative, finite, name known tasks, and must not all be zero;
 * a task with positive weight must have units.
 */
export function taskWeights(design: PairedDesign, weights?: Readonly<Record<string, number>>): Float64Array {
  const k = design.taskNames.length;
  const raw = new Float64Array(k);
  if (weights === undefined) raw.fill(1);
  else {
    for (const [name, w] of Object.entries(weights)) {
      const j = design.taskNames.indexOf(name);
      if (j < 0) domainError(`weights.${name}`, `names no task of the design (tasks: ${design.taskNames.join(', ')})`);
      if (!(Number.isFinite(w) && w >= 0))
        domainError(`weights.${name}`, `must be a finite non-negative number; got ${w}`);
      raw[j] = w;
    }
  }
  const total = raw.reduce((s, w) => s + w, 0);
  if (!(total > 0)) domainError('weights', 'must give at least one task a positive weight');
  const sizes = taskSizes(design);
  for (let j = 0; j < k; j++) {
    if ((raw[j] as number) > 0 && sizes[j] === 0) {
      domainError(
        weights === undefined ? 'design' : `weights.${design.taskNames[j]}`,
        `task "${design.taskNames[j]}" has no resolved units`,
      );
    }
    raw[j] = (raw[j] as number) / total;
  }
  return raw;
}

/** θ̄ = Σ_t w_t θ_t (task-macro mean by default). */
export function thetaBar(
  design: PairedDesign,
  reference: string,
  target: string,
  sham: string,
  weights?: Readonly<Record<string, number>>,
): number {
  const w = taskWeights(design, weights);
  const per = taskThetas(design, reference, target, sham);
  let s = 0;
  for (let j = 0; j < per.length; j++) {
    if ((w[j] as number) > 0) s += (w[j] as number) * (per[j] as TaskTheta).theta;
  }
  return s;
}

/**
 * The per-unit integer contribution whose mean is the (pooled) estimand:
 * successRate → Y_X ∈ {0,1}; D → Y_A − Y_X ∈ {−1,0,1}; rho → |Y_A − Y_X| ∈ {0,1};
 * theta and thetaBar → f_T − f_S ∈ {−1,0,1} (θ̄ then weights task means).
 */
export function unitContributions(design: PairedDesign, estimand: Estimand): Int8Array {
  const out = new Int8Array(design.n);
  switch (estimand.kind) {
    case 'successRate': {
      const y = resolvedOutcomes(design, estimand.condition);
      for (let i = 0; i < design.n; i++) out[i] = y[i] as number;
      return out;
    }
    case 'D':
    case 'rho': {
      const a = resolvedOutcomes(design, estimand.reference, 'reference');
      const x = resolvedOutcomes(design, estimand.intervention, 'intervention');
      const abs = estimand.kind === 'rho';
      for (let i = 0; i < design.n; i++) {
        const d = (a[i] as number) - (x[i] as number);
        out[i] = abs ? Math.abs(d) : d;
      }
      return out;
    }
    case 'theta':
    case 'thetaBar': {
      const a = resolvedOutcomes(design, estimand.reference, 'reference');
      const t = resolvedOutcomes(design, estimand.target, 'target');
      const s = resolvedOutcomes(design, estimand.sham, 'sham');
      for (let i = 0; i < design.n; i++) {
        out[i] = ((a[i] as number) ^ (t[i] as number)) - ((a[i] as number) ^ (s[i] as number));
      }
      return out;
    }
  }
}

/** The point value of any Estimand. */
export function estimate(design: PairedDesign, estimand: Estimand): number {
  switch (estimand.kind) {
    case 'successRate':
      return successRate(design, estimand.condition);
    case 'D':
      return netBenefit(design, estimand.reference, estimand.intervention);
    case 'rho':
      return outcomeChangeRate(design, estimand.reference, estimand.intervention);
    case 'theta':
      return theta(design, estimand.reference, estimand.target, estimand.sham);
    case 'thetaBar':
      return thetaBar(design, estimand.reference, estimand.target, estimand.sham, estimand.weights);
  }
}
