/**
 * Intervals on one estimand by its registered method, wrapping src/stats (pure). Each interval is
 * labelled at the coverage of the quantity bounded, never at a component's:
 *   exact-cp-difference  UB = CP₊(b; α) − CP₋(c; α), LB = CP₋(b; α) − CP₊(c; α)   (D, G; θ on b′, c′ — unconditional);
 *                        on θ̄ the per-task bound at α/K, weighted (the union bound, stats/theta-bar-bound.ts)
 *   clopper-pearson      exact bounds on a proportion (ρ = (b+c)/n, a success rate), each one-sided 1 − α
 *   conditional-exact    the exact bound on θ given b′ + c′ (conditional, never unconditional)
 *   wilson / tango / newcombe   two-sided score intervals at `level`
 *   unit- / task-stratified- / cluster-bootstrap   seeded paired percentile intervals (xoshiro128** v1)
 * α-methods take `alphaPerComponent`; when only a level is registered (an equivalence criterion), α is the one
 * that makes the two-sided interval at least that level (alphaForLevel): (1 − level)/4 for the difference bound,
 * whose two-sided interval is ≥ 1 − 4α (one tail spent on each proportion), (1 − level)/2 for the
 * single-binomial bounds (≥ 1 − 2α). Level-methods take `level` (from α as 1 − 2α).
 */
import { ImepError, PRNG_NAME, PRNG_VERSION, type Seed } from '../core/index.js';
import type { BoundMethod } from '../protocol/index.js';
import {
  clopperPearsonLower,
  clopperPearsonUpper,
  conditionalThetaBound,
  decisionBound,
  discordantCounts,
  flipCounts,
  formatCoveragePercent,
  newcombe,
  pairedBootstrap,
  successCount,
  tango,
  taskThetas,
  taskWeights,
  thetaBarExactBound,
  wilson,
  type Estimand as StatsEstimand,
  type PairedDesign,
} from '../stats/index.js';
import type { BootstrapInfo, Interval } from './types.js';

export const ALPHA_METHODS: readonly BoundMethod[] = ['exact-cp-difference', 'clopper-pearson', 'conditional-exact'];
const BOOTSTRAP_METHODS: readonly BoundMethod[] = ['unit-bootstrap', 'task-stratified-bootstrap', 'cluster-bootstrap'];

export type EstimandShape = 'difference' | 'proportion-flips' | 'theta' | 'thetaBar' | 'rate';

/** Which methods apply to which estimand shapes. */
const APPLICABLE: Readonly<Record<EstimandShape, readonly BoundMethod[]>> = {
  difference: ['exact-cp-difference', 'tango', 'newcombe', ...BOOTSTRAP_METHODS],
  'proportion-flips': ['clopper-pearson', 'wilson', ...BOOTSTRAP_METHODS],
  theta: ['conditional-exact', 'exact-cp-difference', ...BOOTSTRAP_METHODS],
  thetaBar: ['exact-cp-difference', 'task-stratified-bootstrap', 'cluster-bootstrap'],
  rate: ['clopper-pearson', 'wilson', ...BOOTSTRAP_METHODS],
};

export function applicable(shape: EstimandShape, method: BoundMethod): boolean {
  return APPLICABLE[shape].includes(method);
}

export interface IntervalRequest {
  readonly method: BoundMethod;
  readonly alpha: number | null;
  readonly level: number | null;
  readonly replicates?: number;
  readonly seed?: Seed;
}

/**
 * The α per component at which an α-method's two-sided interval covers at least `level`: the exact-CP difference
 * bound (UB = CP₊(b; α) − CP₋(c; α)) is ≥ 1 − 4α two-sided, Clopper–Pearson and the conditional θ bound ≥ 1 − 2α.
 * (A level of 0.90 — TOST at 0.05 per side — is α = 0.025 per component for a difference, the paper's GRID-1a.)
 */
export function alphaForLevel(method: BoundMethod, level: number): number {
  // to 12 significant digits, so that a level of 0.9 gives 0.025, not 0.024999999999999994 (1 − 0.9 is inexact)
  return Number(((1 - level) / (method === 'exact-cp-difference' ? 4 : 2)).toPrecision(12));
}

/** The normalised request: α for α-methods, level for the others. */
export function normalise(req: IntervalRequest): {
  method: BoundMethod;
  alpha: number | null;
  level: number | null;
  replicates?: number;
  seed?: Seed;
} {
  if (ALPHA_METHODS.includes(req.method)) {
    const alpha = req.alpha ?? (req.level !== null ? alphaForLevel(req.method, req.level) : 0.05);
    return { method: req.method, alpha, level: null };
  }
  const level = req.level ?? (req.alpha !== null ? 1 - 2 * req.alpha : 0.95);
  return { ...req, alpha: null, level };
}

export function intervalId(req: IntervalRequest): string {
  const n = normalise(req);
  return n.alpha !== null ? `${n.method}/a${n.alpha}` : `${n.method}/l${n.level}`;
}

/** The estimand as src/stats names it, over the design's conditions. */
export interface EstimandSpec {
  readonly shape: EstimandShape;
  readonly stats: StatsEstimand;
}

type Core = Omit<Interval, 'id' | 'method' | 'envelope' | 'alphaPerComponent' | 'level'>;

const pct = (x: number): string => formatCoveragePercent(x);

function flipsOf(design: PairedDesign, spec: EstimandSpec): { x: number; n: number } {
  const s = spec.stats;
  if (s.kind === 'successRate') return { x: successCount(design, s.condition), n: design.n };
  if (s.kind === 'rho' || s.kind === 'D') {
    const { b, c, n } = discordantCounts(design, s.reference, s.intervention);
    return { x: b + c, n };
  }
  throw new ImepError('E_INTERNAL', `no proportion for ${s.kind}`);
}

function differenceCounts(
  design: PairedDesign,
  spec: EstimandSpec,
): { a: number; b: number; c: number; d: number; n: number } {
  const s = spec.stats;
  if (s.kind === 'theta') {
    // θ = p(only T flips) − p(only S flips): the same multinomial difference as D, on b′ and c′
    const f = flipCounts(design, s.reference, s.target, s.sham);
    return { a: 0, b: f.bPrime, c: f.cPrime, d: f.n - f.bPrime - f.cPrime, n: f.n };
  }
  if (s.kind !== 'D') throw new ImepError('E_INTERNAL', `not a difference: ${s.kind}`);
  const { b, c, n } = discordantCounts(design, s.reference, s.intervention);
  const ref = successCount(design, s.reference);
  const a = ref - b;
  return { a, b, c, d: n - a - b - c, n };
}

/** θ̄'s exact bound: per task the difference bound on (b′, c′) at α/K per proportion, averaged with the weights. */
function thetaBarCore(design: PairedDesign, spec: EstimandSpec, alpha: number): Core {
  const s = spec.stats;
  if (s.kind !== 'thetaBar') throw new ImepError('E_INTERNAL', 'the θ̄ bound needs θ̄');
  const w = taskWeights(design, s.weights);
  const per = taskThetas(design, s.reference, s.target, s.sham).map((t, k) => ({
    n: t.n,
    bPrime: t.bPrime,
    cPrime: t.cPrime,
    weight: w[k] as number,
  }));
  const t = thetaBarExactBound(per, alpha);
  return {
    lower: t.lower,
    upper: t.upper,
    label: t.intervalLabel,
    boundLabel: t.label,
    conditional: false,
    degenerate: false,
    bootstrap: null,
  };
}

function bootstrapCore(
  design: PairedDesign,
  spec: EstimandSpec,
  method: BoundMethod,
  level: number,
  replicates: number | undefined,
  seed: Seed | undefined,
): Core {
  if (seed === undefined || replicates === undefined) {
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `${method} needs registered replicates and a seed (protocol bootstrap or the criterion)`,
      { field: 'bootstrap' },
    );
  }
  const resampling =
    method === 'unit-bootstrap' ? 'unit' : method === 'cluster-bootstrap' ? 'cluster' : 'task-stratified';
  const r = pairedBootstrap(design, spec.stats, { level: resampling, seed, replicates, confidences: [level] });
  const iv = r.intervals[0] as { lower: number; upper: number };
  const info: BootstrapInfo = {
    replicates,
    seed,
    prng: { name: PRNG_NAME, version: PRNG_VERSION },
    resampling,
    quantileRule: 'hyndman-fan-7',
  };
  const what = resampling === 'unit' ? 'unit' : resampling === 'cluster' ? 'cluster (chain)' : 'task-stratified';
  const label = `${what} paired bootstrap ${pct(level)}% percentile (${replicates} replicates, seed ${String(seed)}, ${PRNG_NAME} v${PRNG_VERSION})`;
  return {
    lower: iv.lower,
    upper: iv.upper,
    label,
    boundLabel: `end of the ${label}`,
    conditional: false,
    degenerate: false,
    bootstrap: info,
  };
}

/** Computes one interval (without envelope) on a design whose listed conditions are all resolved. */
export function intervalOn(design: PairedDesign, spec: EstimandSpec, request: IntervalRequest): Interval {
  const req = normalise(request);
  if (!applicable(spec.shape, req.method)) {
    throw new ImepError('E_PROTOCOL_INVALID', `method ${req.method} does not apply to a ${spec.stats.kind} estimand`, {
      field: 'criteria.method',
    });
  }
  let core: Core;
  const alpha = req.alpha as number;
  const level = req.level as number;
  switch (req.method) {
    case 'exact-cp-difference': {
      if (spec.stats.kind === 'thetaBar') {
        core = thetaBarCore(design, spec, alpha);
        break;
      }
      const { b, c, n } = differenceCounts(design, spec);
      const d = decisionBound(b, c, n, alpha);
      core = {
        lower: d.lower,
        upper: d.upper,
        label: d.intervalLabel,
        boundLabel: d.label,
        conditional: false,
        degenerate: false,
        bootstrap: null,
      };
      break;
    }
    case 'clopper-pearson': {
      const { x, n } = flipsOf(design, spec);
      core = {
        lower: clopperPearsonLower(x, n, alpha),
        upper: clopperPearsonUpper(x, n, alpha),
        label: `≥${pct(Math.max(0, 1 - 2 * alpha))}% (exact Clopper–Pearson, two-sided interval, α = ${alpha} per tail)`,
        boundLabel: `≥${pct(1 - alpha)}% (exact Clopper–Pearson, one-sided bound)`,
        conditional: false,
        degenerate: false,
        bootstrap: null,
      };
      break;
    }
    case 'conditional-exact': {
      const s = spec.stats;
      if (s.kind !== 'theta') throw new ImepError('E_INTERNAL', 'conditional-exact needs θ');
      const f = flipCounts(design, s.reference, s.target, s.sham);
      const t = conditionalThetaBound(f.bPrime, f.cPrime, f.n, alpha);
      core = {
        lower: t.lower,
        upper: t.upper,
        label: t.label,
        boundLabel: t.label,
        conditional: true,
        degenerate: t.degenerate,
        bootstrap: null,
      };
      break;
    }
    case 'wilson': {
      const { x, n } = flipsOf(design, spec);
      const [lo, hi] = wilson(x, n, level);
      core = {
        lower: lo,
        upper: hi,
        label: `Wilson ${pct(level)}% (two-sided score interval)`,
        boundLabel: `end of the Wilson ${pct(level)}% interval`,
        conditional: false,
        degenerate: false,
        bootstrap: null,
      };
      break;
    }
    case 'tango': {
      const { b, c, n } = differenceCounts(design, spec);
      const t = tango(b, c, n, level);
      core = {
        lower: t.interval[0],
        upper: t.interval[1],
        label: `Tango ${pct(level)}% (paired score interval)`,
        boundLabel: `end of the Tango ${pct(level)}% interval`,
        conditional: false,
        degenerate: false,
        bootstrap: null,
      };
      break;
    }
    case 'newcombe': {
      const { a, b, c, d } = differenceCounts(design, spec);
      const t = newcombe({ a, b, c, d }, level);
      core = {
        lower: t.interval[0],
        upper: t.interval[1],
        label: `Newcombe ${pct(level)}% (paired square-and-add, method 10)`,
        boundLabel: `end of the Newcombe ${pct(level)}% interval`,
        conditional: false,
        degenerate: false,
        bootstrap: null,
      };
      break;
    }
    default:
      core = bootstrapCore(design, spec, req.method, level, req.replicates, req.seed);
  }
  return {
    id: intervalId(request),
    method: req.method,
    alphaPerComponent: req.alpha,
    level: req.level,
    envelope: null,
    ...core,
  };
}
