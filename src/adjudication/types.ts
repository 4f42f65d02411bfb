/**
 * The adjudication result (`adjudication.json`, kind `imep.adjudication-result`, version 1): the typed model
 * every other adjudication file, the cross-check and the report read. Its schema, versions and the one reader
 * (`readAdjudication`) are src/evidence/records/adjudication-document.ts; the types here are that schema's z.infer,
 * deeply read-only, under the names the adjudicator uses. One object per sealed unit, computed only from the frozen
 * protocol.json and the sealed rows; it holds no timestamps, so a regeneration of the same unit reproduces its
 * bytes exactly.
 *
 * Conventions (src/stats): b = reference succeeds, intervention fails; c the reverse;
 * D = (b − c)/n (positive: the intervention lowers success); ρ = (b + c)/n; θ = ρ_T − ρ_S = (b′ − c′)/n
 * on the flip indicators; θ̄ the task-weighted θ; G = Acc_O − Acc_N. Rates are proportions (0.1 = 10 pp).
 */
import type { z } from 'zod';
import type {
  AdjudicationDocument,
  AmendmentListingSchema,
  AvailableEstimandSchema,
  BootstrapInfoSchema,
  CohortSummarySchema,
  ConditionSummarySchema,
  CountsSchema,
  DeepReadonly,
  EstimandConditionsSchema,
  EstimandResultSchema,
  GateResultSchema,
  GoNoGoResultSchema,
  GoNoGoRuleResultSchema,
  HolmFamilyResultSchema,
  HolmMemberSchema,
  IntervalSchema,
  ProtocolAmendmentListingSchema,
  QuestionResultSchema,
  READOUTS,
  RetrospectiveReadingSchema,
  TaskThetaSchema,
  TestResultSchema,
  UnavailableEstimandSchema,
  VALIDITY_CHECK_KINDS,
} from '../evidence/index.js';

export { ADJUDICATION_KIND, ADJUDICATION_VERSION } from '../evidence/index.js';
/**
 * The frozen adjudicator's identity; bump the version whenever any number or rule could change.
 * v2 (issues #31): a bootstrap or score verdict on θ̄ and companion floors stands only when an exact bound gives the
 * same word; the informative-removal and blocked-reads validity checks run on every protocol.
 */
export const ADJUDICATOR = { name: 'imep-adjudicator', version: 2 } as const;
export { ADJUDICATION_FILE } from '../evidence/index.js';

type Doc<S extends z.ZodType> = DeepReadonly<z.infer<S>>;

export type Readout = (typeof READOUTS)[number];
/** How a cohort lost or kept its units (reported for every estimand). */
export type CohortSummary = Doc<typeof CohortSummarySchema>;
export type BootstrapInfo = Doc<typeof BootstrapInfoSchema>;
/** One interval on one estimand, labelled at the coverage of the quantity bounded. */
export type Interval = Doc<typeof IntervalSchema>;
export type TestResult = Doc<typeof TestResultSchema>;
export type TaskTheta = Doc<typeof TaskThetaSchema>;
export type EstimandConditions = Doc<typeof EstimandConditionsSchema>;
export type UnavailableEstimand = Doc<typeof UnavailableEstimandSchema>;
export type Counts = Doc<typeof CountsSchema>;
export type AvailableEstimand = Doc<typeof AvailableEstimandSchema>;
export type EstimandResult = Doc<typeof EstimandResultSchema>;
/**
 * The validity checks every protocol runs (protocol `validity`), reported as gates with ids 'informative-removal' and
 * 'blocked-reads' — hyphenated, so no registered gate (an identifier: letters, digits, _) can take them.
 */
export type ValidityCheckKind = (typeof VALIDITY_CHECK_KINDS)[number];
export type GateResult = Doc<typeof GateResultSchema>;
export type ConditionSummary = Doc<typeof ConditionSummarySchema>;
export type HolmMember = Doc<typeof HolmMemberSchema>;
export type HolmFamilyResult = Doc<typeof HolmFamilyResultSchema>;
export type GoNoGoRuleResult = Doc<typeof GoNoGoRuleResultSchema>;
export type GoNoGoResult = Doc<typeof GoNoGoResultSchema>;
export type RetrospectiveReading = Doc<typeof RetrospectiveReadingSchema>;
export type QuestionResult = Doc<typeof QuestionResultSchema>;
export type AmendmentListing = Doc<typeof AmendmentListingSchema>;
export type ProtocolAmendmentListing = Doc<typeof ProtocolAmendmentListingSchema>;
/** The whole document (adjudication.json). */
export type Adjudication = AdjudicationDocument;
