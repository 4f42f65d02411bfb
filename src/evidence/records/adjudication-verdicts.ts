/**
 * The adjudication document's verdicts (adjudication.json `verdicts[]`, adjudication-document.ts) as a discriminated
 * union on `verdict` (the paper's words). The schema makes the rules of the frozen protocols structural:
 *   - 'invalid' and 'excluded' carry NO number: their `bound` may only be absent (`bound?: never`), so a withheld
 *     number cannot be attached to them by mistake, nor read from a stored document;
 *   - 'not detected' always carries its bound;
 *   - 'holds' and 'unresolved' carry the bound they routed on ('unresolved' may lack one only when the registered
 *     interval could not be formed, e.g. no registered bootstrap seed);
 *   - 'descriptive' (a go/no-go downgrade) carries the numbers but no verdict word.
 * The adjudicator's types are these schemas' z.infer (src/adjudication/verdict-types.ts).
 */
import { z } from 'zod';
import { QUESTIONS } from './adjudication-sections.js';

export const VERDICT_WORDS = ['holds', 'not detected', 'unresolved', 'invalid', 'excluded'] as const;
export const CRITERION_RULES = [
  'upper-bound-below',
  'lower-bound-above',
  'equivalence',
  'p-below',
  'point-below',
] as const;

/** The bound (or test) a verdict routed on, with the threshold it was compared against. */
export const RoutedBoundSchema = z.strictObject({
  /** The interval id on the criterion's estimand (adjudication-estimands.ts Interval.id), or the test id for p-below. */
  interval: z.string(),
  label: z.string(),
  estimate: z.number(),
  /** The bounds compared (the envelope over unresolved fillings when there are unresolved units). */
  lower: z.number(),
  upper: z.number(),
  /** The criterion's threshold: the margin, raised to every listed companion upper bound. */
  threshold: z.number(),
  /** Companion bounds the lower bound must also exceed (lower-bound-above with aboveUpperBoundOf). */
  companions: z.array(z.strictObject({ estimand: z.string(), interval: z.string(), upper: z.number() })),
  /** p-below only: the p-value compared with α (Holm-adjusted when the estimand is in a family). */
  p: z.number().nullable(),
  /** 'bound' (rules ii), 'test' (p-below) or 'point' (a registered point check). */
  routedOn: z.enum(['bound', 'test', 'point']),
});

const verdictBase = {
  criterion: z.string(),
  estimand: z.string(),
  question: z.enum(QUESTIONS).nullable(),
  role: z.enum(['primary', 'secondary', 'materiality', 'eligibility']),
  rule: z.enum(CRITERION_RULES),
  /** Whether the registered rule's own condition is met (e.g. UB < margin for upper-bound-below); null when withheld. */
  registeredRuleMet: z.boolean().nullable(),
  reason: z.string(),
};

export const HoldsVerdictSchema = z.strictObject({
  ...verdictBase,
  verdict: z.literal('holds'),
  bound: RoutedBoundSchema,
});

export const NotDetectedVerdictSchema = z.strictObject({
  ...verdictBase,
  verdict: z.literal('not detected'),
  /** Always stated with its bound. */
  bound: RoutedBoundSchema,
});

export const UnresolvedVerdictSchema = z.strictObject({
  ...verdictBase,
  verdict: z.literal('unresolved'),
  bound: RoutedBoundSchema.nullable(),
});

export const InvalidVerdictSchema = z.strictObject({
  ...verdictBase,
  verdict: z.literal('invalid'),
  /** The failed path/wiring gates (or unavailable conditions) that withhold the number. */
  because: z.array(z.string()),
  bound: z.never().optional(),
});

export const ExcludedVerdictSchema = z.strictObject({
  ...verdictBase,
  verdict: z.literal('excluded'),
  /** The failed competence gates. */
  because: z.array(z.string()),
  bound: z.never().optional(),
});

export const DescriptiveVerdictSchema = z.strictObject({
  ...verdictBase,
  verdict: z.literal('descriptive'),
  /** The go/no-go rules or gates that downgraded the campaign. */
  because: z.array(z.string()),
  bound: RoutedBoundSchema.nullable(),
});

export const VerdictSchema = z.discriminatedUnion('verdict', [
  HoldsVerdictSchema,
  NotDetectedVerdictSchema,
  UnresolvedVerdictSchema,
  InvalidVerdictSchema,
  ExcludedVerdictSchema,
  DescriptiveVerdictSchema,
]);
