/**
 * The adjudication document's gate, condition, Holm, go/no-go, question and amendment sections (adjudication.json,
 * adjudication-document.ts). Schemas only; the adjudicator computes them (src/adjudication/gates.ts, conditions.ts,
 * holm-families.ts, go-no-go.ts, questions.ts) and its types are these schemas' z.infer (src/adjudication/types.ts).
 */
import { z } from 'zod';
import type { Gate, GateKind } from '../../protocol/index.js';
import type { SameMembers } from './same-members.js';

const count = z.number().int().nonnegative();

/** The gate kinds of the protocol (src/protocol/schema-gates.ts), checked equal at compile time below. */
export const GATE_KINDS = [
  'competence',
  'path',
  'replicate',
  'survival',
  'clock',
  'candidate',
  'sham-validity',
  'read-canary',
  'empty-read',
] as const;
const gateKindsAgree: SameMembers<(typeof GATE_KINDS)[number], GateKind> = true;
void gateKindsAgree;

/**
 * The validity checks every protocol runs (protocol `validity`), reported as gates with ids 'informative-removal' and
 * 'blocked-reads' — hyphenated, so no registered gate (an identifier: letters, digits, _) can take them.
 */
export const VALIDITY_CHECK_KINDS = ['informative-removal', 'blocked-reads'] as const;

export const GATE_ON_FAIL = ['exclude', 'invalid', 'descriptive', 'warn'] as const;
const onFailAgree: SameMembers<(typeof GATE_ON_FAIL)[number], Gate['onFail']> = true;
void onFailAgree;

export const GateResultSchema = z.strictObject({
  gate: z.string(),
  kind: z.enum([...GATE_KINDS, ...VALIDITY_CHECK_KINDS]),
  hard: z.boolean(),
  onFail: z.enum(GATE_ON_FAIL),
  passed: z.boolean(),
  /** False when the sealed rows cannot show the gate's evidence (then `passed` is false). */
  evaluable: z.boolean(),
  observed: z.record(z.string(), z.unknown()),
  expected: z.record(z.string(), z.unknown()),
  detail: z.string(),
  /** The conditions (or, for competence, the tasks) the failure is attributed to. */
  failing: z.array(z.string()),
});

const bounds = z.strictObject({ lower: z.number(), upper: z.number() });

export const ConditionSummarySchema = z.strictObject({
  /** `<condition>@w<wave>`. */
  id: z.string(),
  condition: z.string(),
  wave: z.number().int(),
  kind: z.string(),
  anchor: z.boolean(),
  rows: z.strictObject({ total: count, ok: count, failed: count, removed: count, unavailable: count }),
  /** Success on the registered attempts (resolved rows), with Wilson and Clopper–Pearson 95%. */
  success: z.strictObject({ successes: count, n: count, rate: z.number(), wilson95: bounds, cp95: bounds }).nullable(),
  /** Against the wave's anchor (success readout). */
  vsAnchor: z
    .strictObject({
      anchor: z.string(),
      n: count,
      b: count,
      c: count,
      D: z.number(),
      rho: z.number(),
      /** Two-sided Clopper–Pearson 95% on ρ (the figure's interval). */
      rhoCp95: bounds,
      /** Clopper–Pearson bounds on ρ, each one-sided 95% (α = 0.05): the retrospective Q3/Q4 rules use them. */
      rhoCpOneSided95: bounds,
    })
    .nullable(),
  /** Substituting conditions: units whose every decision query was covered. */
  coverage: z.strictObject({ covered: count, units: count, rate: z.number() }).nullable(),
});

export const HolmMemberSchema = z.strictObject({
  estimand: z.string(),
  status: z.enum(['available', 'unavailable', 'invalid']),
  p: z.number().nullable(),
  adjusted: z.number().nullable(),
  /** adjusted < the family's α (the p-below rule); null when unavailable or invalid. */
  rejected: z.boolean().nullable(),
});

export const HolmFamilyResultSchema = z.strictObject({
  id: z.string(),
  alpha: z.number(),
  test: z.enum(['mcnemar-exact-two-sided', 'mcnemar-exact-one-sided']),
  repairBudget: count,
  members: z.array(HolmMemberSchema),
});

export const GoNoGoRuleResultSchema = z.strictObject({
  rule: z.string(),
  subject: z.string(),
  passed: z.boolean(),
  observed: z.number().nullable(),
  expected: z.number(),
  outcome: z.enum(['descriptive', 'abort']),
  detail: z.string(),
});

export const GoNoGoResultSchema = z.strictObject({
  status: z.enum(['confirmatory', 'descriptive', 'aborted']),
  rules: z.array(GoNoGoRuleResultSchema),
  /** Hard gates with onFail 'descriptive' that failed. */
  descriptiveGates: z.array(z.string()),
});

export const QUESTIONS = ['Q1', 'Q2', 'Q3', 'Q4'] as const;

export const RetrospectiveReadingSchema = z.strictObject({
  /** `<rule>:<estimand or condition>`. */
  id: z.string(),
  rule: z.string(),
  verdict: z.enum(['holds', 'not detected', 'unresolved', 'invalid', 'not applicable']),
  lower: z.number().nullable(),
  floor: z.number().nullable(),
  reason: z.string(),
});

export const QuestionResultSchema = z.strictObject({
  question: z.enum(QUESTIONS),
  /** The registered criteria of the question (primary role), with their verdict words. */
  registered: z.array(z.strictObject({ criterion: z.string(), verdict: z.string() })),
  verdict: z.enum(['holds', 'not detected', 'unresolved', 'invalid', 'excluded', 'descriptive', 'not registered']),
  reason: z.string(),
  /** The paper's retrospective (post hoc) readings; never a registered verdict. */
  retrospective: z.array(RetrospectiveReadingSchema),
});

export const AmendmentListingSchema = z.strictObject({
  id: z.string(),
  at: z.string(),
  classification: z.string(),
  stateAtAmendment: z.string(),
  affects: z.array(z.string()),
  text: z.string(),
});

export const ProtocolAmendmentListingSchema = z.strictObject({
  id: z.string(),
  date: z.string(),
  stage: z.string(),
  summary: z.string(),
});
