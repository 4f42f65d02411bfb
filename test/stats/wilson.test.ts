import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import { wilson } from '../../src/stats/wilson.js';

function round3(xs: readonly number[]): number[] {
  return xs.map((v) => Math.round(v * 1000) / 1000);
}

function expectDomain(fn: () => unknown, field: string): void {
  try {
    fn();
    expect.unreachable();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    expect((e as ImepError).code).toBe('E_STATS_DOMAIN');
    expect((e as ImepError).field).toBe(field);
  }
}

describe('wilson', () => {
  // IMEP paper, blackout 2×2: Wilson 95% intervals for attempt-1 success at n = 200.
  it('reproduces the paper: view visible, reads on = 188/200 → [0.898, 0.965]', () => {
    expect(round3(wilson(188, 200))).toEqual([0.898, 0.965]);
  });
  it('reproduces the paper: view visible, reads blocked = 187/200 → [0.892, 0.962]', () => {
    expect(round3(wilson(187, 200))).toEqual([0.892, 0.962]);
  });
  it('reproduces the paper: blackout, reads on = 147/200 → [0.670, 0.791]', () => {
    expect(round3(wilson(147, 200))).toEqual([0.67, 0.791]);
  });
  it('reproduces the paper: blackout, reads blocked = 139/200 → [0.628, 0.755]', () => {
    expect(round3(wilson(139, 200))).toEqual([0.628, 0.755]);
  });
  it('the four cells are consistent with b = 9, c = 1 (D = +4 pp) and +0.5 pp with the view visible', () => {
    expect((147 - 139) / 200).toBe(0.04);
    expect((188 - 187) / 200).toBe(0.005);
  });
  it('reproduces the paper: A_W1 Wilson 95% upper bound 0.195 at 28/200 (0.140)', () => {
    const [lo, hi] = wilson(28, 200);
    expect(hi).toBeCloseTo(0.1948988, 6);
    expect(Math.round(hi * 1000) / 1000).toBe(0.195);
    expect(hi).toBeLessThan(1 / 3);
    expect(lo).toBeCloseTo(0.0986698, 6);
  });

  it('gives exact 0 and 1 at the ends', () => {
    expect(wilson(0, 10)[0]).toBe(0);
    expect(wilson(10, 10)[1]).toBe(1);
    const z2 = 1.959963984540054 ** 2;
    expect(wilson(0, 10)[1]).toBeCloseTo(z2 / (10 + z2), 12);
  });

  it('one-sided bounds use z = Φ⁻¹(level)', () => {
    const [, hiTwo90] = wilson(28, 200, 0.9);
    const [zero, hiUp95] = wilson(28, 200, 0.95, 'upper');
    expect(zero).toBe(0);
    expect(hiUp95).toBeCloseTo(hiTwo90, 12);
    const [loLow, one] = wilson(28, 200, 0.95, 'lower');
    expect(one).toBe(1);
    expect(loLow).toBeCloseTo(wilson(28, 200, 0.9)[0], 12);
  });

  it('validates arguments, naming them', () => {
    expectDomain(() => wilson(-1, 10), 'x');
    expectDomain(() => wilson(1.5, 10), 'x');
    expectDomain(() => wilson(11, 10), 'x');
    expectDomain(() => wilson(0, 0), 'n');
    expectDomain(() => wilson(1, 10, 1), 'level');
    expectDomain(() => wilson(1, 10, 0), 'level');
    expectDomain(() => wilson(1, 10, NaN), 'level');
  });

  it('contains the point estimate, stays in [0, 1], and nests by level (property, seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }).chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
        fc.double({ min: 0.5, max: 0.999, noNaN: true }),
        ([x, n], level) => {
          const [lo, hi] = wilson(x, n, level);
          expect(lo).toBeGreaterThanOrEqual(0);
          expect(hi).toBeLessThanOrEqual(1);
          expect(lo).toBeLessThanOrEqual(x / n + 1e-15);
          expect(hi).toBeGreaterThanOrEqual(x / n - 1e-15);
          const [lo2, hi2] = wilson(x, n, Math.min(0.9999, level + 0.0001));
          expect(lo2).toBeLessThanOrEqual(lo + 1e-15);
          expect(hi2).toBeGreaterThanOrEqual(hi - 1e-15);
          const [mlo, mhi] = wilson(n - x, n, level);
          expect(mlo).toBeCloseTo(1 - hi, 12);
          expect(mhi).toBeCloseTo(1 - lo, 12);
        },
      ),
      { seed: 7, numRuns: 400 },
    );
  });
});
