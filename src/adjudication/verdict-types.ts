/**
 * Verdicts as a discriminated union on `verdict` (the paper's words); the schemas, and why the union makes the frozen
 * protocols' rules structural ('invalid' and 'excluded' carry no number at all, 'not detected' always its bound), are
 * src/evidence/records/adjudication-verdicts.ts. These types are their z.infer, deeply read-only.
 */
import type { z } from 'zod';
import type {
  CRITERION_RULES,
  DeepReadonly,
  DescriptiveVerdictSchema,
  ExcludedVerdictSchema,
  HoldsVerdictSchema,
  InvalidVerdictSchema,
  NotDetectedVerdictSchema,
  RoutedBoundSchema,
  UnresolvedVerdictSchema,
  VERDICT_WORDS,
  VerdictSchema,
} from '../evidence/index.js';

export type VerdictWord = (typeof VERDICT_WORDS)[number];
export type CriterionRule = (typeof CRITERION_RULES)[number];
/** The bound (or test) a verdict routed on, with the threshold it was compared against. */
export type RoutedBound = DeepReadonly<z.infer<typeof RoutedBoundSchema>>;
export type HoldsVerdict = DeepReadonly<z.infer<typeof HoldsVerdictSchema>>;
export type NotDetectedVerdict = DeepReadonly<z.infer<typeof NotDetectedVerdictSchema>>;
export type UnresolvedVerdict = DeepReadonly<z.infer<typeof UnresolvedVerdictSchema>>;
export type InvalidVerdict = DeepReadonly<z.infer<typeof InvalidVerdictSchema>>;
export type ExcludedVerdict = DeepReadonly<z.infer<typeof ExcludedVerdictSchema>>;
export type DescriptiveVerdict = DeepReadonly<z.infer<typeof DescriptiveVerdictSchema>>;
export type Verdict = DeepReadonly<z.infer<typeof VerdictSchema>>;

/** True for the verdicts whose number is withheld (no bound may be shown). */
export function withholdsNumber(v: Verdict): v is InvalidVerdict | ExcludedVerdict {
  return v.verdict === 'invalid' || v.verdict === 'excluded';
}
