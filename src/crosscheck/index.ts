/**
 * src/crosscheck — an independent recomputation of a unit's adjudication from its sealed rows and frozen protocol
 * (public face). It imports nothing but src/core and src/evidence (test/crosscheck/independence.test.ts): its own
 * plain-JSON model, its own exact math, its own gates and verdict words — a second implementation, not a re-run.
 *   crossCheckUnit(dir, { operator? })                                                  adjudicated → cross-checked
 */
export { crossCheckUnit, crossCheckAdjudication, CROSS_CHECK_METHOD, CROSS_CHECK_TOLERANCE } from './cross-check.js';
export type {
  CrossCheckResult,
  CrossCheckSources,
  CrossCheckUnitOptions,
  CrossCheckUnitResult,
  Disagreement,
} from './cross-check.js';
