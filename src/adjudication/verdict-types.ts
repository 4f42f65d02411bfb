/**
 * Verdicts as a discriminated union on `verdict` (the paper's words). The type makes the rules of the
 * frozen protocols structural:
 *   - 'invalid' and 'excluded' carry NO number: they have no `bound` field at all (`bound?: never`), so a
 *     withheld number cannot be attached to them by mistake;
 *   - 'not detected' always carries its bound;
 *   - 'holds' and 'unresolved' carry the bound they routed on ('unresolved' may lack one only when the
 *     registered interval could not be formed, e.g. no registered bootstrap seed);
 *   - 'descriptive' (a go/no-go downgrade) carries the numbers but no verdict word.
 */

export type VerdictWord = 'holds' | 'not detected' | 'unresolved' | 'invalid' | 'excluded';
export type CriterionRule = 'upper-bound-below' | 'lower-bound-above' | 'equivalence' | 'p-below' | 'point-below';

/** The bound (or test) a verdict routed on, with the threshold it was compared against. */
export interface RoutedBound {
  /** The interval id on the criterion's estimand (types.ts Interval.id), or the test id for p-below. */
  readonly interval: string;
  readonly label: string;
  readonly estimate: number;
  /** The bounds compared (the envelope over unresolved fillings when there are unresolved units). */
  readonly lower: number;
  readonly upper: number;
  /** The criterion's threshold: the margin, raised to every listed companion upper bound. */
  readonly threshold: number;
  /** Companion bounds the lower bound must also exceed (lower-bound-above with aboveUpperBoundOf). */
  readonly companions: readonly { readonly estimand: string; readonly interval: string; readonly upper: number }[];
  /** p-below only: the p-value compared with α (Holm-adjusted when the estimand is in a family). */
  readonly p: number | null;
  /** 'bound' (rules ii), 'test' (p-below) or 'point' (a registered point check). */
  readonly routedOn: 'bound' | 'test' | 'point';
}

interface VerdictBase {
  readonly criterion: string;
  readonly estimand: string;
  readonly question: 'Q1' | 'Q2' | 'Q3' | 'Q4' | null;
  readonly role: 'primary' | 'secondary' | 'materiality' | 'eligibility';
  readonly rule: CriterionRule;
  /** Whether the registered rule's own condition is met (e.g. UB < margin for upper-bound-below); null when withheld. */
  readonly registeredRuleMet: boolean | null;
  readonly reason: string;
}

export interface HoldsVerdict extends VerdictBase {
  readonly verdict: 'holds';
  readonly bound: RoutedBound;
}

export interface NotDetectedVerdict extends VerdictBase {
  readonly verdict: 'not detected';
  /** Always stated with its bound. */
  readonly bound: RoutedBound;
}

export interface UnresolvedVerdict extends VerdictBase {
  readonly verdict: 'unresolved';
  readonly bound: RoutedBound | null;
}

export interface InvalidVerdict extends VerdictBase {
  readonly verdict: 'invalid';
  /** The failed path/wiring gates (or unavailable conditions) that withhold the number. */
  readonly because: readonly string[];
  readonly bound?: never;
}

export interface ExcludedVerdict extends VerdictBase {
  readonly verdict: 'excluded';
  /** The failed competence gates. */
  readonly because: readonly string[];
  readonly bound?: never;
}

export interface DescriptiveVerdict extends VerdictBase {
  readonly verdict: 'descriptive';
  /** The go/no-go rules or gates that downgraded the campaign. */
  readonly because: readonly string[];
  readonly bound: RoutedBound | null;
}

export type Verdict =
  HoldsVerdict | NotDetectedVerdict | UnresolvedVerdict | InvalidVerdict | ExcludedVerdict | DescriptiveVerdict;

/** True for the verdicts whose number is withheld (no bound may be shown). */
export function withholdsNumber(v: Verdict): v is InvalidVerdict | ExcludedVerdict {
  return v.verdict === 'invalid' || v.verdict === 'excluded';
}
