/**
 * Extreme fillings of unresolved outcomes. Each estimand is the mean (θ̄: task-weighted mean) of a
 * per-unit contribution — Y_X (success rate), Y_A − Y_X (D, G), |Y_A − Y_X| (ρ), f_T − f_S (θ, θ̄) —
 * so its identification bounds over all fillings are attained by filling every unresolved unit with the
 * feasible outcomes that minimise (maximise) its contribution. The fillings also give each interval an
 * envelope ([min lower, max upper] over the two extreme fillings) on which verdicts route when units are
 * unresolved. Ties keep the first feasible filling in binary-counting order (deterministic).
 */
import type { CohortUnit, Outcome } from './joint-cohort.js';

export type Contribution = (o: Readonly<Record<string, 0 | 1>>) => number;

function fillUnit(
  unit: CohortUnit,
  conditions: readonly string[],
  contribution: Contribution,
  direction: 'min' | 'max',
): CohortUnit {
  const open = conditions.filter((c) => unit.outcomes[c] === null);
  if (open.length === 0) return unit;
  let best: Record<string, 0 | 1> | undefined;
  let bestValue = 0;
  for (let mask = 0; mask < 1 << open.length; mask++) {
    const o: Record<string, 0 | 1> = {};
    for (const c of conditions) o[c] = unit.outcomes[c] as 0 | 1;
    open.forEach((c, k) => (o[c] = ((mask >> k) & 1) as 0 | 1));
    const v = contribution(o);
    if (best === undefined || (direction === 'max' ? v > bestValue : v < bestValue)) {
      best = o;
      bestValue = v;
    }
  }
  return { ...unit, outcomes: best as Record<string, Outcome> };
}

/** Every unit with its unresolved outcomes filled to the extreme `direction` of `contribution`. */
export function extremeFill(
  units: readonly CohortUnit[],
  conditions: readonly string[],
  contribution: Contribution,
  direction: 'min' | 'max',
): CohortUnit[] {
  return units.map((u) => fillUnit(u, conditions, contribution, direction));
}
