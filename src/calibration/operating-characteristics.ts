/**
 * Operating characteristics of a design from its campaigns: the detection rate with its exact
 * Clopper–Pearson interval — POWER when the design's fact use is real, FALSE-POSITIVE RATE when it is
 * not — and its agreement with the power the frozen analysis predicts.
 *
 * Agreement (two independent Monte-Carlo estimates of one probability): the observed rate x/B (B
 * campaigns) against the predicted power p̂ (R Monte-Carlo replicates of src/stats/power.ts, the frozen
 * method, replicates and seed). Under "they estimate the same p", the difference has the combined
 * Monte-Carlo standard error  SE = √( p̄(1 − p̄) · (1/B + 1/R) ),  p̄ = (x + p̂·R)/(B + R)  (the pooled
 * two-proportion estimate); z = (x/B − p̂)/SE, and they AGREE when |z| ≤ the suite's registered z. With
 * SE = 0 (both exactly 0 or both exactly 1) they agree iff the rates are equal. The plug-in (ρ̂, θ̂)
 * that the prediction is made at is itself estimated; its sampling error is not in SE (stated in the
 * report).
 *
 * Empty input: B = 0 gives rate 0 with the uninformative [0, 1] and no agreement verdict. Pure.
 */
import { clopperPearson, clopperPearsonUpper } from '../stats/index.js';

export interface RateWithInterval {
  readonly detected: number;
  readonly campaigns: number;
  readonly rate: number;
  /** Two-sided 95% Clopper–Pearson interval. */
  readonly cp95: { readonly lower: number; readonly upper: number };
  /** One-sided 95% Clopper–Pearson upper bound (the false-positive criterion's bound). */
  readonly upper95: number;
}

export function rateWithInterval(detected: number, campaigns: number): RateWithInterval {
  const [lower, upper] = clopperPearson(detected, campaigns, 0.95);
  return {
    detected,
    campaigns,
    rate: campaigns === 0 ? 0 : detected / campaigns,
    cp95: { lower, upper },
    upper95: campaigns === 0 ? 1 : clopperPearsonUpper(detected, campaigns, 0.05),
  };
}

export interface Agreement {
  readonly observed: number;
  readonly predicted: number;
  readonly campaigns: number;
  readonly replicates: number;
  readonly combinedSe: number;
  /** null when SE = 0 (then `agrees` is observed === predicted). */
  readonly z: number | null;
  readonly zLimit: number;
  readonly agrees: boolean;
}

export function agreement(
  detected: number,
  campaigns: number,
  predicted: number,
  replicates: number,
  zLimit: number,
): Agreement | null {
  if (campaigns === 0) return null;
  const observed = detected / campaigns;
  const pooled = (detected + predicted * replicates) / (campaigns + replicates);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / campaigns + 1 / replicates));
  if (!(se > 0))
    return {
      observed,
      predicted,
      campaigns,
      replicates,
      combinedSe: 0,
      z: null,
      zLimit,
      agrees: observed === predicted,
    };
  const z = (observed - predicted) / se;
  return { observed, predicted, campaigns, replicates, combinedSe: se, z, zLimit, agrees: Math.abs(z) <= zLimit };
}
