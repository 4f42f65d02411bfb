/**
 * Stats-level simulated campaigns: the ladder's readout without the simulator, for the many repetitions
 * a real campaign is too slow for. Each simulated campaign draws n independent units, each "only T
 * flips" (b′) with probability pB, "only S flips" (c′) with pC, otherwise neither (or both — which the
 * readout cancels, so it is folded into "neither"), and applies the same detection rule as a real
 * campaign (ladder-readout.ts). This is exactly the model of src/stats/power.ts (ρ = pB + pC,
 * θ = pB − pC), so a simulated rate estimates the power the frozen analysis predicts at (ρ, θ).
 *
 * Randomness: one stream `Prng(seed)` (xoshiro128** v1), one uniform per unit, campaigns in order;
 * the seed is recorded with every result. Empty input: campaigns = 0 gives no detections out of 0.
 * Pure, no I/O.
 */
import { domainError, Prng, type PrngSpec, type Seed } from '../core/index.js';
import type { PairedTest } from '../stats/index.js';
import { detects } from './ladder-readout.js';

export interface SimulationInput {
  readonly n: number;
  readonly pB: number;
  readonly pC: number;
  readonly campaigns: number;
  readonly seed: Seed;
  readonly test: PairedTest;
  readonly alpha: number;
}

export interface SimulationResult {
  readonly campaigns: number;
  readonly detected: number;
  readonly prng: PrngSpec;
  /** Mean b′ and c′ over the simulated campaigns (a check of the draws against n·pB, n·pC). */
  readonly meanB: number;
  readonly meanC: number;
}

export function simulateCampaigns(input: SimulationInput): SimulationResult {
  const { n, pB, pC, campaigns, seed, test, alpha } = input;
  if (!Number.isSafeInteger(n) || n < 1) domainError('n', `n must be an integer ≥ 1, got ${n}`);
  if (!(pB >= 0 && pC >= 0 && pB + pC <= 1)) domainError('pB', `pB, pC must be ≥ 0 with pB + pC ≤ 1, got ${pB}, ${pC}`);
  if (!Number.isSafeInteger(campaigns) || campaigns < 0)
    domainError('campaigns', `campaigns must be an integer ≥ 0, got ${campaigns}`);
  const prng = new Prng(seed);
  let detected = 0,
    sumB = 0,
    sumC = 0;
  for (let r = 0; r < campaigns; r++) {
    let b = 0,
      c = 0;
    for (let i = 0; i < n; i++) {
      const u = prng.nextFloat();
      if (u < pB) b++;
      else if (u < pB + pC) c++;
    }
    sumB += b;
    sumC += c;
    if (detects(b, c, test, alpha).detected) detected++;
  }
  return {
    campaigns,
    detected,
    prng: prng.spec,
    meanB: campaigns === 0 ? 0 : sumB / campaigns,
    meanC: campaigns === 0 ? 0 : sumC / campaigns,
  };
}
