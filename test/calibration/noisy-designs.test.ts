/**
 * Noisy campaign-level calibration designs: the RememberColor checkpoints under per-condition execution noise
 * (protocols/calibration/remembercolor-noisy-campaign.yaml, σ = 0.08), real IMEP campaigns adjudicated by another
 * operator. Two bands of 15 seeds per task per design here; the registered 20 campaigns per design are in
 * docs/calibration.md. And the noisy checks' arithmetic on constructed inputs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  noisyChecks,
  noisyLines,
  parseSuite,
  type CampaignDesignResult,
  type CampaignDesignsResult,
} from '../../src/calibration/index.js';
import { runCampaignDesigns } from '../../src/calibration/campaign-designs.js';
import { deriveProtocol, loadCampaignTemplate } from '../../src/calibration/campaign-protocol.js';
import { derivedSuite, ROOT } from './support.js';

const N = 15;
const text = derivedSuite(['memvla'], 2, undefined, {
  designs: ['rc-memvla-noisy', 'rc-blind-noisy'],
  bands: 2,
  quick: { n: N, campaigns: 2 },
});
const loaded = parseSuite(text, 'derived.yaml');
const scratch = mkdtempSync(join(tmpdir(), 'imep-calibrate-noisy-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let result: CampaignDesignsResult;
const design = (id: string): CampaignDesignResult => result.designs.find((d) => d.id === id)!;

describe('noisy campaign designs through IMEP’s verdict path', () => {
  it('runs both designs under their registered noise; b′ and c′ are both non-zero and C is not an exact replicate', async () => {
    result = (await runCampaignDesigns(loaded, {
      root: ROOT,
      quick: true,
      simulated: 400,
      keepUnits: join(scratch, 'units'),
    }))!;
    const memvla = design('rc-memvla-noisy');
    const blind = design('rc-blind-noisy');
    expect(memvla.template).toBe('protocols/calibration/remembercolor-noisy-campaign.yaml');
    expect(memvla.executionNoise).toEqual({
      kind: 'action-gaussian',
      sigma: 0.08,
      seed: 20261131,
      scope: 'per-condition',
    });
    expect(memvla.campaigns.map((c) => [c.bOnlyT, c.cOnlyS, c.n])).toEqual(MEMVLA_COUNTS);
    expect(blind.campaigns.map((c) => [c.bOnlyT, c.cOnlyS, c.n])).toEqual(BLIND_COUNTS);
    // both directions exercised on θ, and the exact-repeat floor is a measured, non-zero number
    expect(memvla.pooled.bOnlyT).toBeGreaterThan(0);
    expect(memvla.pooled.cOnlyS).toBeGreaterThan(0);
    expect(blind.pooled.bOnlyT).toBeGreaterThan(0);
    expect(blind.pooled.cOnlyS).toBeGreaterThan(0);
    expect(memvla.replicateFloor).toMatchObject(MEMVLA_FLOOR);
    expect(blind.replicateFloor).toMatchObject(BLIND_FLOOR);
    expect(memvla.replicateFloor!.maxUpper!).toBeCloseTo(0.5331, 4); // the floor Q3 must clear in memvla's band 1
    expect(blind.replicateFloor!.maxUpper!).toBeCloseTo(0.319, 4);
    for (const d of [memvla, blind]) for (const c of d.campaigns) expect(c.gates.every((g) => g.passed)).toBe(true);
  }, 600_000);

  it('counts every registered rule: the memory-blind checkpoint never holds, the positive control’s Q4_theta always does', () => {
    expect(design('rc-blind-noisy').criteria.map((k) => [k.criterion, k.detected, k.campaigns])).toEqual([
      ['Q4_theta', 0, 2],
      ['Q3_T', 0, 2],
      ['Q3_S', 0, 2],
    ]);
    expect(design('rc-memvla-noisy').criteria.map((k) => [k.criterion, k.detected])).toEqual([
      ['Q4_theta', 2],
      ['Q3_T', 2],
      ['Q3_S', 0],
    ]);
    const checks = noisyChecks(loaded, result.designs, 'Q4_theta', 400, true)!;
    expect(checks.falsePositive.map((f) => [f.criterion, f.detected, f.passed])).toEqual([
      ['Q4_theta', 0, true],
      ['Q3_T', 0, true],
      ['Q3_S', 0, true],
    ]);
    // a quick check of 2 campaigns: pass iff ≤ 1 'holds'; it cannot fail a rule at 2α (P = 1 − P(Bin(2, 0.1) ≤ 1) = 0.01)
    expect(checks.falsePositive[0]!.rule.maxFalsePositives).toBe(1);
    expect(checks.falsePositive[0]!.rule.failAtTwiceAlpha).toBeCloseTo(0.01, 12);
    expect(checks.falsePositive[0]!.sized).toBe(false);
    expect(checks.falsePositive[0]!.quick).toBe(true);
    expect(checks.falsePositive[0]!.cp95.upper).toBeCloseTo(1 - 0.025 ** 0.5, 12); // exact CP at 0/2
    const power = checks.power[0]!;
    expect(power.real).toMatchObject({ detected: 2, campaigns: 2, rate: 1 });
    expect(power.mde).not.toBeNull();
    expect(power.pooled.theta).toBeGreaterThanOrEqual(power.mde!);
    expect(power.passed).toBe(true);
    expect(checks.passed).toBe(true);
    expect(
      noisyLines(checks).some(
        (l) =>
          l.startsWith('noisy false-positive rc-blind-noisy Q3_T: 0/2 = 0.00%, CP 95% [0.00%, 84.19%], 0 ≤ 1') &&
          l.includes('P(fail | FPR = 0.1) = 1.00%') &&
          l.includes('QUICK check, not sized — the sized check is B = 233, pass iff ≤ 17 false positives'),
      ),
    ).toBe(true);
  });
});

function fakeDesign(
  id: string,
  truth: 'fact-use' | 'none',
  holds: Record<string, number>,
  campaigns: number,
  pooled: { b: number; c: number; n: number },
): CampaignDesignResult {
  return {
    id,
    truth,
    checkpoint: 'x',
    description: null,
    campaigns: Array.from({ length: campaigns }, () => ({}) as never),
    pooled: { bOnlyT: pooled.b, cOnlyS: pooled.c, n: pooled.n, removed: 0, theta: (pooled.b - pooled.c) / pooled.n },
    verdicts: {},
    template: 't.yaml',
    executionNoise: { kind: 'action-gaussian', sigma: 0.08, seed: 1, scope: 'per-condition' },
    criteria: Object.entries(holds).map(([criterion, detected]) => ({
      criterion,
      rule: 'lower-bound-above',
      estimand: 'theta',
      alpha: 0.05,
      verdicts: {},
      detected,
      campaigns,
      rate: detected / campaigns,
      cp95: { lower: 0, upper: 1 },
      upper95: 1,
    })),
    replicateFloor: null,
  } as unknown as CampaignDesignResult;
}

describe('noisy designs in the suite', () => {
  it('derive the design’s own template with its noise substituted, and nothing else', async () => {
    const d = loaded.suite.campaigns!.designs.find((x) => x.id === 'rc-blind-noisy')!;
    const t = await loadCampaignTemplate(loaded, ROOT, d.template, 'campaigns.designs[1].template');
    const ckpt = loaded.suite.checkpoints.find((k) => k.name === d.checkpoint)!;
    const derived = deriveProtocol(t, 'calibration-shellgame', d, ckpt, 30, [740000, 740029], 0);
    expect(derived.protocol.simulator).toEqual({
      kind: 'lite',
      executionNoise: { kind: 'action-gaussian', sigma: 0.08, seed: 20261132, scope: 'per-condition' },
    });
    expect(derived.text.split('\n')[0]).toContain(
      'id, checkpoint, seeds.bands, n, simulator.executionNoise substituted',
    );
    expect(derived.protocol.criteria.map((k) => k.id)).toEqual(['Q4_theta', 'Q3_T', 'Q3_S']);
  });

  it('refuses a design template whose bytes are not the registered ones, naming the design’s field', async () => {
    const d = loaded.suite.campaigns!.designs.find((x) => x.id === 'rc-blind-noisy')!;
    await expect(
      loadCampaignTemplate(loaded, ROOT, { ...d.template!, sha256: 'f'.repeat(64) }, 'campaigns.designs[1].template'),
    ).rejects.toMatchObject({
      code: 'E_PROTOCOL_INVALID',
      field: 'campaigns.designs[1].template.sha256',
    });
  });

  it('refuses execution noise a protocol would refuse (σ = 0), naming the suite field', () => {
    let caught: unknown;
    try {
      parseSuite(text.replace('sigma: 0.08, seed: 20261132', 'sigma: 0, seed: 20261132'), 'derived.yaml');
    } catch (e) {
      caught = e;
    }
    expect(caught).toMatchObject({
      code: 'E_PROTOCOL_INVALID',
      file: 'derived.yaml',
      field: 'campaigns.designs.1.executionNoise.sigma',
    });
  });
});

describe('noisy checks (pure)', () => {
  it('B = 20 is too weak to fail: a full run fails it as not sized even at 0/20; B = 233 passes 17 and fails 18', () => {
    const small = noisyChecks(
      loaded,
      [fakeDesign('blind', 'none', { Q4_theta: 0, Q3_T: 3 }, 20, { b: 10, c: 10, n: 1200 })],
      'Q4_theta',
      400,
    )!;
    // at B = 20 the exact rule is ≤ 3, which fails a rule at 2α with probability 0.133 only
    expect(small.falsePositive.map((f) => [f.criterion, f.rule.maxFalsePositives, f.sized, f.passed])).toEqual([
      ['Q4_theta', 3, false, false],
      ['Q3_T', 3, false, false],
    ]);
    expect(small.passed).toBe(false);
    expect(noisyLines(small).find((l) => l.includes('Q4_theta: 0/20'))).toContain('NOT SIZED');
    const sized = noisyChecks(
      loaded,
      [fakeDesign('blind', 'none', { Q4_theta: 17, Q3_T: 18 }, 233, { b: 10, c: 10, n: 1200 })],
      'Q4_theta',
      400,
    )!;
    expect(sized.falsePositive.map((f) => [f.criterion, f.rule.maxFalsePositives, f.sized, f.passed])).toEqual([
      ['Q4_theta', 17, true, true],
      ['Q3_T', 17, true, false],
    ]);
  });

  it('a positive control below the MDE at its discordance fails even when every campaign detects', () => {
    // ρ̂ = 0.5, θ̂ = 0.05 at n = 60: far below the MDE (≈ 0.23), although 20/20 campaigns "held"
    const weak = noisyChecks(
      loaded,
      [fakeDesign('weak', 'fact-use', { Q4_theta: 20 }, 20, { b: 330, c: 270, n: 1200 })],
      'Q4_theta',
      400,
    )!;
    expect(weak.power[0]!.n).toBe(60);
    expect(weak.power[0]!.mde!).toBeCloseTo(0.2341, 4);
    expect(weak.power[0]!.passed).toBe(false);
    // the same counts with θ̂ = 0.4 pass, and stats-level campaigns at exactly the MDE reach ≈ 80%
    const strong = noisyChecks(
      loaded,
      [fakeDesign('strong', 'fact-use', { Q4_theta: 19 }, 20, { b: 540, c: 60, n: 1200 })],
      'Q4_theta',
      400,
    )!;
    const p = strong.power[0]!;
    expect(p.passed).toBe(true);
    expect(p.atMde!.rate).toBeGreaterThan(0.8 - 2 * p.atMde!.mcError);
    expect(p.atMde!.rate).toBeLessThan(0.9);
  });

  it('no noisy design: no noisy checks', () => {
    expect(
      noisyChecks(
        loaded,
        [{ ...fakeDesign('plain', 'none', {}, 2, { b: 0, c: 0, n: 60 }), executionNoise: null }],
        'Q4_theta',
        400,
      ),
    ).toBeNull();
  });
});

// The measured values (deterministic: same suite, checkpoints and code → the same counts).
// [b′, c′, n] per band (RC3 + RC5, 15 seeds each; one unit of band 1 is removed, donor-short, fail closed)
// re-measured after issue #32 (RememberColor-lite: tool at home, candidates at fixed places)
const MEMVLA_COUNTS = [
  [21, 3, 30],
  [15, 6, 29],
];
const BLIND_COUNTS = [
  [0, 3, 30],
  [1, 1, 29],
];
// C against A, pooled: without noise these are b = c = 0 in every lite campaign
const MEMVLA_FLOOR = { estimand: 'rho_C', b: 10, c: 9, n: 60, campaignsWithChanges: 2 };
const BLIND_FLOOR = { estimand: 'rho_C', b: 4, c: 3, n: 60, campaignsWithChanges: 2 };
