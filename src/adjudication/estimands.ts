/**
 * Every registered estimand on its joint cohort, with its registered interval methods (wrapping
 * src/stats): counts (b, c; b′, c′; successes), the point estimate on the resolved units, the intervals
 * (registered by the criteria, plus each kind's defaults), exact McNemar tests, identification bounds
 * when units are unresolved, and θ̄'s per-task table.
 *
 * Defaults per kind: D and G — exact decision bound (α = 0.05 per component) and Tango 95%; ρ —
 * Clopper–Pearson with each bound one-sided 95% and the two-sided 95% interval; θ — the conditional
 * exact bound (α = 0.05); θ̄ — the registered bootstrap at 95%; success rate — Wilson 95% and
 * Clopper–Pearson 95%. A criterion's companion estimand (aboveUpperBoundOf) also gets the criterion's
 * method when it applies, else its kind's exact method at the criterion's α.
 */
import { ImepError, isImepError } from '../core/index.js';
import type { Seed } from '../core/index.js';
import type { BoundMethod, Criterion, Estimand, Protocol } from '../protocol/index.js';
import {
  armBounds,
  contrastBounds,
  discordantCounts,
  estimate as statsEstimate,
  flipCounts,
  IDENTIFICATION_LABEL,
  mcnemarExact,
  pairedDesign,
  successCount,
  taskThetas,
  taskWeights,
  thetaBar,
  type PairedDesign,
} from '../stats/index.js';
import { extremeFill, type Contribution } from './fills.js';
import {
  alphaForLevel,
  intervalId,
  intervalOn,
  applicable,
  normalise,
  type EstimandShape,
  type EstimandSpec,
  type IntervalRequest,
} from './intervals.js';
import type { CohortUnit, RowIndex } from './joint-cohort.js';
import type {
  AvailableEstimand,
  Counts,
  EstimandConditions,
  EstimandResult,
  Interval,
  Readout,
  TaskTheta,
  TestResult,
} from './types.js';

interface Anatomy {
  readonly conditions: string[];
  readonly named: EstimandConditions;
  readonly spec: EstimandSpec;
  readonly contribution: Contribution;
  readonly readout: Readout;
}

export function anatomy(e: Estimand): Anatomy {
  const readout: Readout = e.readout ?? (e.kind === 'G' ? 'decision' : 'success');
  switch (e.kind) {
    case 'D':
    case 'rho': {
      const { reference: r, intervention: x } = e;
      const shape: EstimandShape = e.kind === 'D' ? 'difference' : 'proportion-flips';
      return {
        conditions: [r, x],
        named: { reference: r, intervention: x },
        spec: { shape, stats: { kind: e.kind, reference: r, intervention: x } },
        contribution:
          e.kind === 'D'
            ? (o) => (o[r] as number) - (o[x] as number)
            : (o) => Math.abs((o[r] as number) - (o[x] as number)),
        readout,
      };
    }
    case 'G':
      return {
        conditions: [e.oracle, e.none],
        named: { oracle: e.oracle, none: e.none },
        spec: { shape: 'difference', stats: { kind: 'D', reference: e.oracle, intervention: e.none } },
        contribution: (o) => (o[e.oracle] as number) - (o[e.none] as number),
        readout,
      };
    case 'theta':
    case 'thetaBar': {
      const { reference: a, T: t, S: s } = e;
      const flip: Contribution = (o) => ((o[a] as number) ^ (o[t] as number)) - ((o[a] as number) ^ (o[s] as number));
      const stats =
        e.kind === 'theta'
          ? ({ kind: 'theta', reference: a, target: t, sham: s } as const)
          : ({
              kind: 'thetaBar',
              reference: a,
              target: t,
              sham: s,
              ...(e.weights ? { weights: e.weights } : {}),
            } as const);
      return {
        conditions: [a, t, s],
        named: { reference: a, target: t, sham: s },
        spec: { shape: e.kind, stats },
        contribution: flip,
        readout,
      };
    }
    case 'successRate':
      return {
        conditions: [e.condition],
        named: { condition: e.condition },
        spec: { shape: 'rate', stats: { kind: 'successRate', condition: e.condition } },
        contribution: (o) => o[e.condition] as number,
        readout,
      };
  }
}

function bootstrapDefaults(protocol: Protocol): { replicates?: number; seed?: Seed } {
  return protocol.bootstrap ? { replicates: protocol.bootstrap.replicates, seed: protocol.bootstrap.seed } : {};
}

function defaultBootstrapMethod(protocol: Protocol): 'task-stratified-bootstrap' | 'cluster-bootstrap' {
  return protocol.bootstrap?.level === 'cluster' ? 'cluster-bootstrap' : 'task-stratified-bootstrap';
}

/** The interval request a criterion registers on its own estimand. */
export function criterionRequest(c: Criterion, protocol: Protocol): IntervalRequest | null {
  if (c.rule === 'p-below' || c.rule === 'point-below') return null;
  const boot = bootstrapDefaults(protocol);
  if (c.rule === 'equivalence') {
    return {
      method: c.method,
      alpha: null,
      level: c.level,
      replicates: c.replicates ?? boot.replicates,
      seed: c.seed ?? boot.seed,
    } as IntervalRequest;
  }
  return { method: c.method, alpha: c.alphaPerComponent ?? null, level: c.level ?? null, ...boot } as IntervalRequest;
}

/**
 * Whether a conditional-exact criterion compares its bound only with 0: there "the bound lies beyond 0" is
 * the exact conditional (McNemar) test of θ's sign, whose level holds for every b′ + c′ and so
 * unconditionally. Against any other threshold the conditional bound — which plugs the observed m/n in for
 * the unknown discordance — has no unconditional coverage, and the criterion routes on the unconditional
 * exact bound instead (routingRequest).
 */
export function conditionalDecidesAlone(c: Criterion): boolean {
  if (c.rule === 'lower-bound-above') return c.margin === 0 && (c.aboveUpperBoundOf ?? []).length === 0;
  if (c.rule === 'upper-bound-below') return c.margin === 0;
  return false;
}

/** The unconditional exact bound on θ replacing a conditional one at α per endpoint: CP(b′; n, α/2) − CP(c′; n, α/2). */
export function unconditionalThetaRequest(alphaPerEndpoint: number): IntervalRequest {
  return { method: 'exact-cp-difference', alpha: Number((alphaPerEndpoint / 2).toPrecision(12)), level: null };
}

/**
 * The interval a criterion's verdict routes on: its registered interval, except a conditional-exact bound
 * compared with a non-zero threshold, which routes on the unconditional exact bound on θ at the same level
 * per endpoint (Bonferroni over b′/n and c′/n at α/2 each: each end one-sided ≥ 1 − α).
 */
export function routingRequest(c: Criterion, protocol: Protocol): IntervalRequest | null {
  const r = criterionRequest(c, protocol);
  if (r === null || r.method !== 'conditional-exact' || conditionalDecidesAlone(c)) return r;
  return unconditionalThetaRequest(normalise(r).alpha as number);
}

/**
 * The exact bound that must confirm a verdict routed on an approximate interval (a score interval or a
 * bootstrap), at the same stated one-sided level: Clopper–Pearson at (1 − level)/2 for a proportion, the
 * exact difference bound at (1 − level)/4 per proportion for D, G and θ (over b′, c′), and for θ̄ the same
 * bound per task at (1 − level)/(4K), averaged with the registered weights (the union bound over the K
 * tasks: stats/theta-bar-bound.ts). A word the two do not share is unresolved, so the verdict's error is at
 * most the exact method's. Null for an exact method.
 */
export function exactConfirmation(c: Criterion, shape: EstimandShape, protocol: Protocol): IntervalRequest | null {
  const r = criterionRequest(c, protocol);
  if (r === null || ALPHA_METHOD_SET.has(r.method)) return null;
  const level = normalise(r).level as number;
  if (shape === 'proportion-flips' || shape === 'rate')
    return { method: 'clopper-pearson', alpha: alphaForLevel('clopper-pearson', level), level: null };
  return { method: 'exact-cp-difference', alpha: alphaForLevel('exact-cp-difference', level), level: null };
}

const ALPHA_METHOD_SET = new Set<BoundMethod>(['exact-cp-difference', 'clopper-pearson', 'conditional-exact']);

/** The interval a criterion reads on a companion estimand (aboveUpperBoundOf). */
export function companionRequest(shape: EstimandShape, c: Criterion, protocol: Protocol): IntervalRequest {
  const req = ownOrExactCompanion(shape, c, protocol);
  // a conditional upper bound on θ is no floor: the companion reads the unconditional exact bound
  return req.method === 'conditional-exact' ? unconditionalThetaRequest(normalise(req).alpha as number) : req;
}

function ownOrExactCompanion(shape: EstimandShape, c: Criterion, protocol: Protocol): IntervalRequest {
  const own = criterionRequest(c, protocol);
  if (own !== null && applicable(shape, own.method)) return own;
  const bounded = c.rule === 'lower-bound-above' || c.rule === 'upper-bound-below';
  const registeredAlpha = bounded ? c.alphaPerComponent : undefined;
  const level = bounded ? c.level : undefined;
  // the companion's α per component: the criterion's own, else the one that covers its level by this method
  const alphaFor = (method: BoundMethod): number =>
    registeredAlpha ?? (level !== undefined ? alphaForLevel(method, level) : 0.05);
  switch (shape) {
    case 'difference':
      return { method: 'exact-cp-difference', alpha: alphaFor('exact-cp-difference'), level: null };
    case 'proportion-flips':
    case 'rate':
      return { method: 'clopper-pearson', alpha: alphaFor('clopper-pearson'), level: null };
    case 'theta':
      return { method: 'conditional-exact', alpha: alphaFor('conditional-exact'), level: null };
    case 'thetaBar':
      // the exact union bound over the tasks (stats/theta-bar-bound.ts), never a bootstrap
      return { method: 'exact-cp-difference', alpha: alphaFor('exact-cp-difference'), level: null };
  }
}

export function defaultRequests(shape: EstimandShape, protocol: Protocol): IntervalRequest[] {
  switch (shape) {
    case 'difference':
      return [
        { method: 'exact-cp-difference', alpha: 0.05, level: null },
        { method: 'tango', alpha: null, level: 0.95 },
      ];
    case 'proportion-flips':
      return [
        { method: 'clopper-pearson', alpha: 0.05, level: null },
        { method: 'clopper-pearson', alpha: 0.025, level: null },
      ];
    case 'theta':
      // the conditional exact bound, and the unconditional exact bound at the same level per endpoint
      return [{ method: 'conditional-exact', alpha: 0.05, level: null }, unconditionalThetaRequest(0.05)];
    case 'thetaBar': {
      const boot = bootstrapDefaults(protocol);
      return boot.seed === undefined
        ? []
        : [{ method: defaultBootstrapMethod(protocol), alpha: null, level: 0.95, ...boot } as IntervalRequest];
    }
    case 'rate':
      return [
        { method: 'wilson', alpha: null, level: 0.95 },
        { method: 'clopper-pearson', alpha: 0.025, level: null },
      ];
  }
}

/** All interval requests of one estimand (deduplicated by id, in a fixed order). */
export function requestsFor(e: Estimand, protocol: Protocol): IntervalRequest[] {
  const shape = anatomy(e).spec.shape;
  const out = new Map<string, IntervalRequest>();
  const add = (r: IntervalRequest): void => {
    const id = intervalId(r);
    if (!out.has(id)) out.set(id, r);
  };
  for (const r of defaultRequests(shape, protocol)) add(r);
  for (const c of protocol.criteria) {
    if (c.estimand === e.id) {
      const r = criterionRequest(c, protocol);
      if (r !== null) add(r);
      const routed = routingRequest(c, protocol);
      if (routed !== null) add(routed);
      const exact = exactConfirmation(c, shape, protocol);
      if (exact !== null) add(exact);
    }
    if (c.rule === 'lower-bound-above' && c.aboveUpperBoundOf?.includes(e.id)) {
      add(companionRequest(shape, c, protocol));
      // the exact floor that confirms an approximate criterion's word (verdicts.ts route)
      const exact = exactConfirmation(c, shape, protocol);
      if (exact !== null) add(exact);
    }
  }
  return [...out.values()];
}

function designOver(
  units: readonly CohortUnit[],
  conditions: readonly string[],
  tasks: readonly string[],
): PairedDesign {
  const outcomes: Record<string, (0 | 1)[]> = {};
  for (const c of conditions) outcomes[c] = units.map((u) => u.outcomes[c] as 0 | 1);
  return pairedDesign({
    outcomes,
    tasks: { names: tasks, index: units.map((u) => tasks.indexOf(u.task)) },
    clusters: units.map((u) => `${u.task}\u001f${u.seed}`),
  });
}

function countsOf(design: PairedDesign, spec: EstimandSpec): Counts {
  const s = spec.stats;
  switch (s.kind) {
    case 'D':
    case 'rho': {
      const { b, c, n } = discordantCounts(design, s.reference, s.intervention);
      return { n, b, c };
    }
    case 'theta':
    case 'thetaBar': {
      const f = flipCounts(design, s.reference, s.target, s.sham);
      return { n: f.n, bPrime: f.bPrime, cPrime: f.cPrime, flipsT: f.flipsT, flipsS: f.flipsS };
    }
    case 'successRate':
      return { n: design.n, successes: successCount(design, s.condition) };
  }
}

function testsOf(kind: Estimand['kind'], counts: Counts): TestResult[] {
  if (kind === 'rho' || kind === 'successRate') return [];
  const pair =
    counts.b !== undefined && counts.c !== undefined
      ? [counts.b, counts.c]
      : counts.bPrime !== undefined && counts.cPrime !== undefined
        ? [counts.bPrime, counts.cPrime]
        : null;
  if (pair === null) return [];
  const [x, y] = pair as [number, number];
  return [
    { id: 'mcnemar-exact/two-sided', p: mcnemarExact(x, y, 'two-sided') },
    { id: 'mcnemar-exact/greater', p: mcnemarExact(x, y, 'greater') },
  ];
}

function identificationOf(
  e: Estimand,
  a: Anatomy,
  units: readonly CohortUnit[],
  tasks: readonly string[],
): AvailableEstimand['identification'] {
  const arm = (c: string) => armBounds(units.map((u) => ({ outcomes: [u.outcomes[c] ?? null] })));
  if (e.kind === 'successRate') {
    const b = arm(e.condition);
    return { lower: b.lower, upper: b.upper, label: IDENTIFICATION_LABEL };
  }
  if (e.kind === 'D' || e.kind === 'G') {
    const [x, y] = a.conditions as [string, string];
    const b = contrastBounds(arm(x), arm(y));
    return { lower: b.lower, upper: b.upper, label: IDENTIFICATION_LABEL };
  }
  const lo = designOver(extremeFill(units, a.conditions, a.contribution, 'min'), a.conditions, tasks);
  const hi = designOver(extremeFill(units, a.conditions, a.contribution, 'max'), a.conditions, tasks);
  return {
    lower: statsEstimate(lo, a.spec.stats),
    upper: statsEstimate(hi, a.spec.stats),
    label: IDENTIFICATION_LABEL,
  };
}

function perTaskOf(design: PairedDesign, spec: EstimandSpec): TaskTheta[] | null {
  const s = spec.stats;
  if (s.kind !== 'thetaBar') return null;
  const w = taskWeights(design, s.weights);
  return taskThetas(design, s.reference, s.target, s.sham).map((t, k) => ({
    task: t.task,
    n: t.n,
    bPrime: t.bPrime,
    cPrime: t.cPrime,
    theta: Number.isNaN(t.theta) ? null : t.theta,
    weight: w[k] as number,
  }));
}

export interface EstimandContext {
  readonly protocol: Protocol;
  readonly index: RowIndex;
  readonly excludedTasks: ReadonlySet<string>;
}

/**
 * The tasks an estimand leaves out: those excluded by competence, and for an estimand restricted to one task
 * (`task`, e.g. a suite's `D_N@RememberColor3-VLA`) every other task (its cohort lists them as excluded).
 */
export function onlyTask(
  tasks: readonly string[],
  excluded: ReadonlySet<string>,
  task: string | undefined,
): ReadonlySet<string> {
  return task === undefined ? excluded : new Set([...excluded, ...tasks.filter((t) => t !== task)]);
}

/** One estimand on its joint cohort (on its task's units when it names one). */
export function computeEstimand(e: Estimand, ctx: EstimandContext): EstimandResult {
  const a = anatomy(e);
  const excluded = onlyTask(ctx.index.tasks, ctx.excludedTasks, e.task);
  const cohort = ctx.index.cohort(a.conditions, a.readout, excluded, `estimands.${e.id}`);
  const common = { id: e.id, kind: e.kind, readout: a.readout, conditions: a.named, cohort: cohort.summary };
  if (cohort.status === 'unavailable') {
    return {
      ...common,
      status: 'unavailable',
      unavailable: cohort.unavailable,
      reason: `condition ${cohort.unavailable.join(', ')} unavailable`,
    };
  }
  const tasks = ctx.index.tasks.filter((t) => !excluded.has(t));
  const units = cohort.units;
  const resolvedUnits = units.filter((u) => a.conditions.every((c) => u.outcomes[c] !== null));
  if (resolvedUnits.length === 0) {
    return { ...common, status: 'unavailable', unavailable: [], reason: 'no resolved paired unit' };
  }
  try {
    const design = designOver(resolvedUnits, a.conditions, tasks);
    const counts = countsOf(design, a.spec);
    const point =
      e.kind === 'thetaBar' ? thetaBar(design, e.reference, e.T, e.S, e.weights) : statsEstimate(design, a.spec.stats);
    const unresolved = cohort.summary.unresolved > 0;
    const lowFill = unresolved
      ? designOver(extremeFill(units, a.conditions, a.contribution, 'min'), a.conditions, tasks)
      : null;
    const highFill = unresolved
      ? designOver(extremeFill(units, a.conditions, a.contribution, 'max'), a.conditions, tasks)
      : null;
    const intervals: Interval[] = requestsFor(e, ctx.protocol).map((req) => {
      const iv = intervalOn(design, a.spec, req);
      if (lowFill === null || highFill === null) return iv;
      const lo = intervalOn(lowFill, a.spec, req);
      const hi = intervalOn(highFill, a.spec, req);
      return { ...iv, envelope: { lower: Math.min(lo.lower, hi.lower), upper: Math.max(lo.upper, hi.upper) } };
    });
    return {
      ...common,
      status: 'available',
      counts,
      estimate: point,
      intervals,
      tests: testsOf(e.kind, counts),
      identification: unresolved ? identificationOf(e, a, units, tasks) : null,
      perTask: perTaskOf(design, a.spec),
    };
  } catch (err) {
    if (isImepError(err) && err.code === 'E_STATS_DOMAIN') {
      return { ...common, status: 'unavailable', unavailable: [], reason: `${err.field ?? 'design'}: ${err.message}` };
    }
    throw err;
  }
}

export function computeEstimands(ctx: EstimandContext): EstimandResult[] {
  return ctx.protocol.estimands.map((e) => computeEstimand(e, ctx));
}

/** The interval with `id` on an available estimand (E_INTERNAL if it was not computed). */
export function findInterval(e: AvailableEstimand, id: string): Interval {
  const iv = e.intervals.find((i) => i.id === id);
  if (iv === undefined) throw new ImepError('E_INTERNAL', `interval ${id} was not computed on ${e.id}`);
  return iv;
}
