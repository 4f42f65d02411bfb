/**
 * A design's operating characteristics from its real campaigns — shared by the ladder designs
 * (calibrate.ts) and the campaign-level designs (campaign-designs.ts):
 *   real       detected/campaigns with the exact Clopper–Pearson interval;
 *   simulated  `campaigns` stats-level campaigns at per-unit rates measured on the pooled real campaigns
 *              (fact-use: pB = Σb′/Σn, pC = Σc′/Σn; θ = 0 by construction: the null-constrained
 *              pB = pC = (Σb′ + Σc′)/(2Σn)); the source of the parameters is written out;
 *   predicted  the frozen method (mde.inputs: Monte-Carlo replicates and seed) at the same (ρ, θ), with the
 *              exact power alongside; agreement of both observed rates with it (operating-characteristics.ts).
 * Pure apart from the seeded simulation; deterministic.
 */
import { pairedPower, pairedPowerExact } from '../stats/index.js';
import type { LoadedSuite } from './load-suite.js';
import { agreement, rateWithInterval, type Agreement, type RateWithInterval } from './operating-characteristics.js';
import type { DesignResult } from './result.js';
import { simulateCampaigns } from './stats-simulation.js';

export function fork(seed: string | number, ...labels: (string | number)[]): string {
  return [String(seed), ...labels.map(String)].join('/');
}

export function predictionAt(
  loaded: LoadedSuite,
  n: number,
  pB: number,
  pC: number,
): { power: number; mcError: number; exact: number } {
  const { inputs } = loaded.suite.mde;
  const rho = pB + pC;
  const effect = Math.min(rho, Math.max(-rho, pB - pC));
  const mc = pairedPower({
    n,
    rhoDiscordant: rho,
    effect,
    alpha: inputs.alpha,
    test: inputs.test,
    replicates: inputs.replicates as number,
    seed: inputs.seed as number | string,
  });
  return {
    power: mc.power,
    mcError: mc.mcError,
    exact: pairedPowerExact({ n, rhoDiscordant: rho, effect, alpha: inputs.alpha, test: inputs.test }),
  };
}

export interface RatesInput {
  readonly designId: string;
  readonly truth: 'fact-use' | 'none';
  /** Pooled counts over the design's real campaigns. */
  readonly B: number;
  readonly C: number;
  readonly N: number;
  /** Units per simulated campaign. */
  readonly n: number;
  readonly realDetected: number;
  readonly realCampaigns: number;
  readonly simulatedCampaigns: number;
  /** Where the pooled counts come from (bands, seeds); the counts and the constraint are appended. */
  readonly sourcePrefix: string;
}

export type DesignRates = Pick<
  DesignResult,
  'simulationParameters' | 'real' | 'simulated' | 'predicted' | 'agreementReal' | 'agreementSimulated'
>;

export function designRates(loaded: LoadedSuite, x: RatesInput): DesignRates {
  const suite = loaded.suite;
  const { test, alpha } = suite.mde.inputs;
  const { B, C, N } = x;
  const nullDesign = x.truth === 'none';
  const pB = N === 0 ? 0 : nullDesign ? (B + C) / (2 * N) : B / N;
  const pC = N === 0 ? 0 : nullDesign ? (B + C) / (2 * N) : C / N;
  const source =
    `${x.sourcePrefix}, Σb′ = ${B}, Σc′ = ${C}, Σn = ${N}` +
    (nullDesign
      ? '; null-constrained (truth θ = 0): pB = pC = (Σb′ + Σc′)/(2Σn)'
      : '; unconstrained: pB = Σb′/Σn, pC = Σc′/Σn');
  const sim = simulateCampaigns({
    n: x.n,
    pB,
    pC,
    campaigns: x.simulatedCampaigns,
    seed: fork(suite.simulation.seed, x.designId),
    test,
    alpha,
  });
  const prediction = predictionAt(loaded, x.n, pB, pC);
  const R = suite.mde.inputs.replicates as number;
  const real: RateWithInterval = rateWithInterval(x.realDetected, x.realCampaigns);
  const simulated: RateWithInterval = rateWithInterval(sim.detected, sim.campaigns);
  const zLimit = suite.agreement.z;
  const kind = nullDesign ? 'false-positive-rate' : 'power';
  return {
    simulationParameters: { n: x.n, pB, pC, rho: pB + pC, theta: pB - pC, source },
    real: { kind, ...real },
    simulated: {
      kind,
      ...simulated,
      seed: sim.prng.seed,
      prng: `${sim.prng.name} v${sim.prng.version}`,
      meanB: sim.meanB,
      meanC: sim.meanC,
    },
    predicted: {
      power: prediction.power,
      mcError: prediction.mcError,
      replicates: R,
      seed: suite.mde.inputs.seed as number | string,
      exactPower: prediction.exact,
    },
    agreementReal: agreement(x.realDetected, x.realCampaigns, prediction.power, R, zLimit) as Agreement,
    agreementSimulated: agreement(sim.detected, sim.campaigns, prediction.power, R, zLimit) as Agreement,
  };
}
