/**
 * The adjudication document's estimand section (adjudication.json `estimands[]`, adjudication-document.ts): cohort
 * summaries, intervals, tests and per-task θ. Schemas only; the adjudicator computes them (src/adjudication/
 * estimands.ts) and its types are these schemas' z.infer (src/adjudication/types.ts).
 *
 * Conventions (src/stats): b = reference succeeds, intervention fails; c the reverse; D = (b − c)/n; ρ = (b + c)/n;
 * θ = ρ_T − ρ_S = (b′ − c′)/n on the flip indicators; θ̄ the task-weighted θ; G = Acc_O − Acc_N. Rates are
 * proportions (0.1 = 10 pp).
 */
import { z } from 'zod';
import { BOUND_METHODS, type EstimandKind } from '../../protocol/index.js';
import type { SameMembers } from './same-members.js';

const count = z.number().int().nonnegative();
const counts = z.record(z.string(), count);

/** The estimand kinds of the protocol (src/protocol/schema-analysis.ts), checked equal at compile time below. */
export const ESTIMAND_KINDS = ['D', 'rho', 'theta', 'thetaBar', 'G', 'successRate'] as const;
const estimandKindsAgree: SameMembers<(typeof ESTIMAND_KINDS)[number], EstimandKind> = true;
void estimandKindsAgree;

export const READOUTS = ['success', 'decision'] as const;

/** How a cohort lost or kept its units (reported for every estimand). */
export const CohortSummarySchema = z.strictObject({
  wave: z.number().int(),
  /** Units with a row in every listed condition (registered attempts, competent tasks). */
  paired: count,
  /** Units present in some but not all listed conditions (e.g. a condition run at a smaller n). */
  unpaired: count,
  /**
   * Units that left the contrast because a row was 'removed' (fail-closed rule): by failure code, by the condition
   * whose row was removed (a unit removed in two conditions counts in both), and the first message of each code.
   */
  removed: z.strictObject({
    total: count,
    byCode: counts,
    byCondition: counts,
    reasons: z.record(z.string(), z.string()),
  }),
  /** The population the estimand covers, in words (units kept and removed, per condition and why). */
  population: z.string(),
  /** Units kept in the denominator with an unresolved outcome ('failed' rows, unobservable readouts). */
  unresolved: count,
  /** Units resolved in every listed condition (the n of the exact statistics). */
  resolved: count,
  excludedTasks: z.array(z.string()),
});

export const BootstrapInfoSchema = z.strictObject({
  replicates: z.number().int().positive(),
  seed: z.union([z.number(), z.string()]),
  prng: z.strictObject({ name: z.string(), version: z.number().int() }),
  resampling: z.enum(['unit', 'task-stratified', 'cluster']),
  quantileRule: z.literal('hyndman-fan-7'),
});

const bounds = z.strictObject({ lower: z.number(), upper: z.number() });

/** One interval on one estimand, labelled at the coverage of the quantity bounded. */
export const IntervalSchema = z.strictObject({
  /** `<method>/a<α>` for α-methods, `<method>/l<level>` for level-methods. */
  id: z.string(),
  method: z.enum(BOUND_METHODS),
  lower: z.number(),
  upper: z.number(),
  /** α of each one-sided component (exact Clopper–Pearson family), else null. */
  alphaPerComponent: z.number().nullable(),
  /** Level of the two-sided interval (null for the α-methods: see the labels). */
  level: z.number().nullable(),
  /** Label of the interval [lower, upper]. */
  label: z.string(),
  /** Label of each bound used alone (e.g. "≥90% (Bonferroni, one-sided bound)"). */
  boundLabel: z.string(),
  /** A conditional bound (θ given b′ + c′), never an unconditional interval. */
  conditional: z.boolean(),
  /** The bound carries no information (e.g. b′ + c′ = 0). */
  degenerate: z.boolean(),
  /**
   * With unresolved units: the same interval over the two extreme fillings of the unresolved outcomes
   * ([min lower, max upper]); verdicts route on it. Null when every unit is resolved.
   */
  envelope: bounds.nullable(),
  bootstrap: BootstrapInfoSchema.nullable(),
});

export const TestResultSchema = z.strictObject({
  /** e.g. `mcnemar-exact/two-sided`, `mcnemar-exact/greater` (on b, c; on b′, c′ for θ). */
  id: z.string(),
  p: z.number(),
});

export const TaskThetaSchema = z.strictObject({
  task: z.string(),
  n: count,
  bPrime: count,
  cPrime: count,
  theta: z.number().nullable(),
  weight: z.number(),
});

export const EstimandConditionsSchema = z.strictObject({
  reference: z.string().optional(),
  intervention: z.string().optional(),
  target: z.string().optional(),
  sham: z.string().optional(),
  oracle: z.string().optional(),
  none: z.string().optional(),
  condition: z.string().optional(),
});

const estimandCommon = {
  id: z.string(),
  kind: z.enum(ESTIMAND_KINDS),
  readout: z.enum(READOUTS),
  conditions: EstimandConditionsSchema,
  cohort: CohortSummarySchema,
};

export const UnavailableEstimandSchema = z.strictObject({
  ...estimandCommon,
  status: z.literal('unavailable'),
  /** Conditions marked unavailable (failed conformance within their repair budget). */
  unavailable: z.array(z.string()),
  /** Why there is no number (an unavailable condition, no resolved unit, a task without units…). */
  reason: z.string(),
});

export const CountsSchema = z.strictObject({
  n: count,
  b: count.optional(),
  c: count.optional(),
  bPrime: count.optional(),
  cPrime: count.optional(),
  flipsT: count.optional(),
  flipsS: count.optional(),
  successes: count.optional(),
});

export const AvailableEstimandSchema = z.strictObject({
  ...estimandCommon,
  status: z.literal('available'),
  counts: CountsSchema,
  estimate: z.number(),
  intervals: z.array(IntervalSchema),
  tests: z.array(TestResultSchema),
  /** Identification bounds over the unresolved outcomes (not a confidence interval); null when none. */
  identification: z.strictObject({ lower: z.number(), upper: z.number(), label: z.string() }).nullable(),
  /** θ̄ only: the per-task θ_t and normalised weights. */
  perTask: z.array(TaskThetaSchema).nullable(),
});

export const EstimandResultSchema = z.discriminatedUnion('status', [
  UnavailableEstimandSchema,
  AvailableEstimandSchema,
]);
