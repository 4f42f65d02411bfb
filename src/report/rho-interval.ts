/**
 * The interval the ρ figure draws for one condition: the SAME interval family the verdicts use, read from
 * the adjudication record, never recomputed:
 *   1. a criterion on the ρ estimand of (anchor, condition) routed on it → that verdict's RoutedBound
 *      (its registered interval, or the envelope over unresolved units), with the verdict's label;
 *   2. else a criterion names that estimand as a companion (aboveUpperBoundOf) → the companion's interval,
 *      as the verdict recorded it;
 *   3. else the Clopper–Pearson bounds each one-sided 95% (ConditionSummary.rhoCpOneSided95): the family the
 *      Q3/Q4 rules read ρ with.
 * Pure.
 */
import type { Adjudication, AvailableEstimand, ConditionSummary } from '../adjudication/index.js';

export interface RhoInterval {
  readonly lower: number;
  readonly upper: number;
  readonly label: string;
  /** 'verdict' (1), 'companion' (2) or 'one-sided-cp' (3). */
  readonly source: 'verdict' | 'companion' | 'one-sided-cp';
}

function rhoEstimand(a: Adjudication, c: ConditionSummary): AvailableEstimand | undefined {
  const anchor = c.vsAnchor?.anchor;
  return a.estimands.find(
    (e): e is AvailableEstimand =>
      e.status === 'available' &&
      e.kind === 'rho' &&
      e.conditions.reference === anchor &&
      e.conditions.intervention === c.condition &&
      e.cohort.wave === c.wave,
  );
}

export function rhoInterval(a: Adjudication, c: ConditionSummary): RhoInterval {
  const e = rhoEstimand(a, c);
  if (e !== undefined) {
    const v = a.verdicts.find((x) => x.estimand === e.id && x.bound != null && x.bound.routedOn === 'bound');
    if (v?.bound != null)
      return {
        lower: v.bound.lower,
        upper: v.bound.upper,
        label: `${v.bound.label} (${e.id}, as criterion ${v.criterion} routed)`,
        source: 'verdict',
      };
    for (const x of a.verdicts) {
      const k = x.bound?.companions.find((m) => m.estimand === e.id);
      const iv = k === undefined ? undefined : e.intervals.find((i) => i.id === k.interval);
      if (k !== undefined && iv !== undefined) {
        const label = iv.envelope ? `${iv.boundLabel}; envelope over unresolved units` : iv.boundLabel;
        return {
          lower: iv.envelope?.lower ?? iv.lower,
          upper: k.upper,
          label: `${label} (${e.id}, companion of ${x.criterion})`,
          source: 'companion',
        };
      }
    }
  }
  const cp = c.vsAnchor!.rhoCpOneSided95;
  return {
    lower: cp.lower,
    upper: cp.upper,
    label: 'Clopper–Pearson bounds, each one-sided 95% (the Q3/Q4 rules’ family)',
    source: 'one-sided-cp',
  };
}
