/**
 * Real lite campaigns at the registered n = 200 (two bands per design, ≈ 2,400 episodes) plus the
 * stats-level simulation (2,000 campaigns per design): the checks, asserted on the result.
 */
import { describe, expect, it } from 'vitest';
import { calibrate } from '../../src/calibration/calibrate.js';
import { parseSuite, type CalibrationResult } from '../../src/calibration/index.js';
import { derivedSuite, ROOT } from './support.js';

let result: CalibrationResult;
const design = (id: string) => result.designs.find((d) => d.id === id)!;

describe('calibration at the registered n (real campaigns + stats-level simulation)', () => {
  it('runs', async () => {
    const loaded = parseSuite(
      derivedSuite(['memvla', 'blind', 'planted-0-02', 'unconditioned-0-02'], 2),
      'derived.yaml',
    );
    result = await calibrate(loaded, { root: ROOT });
    expect(result.design).toMatchObject({
      n: 200,
      realCampaignsPerDesign: 2,
      simulatedCampaignsPerDesign: 2000,
      quick: false,
    });
  }, 300_000);

  it('lite-blind and the unconditioned perturbation: FPR upper 95% bound ≤ α + 0.03 over 2000 simulated campaigns', () => {
    expect(result.checks.falsePositive.limit).toBeCloseTo(0.08, 12);
    for (const id of ['blind', 'unconditioned-0-02']) {
      const d = design(id);
      expect(d.simulated.campaigns).toBe(2000);
      expect(d.simulated.upper95).toBeLessThanOrEqual(0.08);
      expect(d.simulationParameters.pB).toBe(d.simulationParameters.pC); // null-constrained
    }
    expect(result.checks.falsePositive.designs.every((d) => d.passed)).toBe(true);
    // lite-blind's memory weights are 0: no intervention changes an outcome
    expect(design('blind').pooled).toMatchObject({ bOnlyT: 0, cOnlyS: 0, both: 0, n: 400 });
    // the unconditioned perturbation is a non-trivial null: S and T both change outcomes
    const u = design('unconditioned-0-02').pooled;
    expect(u.rhoS).toBeGreaterThan(0.05);
    expect(u.rhoT).toBeGreaterThan(0.05);
    expect(design('unconditioned-0-02').real.detected).toBe(0);
  });

  it('lite-memvla: the ladder detects θ > 0 in ≥ 80% of campaigns at n = 200 (real 2/2 and simulated)', () => {
    const d = design('memvla');
    expect(d.real).toMatchObject({ detected: 2, campaigns: 2 });
    expect(d.simulated.rate).toBeGreaterThanOrEqual(0.8);
    expect(d.pooled.theta).toBeGreaterThan(0.5);
    expect(result.checks.power.designs).toEqual([expect.objectContaining({ id: 'memvla', passed: true })]);
  });

  it('the planted effect is injected from the decoded fact (every A unit latches its own fact) and detected', () => {
    const d = design('planted-0-02');
    for (const c of d.campaigns) expect(c.latchMatchesFact).toBe(c.n);
    expect(d.real.detected).toBe(2);
    expect(d.pooled.cOnlyS).toBe(0);
    expect(result.decoders[0]).toMatchObject({ checkpoint: 'lite-blind', fitUnits: 300, fitCorrect: 300 });
  });

  it('frozen MDE prediction and observed power agree within the combined Monte-Carlo error', () => {
    const rows = result.frozenMde.rows;
    expect(rows.map((r) => r.assumedDiscordance)).toEqual([0.08, 0.2]); // ρ = 3% is unreachable at n = 200
    for (const r of rows) {
      expect(r.agreement.agrees).toBe(true);
      expect(Math.abs(r.simulated.rate - 0.8)).toBeLessThan(3 * r.agreement.combinedSe);
    }
    for (const d of result.designs) {
      expect(d.agreementReal.agrees, d.id).toBe(true);
      expect(d.agreementSimulated.agrees, d.id).toBe(true);
    }
    expect(result.checks.agreement.passed).toBe(true);
  });
});
