/**
 * Holm (1979) step-down adjusted p-values for families fixed in advance.
 *
 * Definition followed: with the m p-values of a family sorted ascending, p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted
 * value of p₍ᵢ₎ is min(1, max_{j ≤ i} (m − j + 1)·p₍ⱼ₎) (running maximum, capped at 1). Adjusted values
 * are returned in input order. Ties keep input order (stable sort); tied p-values get equal adjusted
 * values because of the running maximum. Rejecting H₍ᵢ₎ when its adjusted value is ≤ α controls the
 * family-wise error rate at α (campaign adjudication rejects at < α, the rule its p-below criteria register:
 * holm-families.ts).
 *
 * The family is frozen: a slot whose p-value is `'unavailable'` (the test could not be run, or its
 * number is withheld) enters the computation with p = 1 and stays in the family, so it counts toward m
 * and no other member gains from its absence. Its own output slot stays `'unavailable'`; the number 1 is
 * never reported as if it had been observed.
 *
 * Degenerate inputs: an empty family returns []. A p-value outside [0, 1] or NaN throws E_STATS_DOMAIN
 * naming the slot (`pValues[i]`, or `families.<name>[i]` for holmFamilies).
 */
import { domainError } from '../core/index.js';

export type MaybePValue = number | 'unavailable';

function holmCore(pValues: readonly MaybePValue[], field: string): MaybePValue[] {
  const m = pValues.length;
  const ps = pValues.map((p, i) => {
    if (p === 'unavailable') return 1;
    if (typeof p !== 'number' || Number.isNaN(p) || p < 0 || p > 1) {
      domainError(`${field}[${i}]`, `a p-value must be a number in [0, 1] or 'unavailable', got ${String(p)}`);
    }
    return p;
  });
  const order = ps.map((_, i) => i).sort((i, j) => (ps[i] as number) - (ps[j] as number) || i - j);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach((idx, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * (ps[idx] as number)));
    adjusted[idx] = running;
  });
  return pValues.map((p, i) => (p === 'unavailable' ? 'unavailable' : (adjusted[i] as number)));
}

/** Holm-adjusted p-values of one frozen family, in input order. */
export function holm(pValues: readonly number[]): number[];
export function holm(pValues: readonly MaybePValue[]): MaybePValue[];
export function holm(pValues: readonly MaybePValue[]): MaybePValue[] {
  if (!Array.isArray(pValues)) domainError('pValues', 'pValues must be an array');
  return holmCore(pValues, 'pValues');
}

/** Holm adjustment applied separately within each named family frozen in advance. */
export function holmFamilies<K extends string>(
  families: Readonly<Record<K, readonly MaybePValue[]>>,
): Record<K, MaybePValue[]> {
  if (families === null || typeof families !== 'object')
    domainError('families', 'families must be an object of p-value arrays');
  const out = {} as Record<K, MaybePValue[]>;
  for (const name of Object.keys(families) as K[]) {
    const family = families[name];
    if (!Array.isArray(family)) domainError(`families.${name}`, 'each family must be an array of p-values');
    out[name] = holmCore(family, `families.${name}`);
  }
  return out;
}
