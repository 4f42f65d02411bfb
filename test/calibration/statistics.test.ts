/** The calibration's pure pieces: ladder readout, detection rule, stats-level simulation, intervals, agreement. */
import { describe, expect, it } from 'vitest';
import {
  agreement,
  detects,
  ladderCounts,
  ladderReadout,
  rateWithInterval,
  simulateCampaigns,
} from '../../src/calibration/index.js';
import { clopperPearsonUpper } from '../../src/stats/clopper-pearson.js';
import { pairedPowerExact } from '../../src/stats/power.js';

describe('ladder readout', () => {
  it('counts only-T, only-S, both and neither flips against A; θ̂ = (b′ − c′)/n', () => {
    const units = [
      { a: true, s: true, t: false }, // only T flips
      { a: true, s: true, t: false },
      { a: false, s: true, t: false }, // only S flips
      { a: true, s: false, t: false }, // both
      { a: false, s: false, t: false }, // neither
      { a: true, s: null, t: false }, // removed: not counted
    ];
    const c = ladderCounts(units);
    expect(c).toEqual({ n: 5, bOnlyT: 2, cOnlyS: 1, both: 1, neither: 1 });
    const r = ladderReadout(c, 'mcnemar-one-sided', 0.05);
    expect(r.rhoT).toBeCloseTo(3 / 5, 12);
    expect(r.rhoS).toBeCloseTo(2 / 5, 12);
    expect(r.theta).toBeCloseTo(1 / 5, 12);
    expect(r.p).toBeCloseTo(0.5, 12); // P(X ≥ 2 | 3) = 4/8
    expect(r.detected).toBe(false);
  });

  it('one-sided exact McNemar: b′ = 5, c′ = 0 is detected (p = 1/32), b′ = 4 is not (1/16); two-sided needs b′ > c′', () => {
    expect(detects(5, 0, 'mcnemar-one-sided', 0.05)).toEqual({ p: 1 / 32, detected: true });
    expect(detects(4, 0, 'mcnemar-one-sided', 0.05)).toEqual({ p: 1 / 16, detected: false });
    expect(detects(0, 0, 'mcnemar-one-sided', 0.05)).toEqual({ p: 1, detected: false });
    expect(detects(0, 9, 'mcnemar-two-sided', 0.05).detected).toBe(false); // significant, but θ < 0
    expect(detects(9, 0, 'mcnemar-two-sided', 0.05).detected).toBe(true);
  });
});

describe('stats-level simulation (src/stats/power.ts model)', () => {
  it('under θ = 0 at a large discordance the false-positive rate stays below α + 0.03 with its exact upper bound (2000 campaigns)', () => {
    const sim = simulateCampaigns({
      n: 200,
      pB: 0.1,
      pC: 0.1,
      campaigns: 2000,
      seed: 'test-null',
      test: 'mcnemar-one-sided',
      alpha: 0.05,
    });
    const r = rateWithInterval(sim.detected, sim.campaigns);
    expect(r.upper95).toBeLessThanOrEqual(0.08);
    expect(r.rate).toBeGreaterThan(0.01); // the exact test is conservative, not empty
    expect(sim.meanB).toBeGreaterThan(18);
    expect(sim.meanB).toBeLessThan(22);
  });

  it('simulated power agrees with the exact power within 3 Monte-Carlo SE, and is deterministic in the seed', () => {
    const rho = 0.2,
      theta = 0.0814;
    const input = {
      n: 200,
      pB: (rho + theta) / 2,
      pC: (rho - theta) / 2,
      campaigns: 2000,
      seed: 7,
      test: 'mcnemar-one-sided' as const,
      alpha: 0.05,
    };
    const a = simulateCampaigns(input);
    const exact = pairedPowerExact({ n: 200, rhoDiscordant: rho, effect: theta });
    const se = Math.sqrt((exact * (1 - exact)) / 2000);
    expect(Math.abs(a.detected / 2000 - exact)).toBeLessThan(3 * se);
    expect(simulateCampaigns(input)).toEqual(a);
  });
});

describe('intervals and agreement', () => {
  it('rateWithInterval: exact Clopper–Pearson, one-sided upper bound', () => {
    const r = rateWithInterval(0, 2000);
    expect(r.upper95).toBeCloseTo(1 - 0.05 ** (1 / 2000), 12);
    expect(rateWithInterval(10, 200).upper95).toBeCloseTo(clopperPearsonUpper(10, 200, 0.05), 12);
    expect(rateWithInterval(0, 0).cp95).toEqual({ lower: 0, upper: 1 });
  });

  it('combined SE = √(p̄(1−p̄)(1/B + 1/R)) with the pooled p̄; equal degenerate rates agree', () => {
    const a = agreement(160, 200, 0.75, 4000, 3);
    const pooled = (160 + 0.75 * 4000) / 4200;
    const se = Math.sqrt(pooled * (1 - pooled) * (1 / 200 + 1 / 4000));
    expect(a?.combinedSe).toBeCloseTo(se, 12);
    expect(a?.z).toBeCloseTo((0.8 - 0.75) / se, 10);
    expect(a?.agrees).toBe(true);
    expect(agreement(200, 200, 0.5, 4000, 3)?.agrees).toBe(false);
    expect(agreement(0, 10, 0, 4000, 3)).toMatchObject({ z: null, agrees: true });
    expect(agreement(0, 0, 0.5, 4000, 3)).toBeNull();
  });
});
