/**
 * Gates (checks a run must pass before its numbers count), go/no-go rules (which downgrade a
 * campaign to descriptive) and the execution-failure policy.
 *
 * Every gate says whether it is hard and what failing it does: `exclude` (the cell leaves the
 * analysis, e.g. competence), `invalid` (the number is withheld, e.g. path/wiring), `descriptive`
 * (the campaign reports without verdicts) or `warn`. The paper's rule: a cell failing competence is
 * excluded; one failing path or wiring is invalid.
 */
import { z } from 'zod';
import {
  Alpha,
  AnalysisId,
  Ident,
  IdentList,
  Level,
  NonEmptyText,
  NonNegativeInt,
  PositiveInt,
  Rate,
} from './schema-common.js';

const gateCommon = {
  id: Ident.describe('the gate id, unique in the protocol'),
  hard: z.boolean().describe('true: failing it stops verdicts (see onFail); false: recorded only'),
  onFail: z
    .enum(['exclude', 'invalid', 'descriptive', 'warn'])
    .describe('what failing does: exclude, invalid, descriptive or warn'),
  description: NonEmptyText.optional(),
};

export const GateSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({
      ...gateCommon,
      kind: z.literal('competence').describe('the reference condition succeeds often enough in every cell'),
      condition: Ident.describe('the reference condition'),
      minSuccess: Rate.optional().describe('floor on the point success rate'),
      wilsonLowerAbove: Rate.optional().describe(
        'the Wilson lower bound must exceed this (e.g. 1/3, the analytic floor)',
      ),
      level: Level.default(0.95).describe('level of the Wilson interval'),
    }),
    z.strictObject({
      ...gateCommon,
      kind: z.literal('path').describe('path/wiring: scheduled reads happen where expected and are empty where forced'),
      reads: IdentList.describe('conditions whose scheduled memory reads must occur'),
      emptyReads: IdentList.optional().describe('conditions whose every read must return empty (kind N)'),
    }),
    z.strictObject({
      ...gateCommon,
      kind: z.literal('replicate').describe('the exact replicate changes at most maxChanged outcomes'),
      condition: Ident.describe('the replicate condition (kind C)'),
      reference: Ident.describe('the condition it replicates'),
      maxChanged: NonNegativeInt.default(0),
    }),
    z.strictObject({
      ...gateCommon,
      kind: z.literal('survival').describe('G_surv: substituted content reaches every decision query'),
      conditions: IdentList.describe('substituting conditions (U, S, T, S_pi, T_mu)'),
      minCoverage: z.number().gt(0).max(1).default(1).describe('required coverage (1 = every unit)'),
    }),
    z.strictObject({
      ...gateCommon,
      kind: z.literal('clock').describe('clearing keeps the scope’s query clock'),
      conditions: IdentList,
    }),
    z.strictObject({
      ...gateCommon,
      kind: z.literal('candidate').describe('installation preserves candidate and selected counts at the first query'),
      conditions: IdentList,
    }),
    z.strictObject({
      ...gateCommon,
      kind: z
        .literal('sham-validity')
        .describe('the sham actually acts: it flips outcomes and substitutes every read with history'),
      sham: Ident.describe('the sham condition (kind S or S_pi)'),
      minFlips: NonNegativeInt.default(1).describe('the sham must flip at least this many outcomes'),
      substitutionFraction: z.strictObject({
        min: Rate.describe('required fraction of substituted reads'),
        denominator: z
          .enum(['reads-with-history', 'all-reads'])
          .describe(
            'reads-with-history: reads that retrieve at least one record (an empty read cannot be substituted)',
          ),
      }),
      requireContentChange: z
        .boolean()
        .default(true)
        .describe('every applied substitution must change the content digest'),
    }),
    z.strictObject({
      ...gateCommon,
      kind: z
        .literal('read-canary')
        .describe(
          'the read path is exercised: reads returning known-wrong content (the canary) change the policy’s outcomes',
        ),
      canary: Ident.describe(
        'the canary condition: its reads return wrong content (kind T: a different-fact donor; S_pi or T_mu: a scrambled latent)',
      ),
      minChanged: PositiveInt.default(1).describe('outcomes the canary must change against its wave anchor'),
      guards: IdentList.describe(
        'conditions whose estimands are withheld (invalid) when the canary changes too few outcomes: the read interventions',
      ),
    }),
    z.strictObject({
      ...gateCommon,
      kind: z.literal('empty-read').describe('empty reads match their prediction'),
      conditions: IdentList,
      rule: z
        .enum(['identical-positions', 'predicted-count'])
        .describe(
          'identical-positions: same within-episode positions in every condition; predicted-count: equal to predicted',
        ),
      predicted: NonNegativeInt.optional().describe('the predicted empty-read count (rule predicted-count)'),
    }),
  ])
  .describe('a gate: { id, kind, hard, onFail, …parameters }');

export const GoNoGoSchema = z
  .discriminatedUnion('rule', [
    z.strictObject({
      rule: z.literal('min-competent-cells').describe('at least min cells pass the competence gate'),
      gate: Ident.describe('the competence gate'),
      min: PositiveInt,
      outcome: z.enum(['descriptive', 'abort']).default('descriptive'),
    }),
    z.strictObject({
      rule: z.literal('reference-success-floor').describe('the reference success rate reaches the floor'),
      condition: Ident,
      floor: Rate,
      outcome: z.enum(['descriptive', 'abort']).default('descriptive'),
    }),
    z.strictObject({
      rule: z.literal('min-discordant').describe('an estimand has at least min discordant pairs'),
      estimand: AnalysisId,
      min: PositiveInt,
      outcome: z.enum(['descriptive', 'abort']).default('descriptive'),
    }),
  ])
  .describe('a go/no-go rule: when it fails, the campaign is downgraded (descriptive) or aborted');

/** The registered defaults of `executionFailures.budget` (a protocol that names no budget is frozen with these). */
export const FAILURE_BUDGET_DEFAULTS = { firstFailed: 5, maxFraction: 0.1 } as const;

export const FailureBudgetSchema = z
  .strictObject({
    firstFailed: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(FAILURE_BUDGET_DEFAULTS.firstFailed)
      .describe(
        'the formal run stops, unsealed, when the first firstFailed rows of a wave × condition (in plan order) all failed',
      ),
    maxFraction: z
      .number()
      .min(0)
      .max(1)
      .default(FAILURE_BUDGET_DEFAULTS.maxFraction)
      .describe(
        'the formal run stops, unsealed, when the failed rows of a wave × condition exceed this fraction of its planned rows (1: never)',
      ),
  })
  .describe(
    'the execution-failure budget: beyond it the formal run stops before the seal, naming the first message of each failure code; the rows written are kept (fix the cause and resume, or fail-run)',
  );

const budget = FailureBudgetSchema.prefault({});

export const ExecutionFailureSchema = z
  .discriminatedUnion('policy', [
    z.strictObject({
      policy: z.literal('record').describe('a failed episode is recorded as failed, never retried'),
      unresolved: z.literal('in-denominator').default('in-denominator'),
      budget,
    }),
    z.strictObject({
      policy: z
        .literal('retry')
        .describe('a failed episode is retried up to maxRetries times; every attempt is logged'),
      maxRetries: z.number().int().min(1).max(10),
      unresolved: z.literal('in-denominator').default('in-denominator'),
      budget,
    }),
  ])
  .describe('execution-failure policy; unresolved units stay in denominators and enter identification bounds');

/**
 * The validity checks every protocol runs, registered with safe defaults (docs/validity-checks.md):
 *   informativeRemoval  units removed by a fail-closed rule (a donor too short) are compared with the units kept, on
 *                       every condition's registered outcome, by Fisher's exact test, Holm-adjusted within each
 *                       estimand at alpha (family-wise); a difference means the estimand covers a selected
 *                       sub-population: 'withhold' its number (default) or 'qualify' the verdict in words;
 *   blockedReads        when wrong read content changes outcomes (exact McNemar p < alpha) but blocking the reads
 *                       changes none detectably (p ≥ alpha), the decisions under blocking do not follow from what the
 *                       policy was given (it may tell an empty read and decide from a copy of its own): the N family
 *                       is withheld (default) or its verdicts qualified in words.
 */
export const ValidityChecksSchema = z
  .strictObject({
    informativeRemoval: z
      .strictObject({
        test: z
          .literal('fisher-exact')
          .default('fisher-exact')
          .describe('the exact test of kept against removed units'),
        alpha: Alpha.default(0.05).describe(
          "family-wise per estimand: Holm across the estimand's tables (one per condition of its wave)",
        ),
        onInformative: z
          .enum(['withhold', 'qualify'])
          .default('withhold')
          .describe('withhold: the estimands losing the units are invalid; qualify: the verdict says so in words'),
      })
      .prefault({}),
    blockedReads: z
      .strictObject({
        alpha: Alpha.default(0.05).describe('level of both exact McNemar tests (content, blocking) against the anchor'),
        onFail: z
          .enum(['withhold', 'qualify'])
          .default('withhold')
          .describe('withhold: the N family is invalid; qualify: its verdicts say so in words'),
      })
      .prefault({}),
  })
  .prefault({})
  .describe('validity checks run on every protocol (safe defaults)');

export type Gate = z.infer<typeof GateSchema>;
export type ValidityChecks = z.infer<typeof ValidityChecksSchema>;
export type GateKind = Gate['kind'];
export type GoNoGo = z.infer<typeof GoNoGoSchema>;
export type ExecutionFailurePolicy = z.infer<typeof ExecutionFailureSchema>;
export type FailureBudget = z.infer<typeof FailureBudgetSchema>;
