/**
 * The checks of the NOISY campaign designs (campaign designs registering `executionNoise`): real IMEP campaigns in
 * which every executed action carries seeded noise drawn per condition, so b′ and c′ are both exercised and the
 * exact replicate C is not exact (a non-trivial floor).
 *
 *   false positives   every design whose truth is "none" (the memory-blind checkpoint), EVERY registered criterion
 *                     of its template: the count x of 'holds' over its B real campaigns must be ≤ k, the exact
 *                     binomial pass rule at α (the criterion's alphaPerComponent, else the suite's α): a rule at α
 *                     passes with probability ≥ 0.95 (fpr-check-size.ts). The check is SIZED when B is large enough
 *                     that a rule at 2α fails with probability ≥ 0.9 (α = 0.05: B = 233, k = 17); a full run passes
 *                     only a sized check, a --quick run prints its smaller check as QUICK with its own operating
 *                     characteristic. Printed with x/B's two-sided 95% Clopper–Pearson interval.
 *   power             every design whose truth is fact use (the positive control), on the suite's criterion: (i) it
 *                     holds in ≥ the registered power (80%) of the real campaigns; (ii) the control sits at or above the
 *                     registered MDE — pooled θ̂ ≥ MDE, the minimum detectable θ at the control's own discordance
 *                     ρ̂ = (Σb′ + Σc′)/Σn and paired n (src/stats/power.ts, exact, at the suite's test, α and power);
 *                     (iii) the stats-level simulation AT the MDE (pB = (ρ̂ + MDE)/2, pC = (ρ̂ − MDE)/2, the suite's
 *                     simulated-campaign count) reaches the registered power within twice its Monte-Carlo SE.
 * Pure apart from the seeded simulation; deterministic.
 */
import { minimumDetectableEffect, type PairedTest } from '../stats/index.js';
import type { LoadedSuite } from './load-suite.js';
import { fork } from './design-rates.js';
import { fprCheckSize, fprPassRule, fprRuleText, type FprRule } from './fpr-check-size.js';
import { rateWithInterval, type RateWithInterval } from './operating-characteristics.js';
import type { CampaignDesignResult } from './result.js';
import { simulateCampaigns } from './stats-simulation.js';

export interface NoisyFalsePositive extends RateWithInterval {
  readonly design: string;
  readonly criterion: string;
  readonly alpha: number;
  /** The exact pass rule at these B campaigns (pass iff detected ≤ rule.maxFalsePositives) and its OC. */
  readonly rule: FprRule;
  /** The sized check at this α: the smallest B that fails a rule at 2α with probability ≥ 0.9. */
  readonly sizedRule: FprRule;
  /** Whether this check fails a rule at 2α with probability ≥ 0.9. */
  readonly sized: boolean;
  /** A --quick run: an unsized check may pass, labelled QUICK. */
  readonly quick: boolean;
  readonly passed: boolean;
}

export interface NoisyPower {
  readonly design: string;
  readonly criterion: string;
  readonly real: RateWithInterval;
  /** Pooled (b′, c′, n) and the control's discordance and effect. */
  readonly pooled: {
    readonly bPrime: number;
    readonly cPrime: number;
    readonly n: number;
    readonly rho: number;
    readonly theta: number;
  };
  /** Paired units per campaign the MDE and simulation use (mean over the real campaigns). */
  readonly n: number;
  readonly mde: number | null;
  readonly atMde: (RateWithInterval & { readonly seed: string; readonly mcError: number }) | null;
  readonly passed: boolean;
}

export interface NoisyChecks {
  readonly rule: string;
  /** Per noisy design: its noise, pooled b′/c′ and the exact-repeat floor it measured. */
  readonly designs: readonly {
    readonly id: string;
    readonly truth: 'fact-use' | 'none';
    readonly sigma: number;
    readonly scope: string;
    readonly bPrime: number;
    readonly cPrime: number;
    readonly floor: CampaignDesignResult['replicateFloor'];
  }[];
  readonly falsePositive: readonly NoisyFalsePositive[];
  readonly power: readonly NoisyPower[];
  readonly passed: boolean;
}

export function noisyChecks(
  loaded: LoadedSuite,
  designs: readonly CampaignDesignResult[],
  criterion: string,
  simulated: number,
  quick = false,
): NoisyChecks | null {
  const noisy = designs.filter((d) => d.executionNoise !== null);
  if (noisy.length === 0) return null;
  const { inputs } = loaded.suite.mde;
  const falsePositive: NoisyFalsePositive[] = noisy
    .filter((d) => d.truth === 'none')
    .flatMap((d) =>
      d.criteria.map((k) => {
        const alpha = k.alpha ?? inputs.alpha;
        const rule = fprPassRule(alpha, Math.max(1, k.campaigns));
        const sized = rule.failAtTwiceAlpha >= 0.9;
        return {
          design: d.id,
          criterion: k.criterion,
          alpha,
          rule,
          sizedRule: fprCheckSize(alpha),
          sized,
          quick,
          ...stripCriterion(k),
          passed: k.campaigns > 0 && k.detected <= rule.maxFalsePositives && (sized || quick),
        };
      }),
    );
  const power: NoisyPower[] = noisy
    .filter((d) => d.truth === 'fact-use')
    .map((d) => {
      const k = d.criteria.find((x) => x.criterion === criterion);
      const real = rateWithInterval(k?.detected ?? 0, k?.campaigns ?? 0);
      const N = d.pooled.n;
      const n = Math.max(1, Math.round(N / Math.max(1, d.campaigns.length)));
      const rho = N === 0 ? 0 : (d.pooled.bOnlyT + d.pooled.cOnlyS) / N;
      const theta = N === 0 ? 0 : (d.pooled.bOnlyT - d.pooled.cOnlyS) / N;
      const found =
        rho > 0
          ? minimumDetectableEffect({
              n,
              rhoDiscordant: Math.min(1, rho),
              alpha: inputs.alpha,
              test: inputs.test as PairedTest,
              power: inputs.power,
              method: 'exact',
            })
          : null;
      const mde = found !== null && found.status === 'found' ? found.effect : null;
      let atMde: NoisyPower['atMde'] = null;
      if (mde !== null) {
        const seed = fork(loaded.suite.simulation.seed, d.id, 'at-mde');
        const sim = simulateCampaigns({
          n,
          pB: (rho + mde) / 2,
          pC: (rho - mde) / 2,
          campaigns: simulated,
          seed,
          test: inputs.test as PairedTest,
          alpha: inputs.alpha,
        });
        atMde = {
          ...rateWithInterval(sim.detected, sim.campaigns),
          seed,
          mcError: Math.sqrt((inputs.power * (1 - inputs.power)) / sim.campaigns),
        };
      }
      const passed =
        real.campaigns > 0 &&
        real.rate >= inputs.power &&
        mde !== null &&
        theta >= mde &&
        atMde !== null &&
        atMde.rate >= inputs.power - 2 * atMde.mcError;
      return {
        design: d.id,
        criterion,
        real,
        pooled: { bPrime: d.pooled.bOnlyT, cPrime: d.pooled.cOnlyS, n: N, rho, theta },
        n,
        mde,
        atMde,
        passed,
      };
    });
  return {
    rule: `noisy designs: on the memory-blind checkpoint every registered criterion holds in ≤ k of the B real campaigns, k the exact binomial pass rule at α (a rule at α passes with probability ≥ 0.95; the check is sized when a rule at 2α fails with probability ≥ 0.9, which a full run requires; Clopper–Pearson 95% printed); on the positive control ${criterion} holds in ≥ ${inputs.power} of them, its pooled θ̂ is ≥ the MDE at its own discordance and n, and stats-level campaigns at exactly that MDE reach ${inputs.power} within 2 Monte-Carlo SE`,
    designs: noisy.map((d) => ({
      id: d.id,
      truth: d.truth,
      sigma: (d.executionNoise as { sigma: number }).sigma,
      scope: (d.executionNoise as { scope: string }).scope,
      bPrime: d.pooled.bOnlyT,
      cPrime: d.pooled.cOnlyS,
      floor: d.replicateFloor,
    })),
    falsePositive,
    power,
    passed: falsePositive.every((f) => f.passed) && power.every((p) => p.passed),
  };
}

function stripCriterion(k: RateWithInterval): RateWithInterval {
  return { detected: k.detected, campaigns: k.campaigns, rate: k.rate, cp95: k.cp95, upper95: k.upper95 };
}

const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
const cp = (r: RateWithInterval): string =>
  `${r.detected}/${r.campaigns} = ${pct(r.rate)}, CP 95% [${pct(r.cp95.lower)}, ${pct(r.cp95.upper)}]`;

/** The noisy checks in words, one line each (calibration.md and the command's summary). */
export function noisyLines(c: NoisyChecks | null): string[] {
  if (c === null) return [];
  const out: string[] = [];
  for (const d of c.designs) {
    const floor =
      d.floor === null
        ? 'no ρ_C registered'
        : `exact-repeat floor ${d.floor.estimand}: b = ${d.floor.b}, c = ${d.floor.c} of n = ${d.floor.n} (C changed outcomes in ${d.floor.campaignsWithChanges} campaigns; largest upper bound ${d.floor.maxUpper === null ? '—' : pct(d.floor.maxUpper)})`;
    out.push(`noisy design ${d.id} (σ = ${d.sigma}, ${d.scope}): Σb′ = ${d.bPrime}, Σc′ = ${d.cPrime}; ${floor}`);
  }
  for (const f of c.falsePositive) {
    const within = f.detected <= f.rule.maxFalsePositives;
    const size = f.sized
      ? 'sized'
      : f.quick
        ? `QUICK check, not sized — the sized check is ${fprRuleText(f.sizedRule)} (the full command, docs/calibration.md)`
        : `NOT SIZED: too few campaigns to fail a rule at 2α with probability ≥ 0.9 — the sized check is ${fprRuleText(f.sizedRule)}`;
    out.push(
      `noisy false-positive ${f.design} ${f.criterion}: ${cp(f)}, ${f.detected} ${within ? '≤' : '>'} ${f.rule.maxFalsePositives} (α = ${f.alpha}; OC ${fprRuleText(f.rule)}; ${size}) — ${f.passed ? 'passed' : 'FAILED'}`,
    );
  }
  for (const p of c.power) {
    const mde =
      p.mde === null
        ? 'MDE unreachable'
        : `θ̂ = ${pct(p.pooled.theta)} ${p.pooled.theta >= p.mde ? '≥' : '<'} MDE ${pct(p.mde)} at ρ̂ = ${pct(p.pooled.rho)}, n = ${p.n}`;
    const at = p.atMde === null ? '' : `; stats-level at the MDE ${cp(p.atMde)}`;
    out.push(
      `noisy power ${p.design} ${p.criterion}: real ${cp(p.real)}; ${mde}${at} — ${p.passed ? 'passed' : 'FAILED'}`,
    );
  }
  return out;
}
