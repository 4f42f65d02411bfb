/**
 * src/app — the pipeline a user runs (public face): run → seal (src/campaign) → adjudicate (src/adjudication) →
 * cross-check (src/crosscheck) → closeout → report (src/report). The CLI calls these; nothing below imports them.
 */
export { closeoutUnit } from './closeout.js';
export type { CloseoutUnitOptions } from './closeout.js';
export {
  adjudicateStep,
  closeoutStep,
  crossCheckStep,
  defaultReportDir,
  postSeal,
  reportStep,
  resumeThrough,
  runThrough,
} from './pipeline.js';
