/**
 * src/campaign/adjudication — adjudication, cross-check and closeout of sealed evidence units (public face).
 *   adjudicateUnit(dir, { operator?, allowSameOperator?: { reason }, regenerate? })   sealed → adjudicated
 *   reproduceAdjudication(dir)                                                          read-only regeneration
 *   crossCheckUnit(dir, { operator? })                                                  adjudicated → cross-checked
 *   closeoutUnit(dir, { notes?, operator? })                                            cross-checked → closed
 */
export { adjudicateUnit, reproduceAdjudication, readAdjudicationArtifact } from './adjudicate.js';
export type { AdjudicateUnitOptions, AdjudicateUnitResult } from './adjudicate.js';
export { crossCheckUnit, crossCheckAdjudication, CROSS_CHECK_METHOD, CROSS_CHECK_TOLERANCE } from '../crosscheck/cross-check.js';
export type { CrossCheckResult, CrossCheckSources, CrossCheckUnitOptions, CrossCheckUnitResult, Disagreement } from '../crosscheck/cross-check.js';
export { closeoutUnit } from '../app/closeout.js';
export type { CloseoutUnitOptions } from '../app/closeout.js';
export { computeAdjudication, renderAdjudication } from './compute.js';
export { ADJUDICATION_FILE, ADJUDICATION_KIND, ADJUDICATION_VERSION, ADJUDICATOR } from './types.js';
export type {
  Adjudication,
  AvailableEstimand,
  ConditionSummary,
  EstimandResult,
  GateResult,
  GoNoGoResult,
  HolmFamilyResult,
  Interval,
  QuestionResult,
  UnavailableEstimand,
} from './types.js';
export { withholdsNumber } from './verdict-types.js';
export type { RoutedBound, Verdict, VerdictWord } from './verdict-types.js';
