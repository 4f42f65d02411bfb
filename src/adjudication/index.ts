/**
 * src/adjudication — the registered analysis of a sealed evidence unit (public face): estimands, intervals, gates,
 * verdicts. The independent cross-check is its sibling src/crosscheck; closeout and the chain of steps are src/app.
 *   adjudicateUnit(dir, { operator?, allowSameOperator?: { reason }, regenerate? })   sealed → adjudicated
 *   reproduceAdjudication(dir)                                                          read-only regeneration
 */
export { adjudicateUnit, reproduceAdjudication } from './adjudicate.js';
export type { AdjudicateUnitOptions, AdjudicateUnitResult } from './adjudicate.js';
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
export { readCanaryNote } from './read-canary-note.js';
export type { RoutedBound, Verdict, VerdictWord } from './verdict-types.js';
export { decideBound, type BoundRule } from './decide.js';
export { exactConfirmation, routingRequest } from './estimands.js';
export { normalise } from './intervals.js';
export { loadVerifiedProtocol, loadVerifiedRows } from './sealed-inputs.js';
export { invalidBecause } from './validity.js';
export {
  adjudicationLines,
  boundWords,
  competenceLines,
  competenceText,
  foundLine,
  signedPpText,
  verdictLine,
  verdictLines,
} from './verdict-words.js';
