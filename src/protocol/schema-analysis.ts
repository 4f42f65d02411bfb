/**
 * The registered analysis: estimands (named as in the paper and src/stats/estimands.ts), criteria
 * (the frozen decision rules: bound against margin, equivalence, test), Holm families, the bootstrap
 * and the frozen power analysis (MDE).
 *
 * Conventions (src/stats): D = (b − c)/n, positive when the intervention lowers success; ρ = (b + c)/n;
 * θ = ρ_T − ρ_S; θ̄ the task-weighted mean of θ. Margins are in rate units (0.10 = 10 pp).
 * `alphaPerComponent` is the α of each one-sided component bound (exact Clopper–Pearson family: a bound
 * on a difference spends one tail per proportion); `level` is the level of a two-sided interval
 * (Wilson, Newcombe, Tango, bootstrap). Which one a method takes is checked in cross-check.ts.
 */
import { z } from 'zod';
import {
  Alpha,
  AnalysisId,
  AnalysisIdList,
  Ident,
  Level,
  Margin,
  NonEmptyText,
  NonNegativeInt,
  PositiveInt,
  Rate,
  Seed,
  TaskName,
} from './schema-common.js';

const READOUTS = ['success', 'decision'] as const;

const estimandCommon = {
  id: AnalysisId.describe('the estimand id, unique in the protocol (e.g. D_N)'),
  description: NonEmptyText.optional(),
  task: TaskName.optional().describe(
    "restrict the estimand to this task's units (a task name of the protocol); absent: pooled over every task",
  ),
  readout: z
    .enum(READOUTS)
    .optional()
    .describe('success (task outcome, default) or decision (first-choice correctness); never pooled'),
};

const cond = (what: string) => Ident.describe(`the condition id of ${what}`);

export const EstimandSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({
      ...estimandCommon,
      kind: z.literal('D').describe('D = (b − c)/n = SR_reference − SR_intervention'),
      reference: cond('the reference'),
      intervention: cond('the intervention'),
    }),
    z.strictObject({
      ...estimandCommon,
      kind: z.literal('rho').describe('ρ = (b + c)/n, the outcome-change rate'),
      reference: cond('the reference'),
      intervention: cond('the intervention'),
    }),
    z.strictObject({
      ...estimandCommon,
      kind: z.literal('theta').describe('θ = ρ_T − ρ_S against a common reference'),
      T: cond('the different-fact (target) substitution: kind T or T_mu'),
      S: cond('the same-fact (sham) substitution: kind S or S_pi'),
      reference: cond('the reference (kind A)'),
    }),
    z.strictObject({
      ...estimandCommon,
      kind: z.literal('thetaBar').describe('θ̄ = Σ_t w_t θ_t over tasks (default equal weights)'),
      T: cond('the different-fact substitution: kind T or T_mu'),
      S: cond('the same-fact substitution: kind S or S_pi'),
      reference: cond('the reference (kind A)'),
      weights: z
        .record(z.string(), z.number().min(0))
        .optional()
        .describe('relative task weights by task name; default equal'),
    }),
    z.strictObject({
      ...estimandCommon,
      kind: z.literal('G').describe('G = Acc_O − Acc_N, the information requirement (decision readout)'),
      oracle: cond('the oracle (kind O)'),
      none: cond('the no-access condition (kind N)'),
    }),
    z.strictObject({
      ...estimandCommon,
      kind: z.literal('successRate').describe('the success rate of one condition'),
      condition: cond('the condition'),
    }),
  ])
  .describe('an estimand: { id, kind: D | rho | theta | thetaBar | G | successRate, …its conditions }');

export const BOUND_METHODS = [
  'exact-cp-difference',
  'clopper-pearson',
  'conditional-exact',
  'wilson',
  'newcombe',
  'tango',
  'unit-bootstrap',
  'task-stratified-bootstrap',
  'cluster-bootstrap',
] as const;
export type BoundMethod = (typeof BOUND_METHODS)[number];
/** Methods whose bound is built from one-sided components at α each (take alphaPerComponent). */
export const ALPHA_METHODS: readonly BoundMethod[] = ['exact-cp-difference', 'clopper-pearson', 'conditional-exact'];

const Method = z.enum(BOUND_METHODS).describe(`the bound method: ${BOUND_METHODS.join(', ')}`);

const criterionCommon = {
  id: AnalysisId.describe('the criterion id, unique in the protocol (e.g. Q1)'),
  estimand: AnalysisId.describe('the id of the estimand this criterion decides on'),
  question: z.enum(['Q1', 'Q2', 'Q3', 'Q4']).optional().describe('the IMEP question the criterion answers'),
  role: z
    .enum(['primary', 'secondary', 'materiality', 'eligibility'])
    .default('primary')
    .describe('primary verdict, secondary, a materiality line, or an in-run eligibility check'),
  description: NonEmptyText.optional(),
};

const boundCommon = {
  ...criterionCommon,
  method: Method,
  alphaPerComponent: Alpha.optional(),
  level: Level.optional(),
};

export const CriterionSchema = z
  .discriminatedUnion('rule', [
    z.strictObject({
      ...boundCommon,
      rule: z
        .literal('upper-bound-below')
        .describe(
          'claim: the estimand lies below the margin. holds when the upper bound lies below the margin; not detected when the lower bound lies above it; else unresolved',
        ),
      margin: Margin,
    }),
    z.strictObject({
      ...boundCommon,
      rule: z
        .literal('lower-bound-above')
        .describe(
          'claim: the estimand exceeds the margin (and every listed upper bound). holds when the lower bound lies above them; not detected when the upper bound lies below the margin; else unresolved',
        ),
      margin: Margin,
      aboveUpperBoundOf: AnalysisIdList.optional().describe(
        'estimands whose upper bound the lower bound must also exceed (e.g. the exact-repeat floor ρ_C, or ρ_U)',
      ),
      minDiscordant: PositiveInt.optional().describe(
        'registered floor on b′ + c′ for the conditional exact θ bound (e.g. 8): below it, unresolved',
      ),
      expandToN: PositiveInt.optional().describe('the registered expansion of n when the discordance floor is missed'),
    }),
    z.strictObject({
      ...criterionCommon,
      rule: z
        .literal('equivalence')
        .describe(
          'claim: the estimand lies within ±margin. holds when the two-sided interval lies strictly inside; not detected when it lies wholly outside; else unresolved',
        ),
      margin: z.number().gt(0).max(1).describe('the equivalence margin in rate units (0.075 = ±7.5 pp)'),
      level: Level,
      method: Method,
      replicates: PositiveInt.optional().describe('bootstrap replicates (default: bootstrap.replicates)'),
      seed: Seed.optional().describe('bootstrap seed (default: bootstrap.seed)'),
    }),
    z.strictObject({
      ...criterionCommon,
      rule: z
        .literal('p-below')
        .describe(
          'claim: the exact test rejects. holds when p lies below alpha, else unresolved (a test without a margin excludes no effect)',
        ),
      test: z.enum(['mcnemar-exact']).describe('the paired test'),
      direction: z
        .enum(['greater', 'less', 'two-sided'])
        .describe('alternative: greater (intervention lowers success, b > c), less, or two-sided'),
      alpha: z.number().gt(0).lt(1).describe('the significance level'),
    }),
    z.strictObject({
      ...criterionCommon,
      rule: z
        .literal('point-below')
        .describe(
          'a registered point check (eligibility), no error control: holds when the point estimate lies below that of another estimand, else not detected',
        ),
      than: AnalysisId.describe('the estimand whose point estimate must be larger'),
    }),
  ])
  .describe('a registered criterion: { id, estimand, rule, …margin, α, method }');

export const HolmFamilySchema = z
  .strictObject({
    id: Ident.describe('the family id'),
    contrasts: AnalysisIdList.describe('estimand ids (kind D or theta) tested together, each by an exact McNemar test'),
    alpha: z.number().gt(0).lt(1).default(0.05).describe('family-wise α'),
    test: z.enum(['mcnemar-exact-two-sided', 'mcnemar-exact-one-sided']).default('mcnemar-exact-two-sided'),
    repairBudget: NonNegativeInt.default(0).describe(
      'repairs allowed to pass the pre-evaluation conformance check; a condition still failing is unavailable',
    ),
    onUnavailable: z
      .literal('stay-at-p-1')
      .default('stay-at-p-1')
      .describe('an unavailable contrast stays in its family at p = 1 (never dropped)'),
  })
  .describe('a Holm family: named contrasts adjusted together');

export const BootstrapSchema = z
  .strictObject({
    replicates: z.number().int().min(100).describe('bootstrap replicates (e.g. 10000)'),
    seed: Seed,
    level: z.enum(['unit', 'task-stratified', 'cluster']).default('task-stratified').describe('the resampling level'),
  })
  .describe('the registered bootstrap: replicates, seed, level');

export const MdeSchema = z
  .strictObject({
    estimand: AnalysisId.optional().describe('the estimand the power analysis is for'),
    inputs: z.strictObject({
      test: z.enum(['mcnemar-one-sided', 'mcnemar-two-sided']),
      alpha: z.number().gt(0).lt(1),
      power: z.number().gt(0).lt(1).describe('target power (e.g. 0.8)'),
      n: PositiveInt,
      assumedDiscordance: z
        .array(Rate)
        .min(1)
        .describe('assumed discordance rates (b + c)/n, one row of the table each'),
      method: z.enum(['exact', 'monte-carlo']),
      replicates: PositiveInt.optional(),
      seed: Seed.optional(),
    }),
    outputs: z
      .array(
        z.strictObject({
          assumedDiscordance: Rate,
          effect: z.number().min(0).max(1).nullable().describe('the minimum detectable effect, null when unreachable'),
          achievedPower: Rate.optional(),
        }),
      )
      .describe('the frozen MDE table, one row per assumed discordance'),
  })
  .describe('the frozen power analysis: inputs and outputs');

export type Estimand = z.infer<typeof EstimandSchema>;
export type EstimandKind = Estimand['kind'];
export type Criterion = z.infer<typeof CriterionSchema>;
export type HolmFamily = z.infer<typeof HolmFamilySchema>;
export type BootstrapConfig = z.infer<typeof BootstrapSchema>;
export type Mde = z.infer<typeof MdeSchema>;
