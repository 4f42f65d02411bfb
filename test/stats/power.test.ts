import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import { PRNG_NAME, PRNG_VERSION } from '../../src/core/prng.js';
import { mcnemarExact } from '../../src/stats/mcnemar.js';
import { minimumDetectableEffect, pairedPower, pairedPowerExact } from '../../src/stats/power.js';

/** Brute-force exact power: every trinomial outcome (b, c), the test applied by mcnemarExact itself. */
function bruteForcePower(n: number, rho: number, effect: number, alpha: number, twoSided: boolean): number {
  const pb = (rho + effect) / 2;
  const pc = (rho - effect) / 2;
  const p0 = 1 - rho;
  const logFact: number[] = [0];
  for (let i = 1; i <= n; i++) logFact.push((logFact[i - 1] as number) + Math.log(i));
  const lf = (i: number): number => logFact[i] as number;
  let power = 0;
  for (let b = 0; b <= n; b++) {
    for (let c = 0; b + c <= n; c++) {
      const p = twoSided ? mcnemarExact(b, c) : mcnemarExact(b, c, 'greater');
      if (p > alpha) continue;
      const z = n - b - c;
      const logw =
        lf(n) -
        lf(b) -
        lf(c) -
        lf(z) +
        (b > 0 ? b * Math.log(pb) : 0) +
        (c > 0 ? c * Math.log(pc) : 0) +
        (z > 0 ? z * Math.log(p0) : 0);
      power += Math.exp(logw);
    }
  }
  return power;
}

describe('paired power and MDE', () => {
  it('reproduces the paper MDEs at n = 400, one-sided exact test, α = 0.05, 80% power', () => {
    const at32 = minimumDetectableEffect({
      n: 400,
      rhoDiscordant: 0.032,
      alpha: 0.05,
      power: 0.8,
      test: 'mcnemar-one-sided',
    });
    const at80 = minimumDetectableEffect({
      n: 400,
      rhoDiscordant: 0.08,
      alpha: 0.05,
      power: 0.8,
      test: 'mcnemar-one-sided',
    });
    if (at32.status !== 'found' || at80.status !== 'found') throw new Error('MDE not found');
    expect((100 * at32.effect).toFixed(2)).toBe('2.33');
    expect((100 * at80.effect).toFixed(2)).toBe('3.65');
    // raw values of this implementation (exact power, bisection to 1e-7)
    expect(Math.abs(100 * at32.effect - 2.3255)).toBeLessThan(1e-4);
    expect(Math.abs(100 * at80.effect - 3.6485)).toBeLessThan(1e-4);
    expect(at32.achievedPower).toBeGreaterThanOrEqual(0.8);
    expect(at32.achievedPower).toBeLessThan(0.8001);
  });

  it('exact power equals a brute-force sum over every trinomial outcome', () => {
    for (const [n, rho, effect] of [
      [30, 0.3, 0.15],
      [40, 0.5, 0.2],
      [25, 0.2, 0],
    ] as const) {
      for (const twoSided of [false, true]) {
        const ours = pairedPowerExact({
          n,
          rhoDiscordant: rho,
          effect,
          alpha: 0.05,
          test: twoSided ? 'mcnemar-two-sided' : 'mcnemar-one-sided',
        });
        expect(Math.abs(ours - bruteForcePower(n, rho, effect, 0.05, twoSided))).toBeLessThan(1e-12);
      }
    }
  });

  it('keeps the size at θ = 0 at or below α', () => {
    for (const test of ['mcnemar-one-sided', 'mcnemar-two-sided'] as const) {
      for (const rho of [0.032, 0.08, 0.3]) {
        expect(pairedPowerExact({ n: 400, rhoDiscordant: rho, effect: 0, alpha: 0.05, test })).toBeLessThanOrEqual(
          0.05,
        );
      }
    }
  });

  it('Monte-Carlo power agrees with the exact power within 4 standard errors, and records its seed', () => {
    const design = { n: 400, rhoDiscordant: 0.032, effect: 0.023255, alpha: 0.05, test: 'mcnemar-one-sided' } as const;
    const mc = pairedPower({ ...design, replicates: 4000, seed: 20260824 });
    const exact = pairedPowerExact(design);
    expect(Math.abs(mc.power - exact)).toBeLessThan(4 * mc.mcError);
    expect(mc.mcError).toBeCloseTo(Math.sqrt((mc.power * (1 - mc.power)) / 4000), 15);
    expect(mc).toMatchObject({
      replicates: 4000,
      seed: 20260824,
      prng: { name: PRNG_NAME, version: PRNG_VERSION, seed: 20260824 },
    });
  });

  it('is reproducible for a seed and changes with the seed', () => {
    const opts = { n: 200, rhoDiscordant: 0.1, effect: 0.05, replicates: 500, test: 'mcnemar-two-sided' } as const;
    const a = pairedPower({ ...opts, seed: 7 });
    const b = pairedPower({ ...opts, seed: 7 });
    const c = pairedPower({ ...opts, seed: 8 });
    expect(b.power).toBe(a.power);
    expect(c.power).not.toBe(a.power);
  });

  it('exact power increases with θ', () => {
    let prev = -1;
    for (let k = 0; k <= 12; k++) {
      const p = pairedPowerExact({ n: 400, rhoDiscordant: 0.032, effect: k / 400 });
      expect(p).toBeGreaterThan(prev);
      prev = p;
    }
  });

  it('finds the MDE on the 1/n grid and by Monte-Carlo', () => {
    const unit = minimumDetectableEffect({ n: 400, rhoDiscordant: 0.032, grid: 'unit' });
    if (unit.status !== 'found') throw new Error('not found');
    expect(unit.effect * 400).toBe(10);
    expect(unit.achievedPower).toBeGreaterThanOrEqual(0.8);
    expect(pairedPowerExact({ n: 400, rhoDiscordant: 0.032, effect: 9 / 400 })).toBeLessThan(0.8);
    const mc = minimumDetectableEffect({
      n: 400,
      rhoDiscordant: 0.032,
      method: 'monte-carlo',
      replicates: 2000,
      seed: 1,
    });
    if (mc.status !== 'found') throw new Error('not found');
    expect(Math.abs(mc.effect - 0.023255)).toBeLessThan(0.002);
  });

  it('reports an unreachable target instead of a number', () => {
    expect(minimumDetectableEffect({ n: 400, rhoDiscordant: 0 })).toMatchObject({ status: 'unreachable', maxPower: 0 });
    const r = minimumDetectableEffect({ n: 20, rhoDiscordant: 0.05, power: 0.8 });
    expect(r.status).toBe('unreachable');
  });

  it('rejects impossible designs naming the field', () => {
    const cases: [() => unknown, string][] = [
      [() => pairedPowerExact({ n: 400, rhoDiscordant: 0.03, effect: 0.05 }), 'effect'],
      [() => pairedPowerExact({ n: 0, rhoDiscordant: 0.03, effect: 0 }), 'n'],
      [() => pairedPowerExact({ n: 10, rhoDiscordant: 1.5, effect: 0 }), 'rhoDiscordant'],
      [() => pairedPower({ n: 10, rhoDiscordant: 0.5, effect: 0, replicates: 0, seed: 1 }), 'replicates'],
      [() => minimumDetectableEffect({ n: 10, rhoDiscordant: 0.5, power: 1 }), 'power'],
      [() => minimumDetectableEffect({ n: 10, rhoDiscordant: 0.5, method: 'monte-carlo' }), 'seed'],
    ];
    for (const [f, field] of cases) {
      try {
        f();
        throw new Error('no error');
      } catch (e) {
        expect(e).toBeInstanceOf(ImepError);
        expect((e as ImepError).field).toBe(field);
      }
    }
  });
});
