import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ImepError } from '../../src/core/errors.js';
import {
  binomialCdf,
  binomialPmf,
  binomialSf,
  logBinomialCdf,
  logBinomialPmf,
  logBinomialSf,
} from '../../src/stats/binomial.js';
import {
  doubleToRational,
  exactBinomialTail,
  exactBinomialTailNumber,
  rationalToNumber,
} from '../../src/stats/binomial-exact.js';
import scipyRef from './fixtures/scipy-reference.json' with { type: 'json' };
import mpRef from './fixtures/mpmath-reference.json' with { type: 'json' };

/** The documented precision: relative error ≤ 2ε·(|ln P| + 30). */
const tolFor = (ref: number): number => 4.4e-16 * (30 + Math.abs(Math.log(ref)));

function expectClose(ours: number, ref: number, rel: number, abs = 0, what = ''): void {
  const err = Math.abs(ours - ref);
  if (!(err <= rel * Math.abs(ref) || err <= abs)) {
    throw new Error(`${what}: ours ${ours} vs reference ${ref} (relative error ${err / Math.abs(ref)})`);
  }
}

const FC = { seed: 20260824, numRuns: 200 } as const;

describe('BigInt exact reference (binomial-exact.ts)', () => {
  it('converts doubles to exact rationals and back', () => {
    expect(doubleToRational(0.5)).toEqual({ num: 1n, den: 2n });
    expect(doubleToRational(0.75)).toEqual({ num: 3n, den: 4n });
    for (const p of [0.1, 0.3, 1 / 3, 0.999, 1e-300, 5e-324, 0, 1])
      expect(rationalToNumber(doubleToRational(p))).toBe(p);
    expect(rationalToNumber({ num: 1n, den: 3n })).toBe(1 / 3);
  });

  it('sums exactly: P(X ≤ 1 | 10, ½) = 11/1024', () => {
    expect(exactBinomialTail(1, 10, 0.5, 'lower')).toEqual({ num: 11n, den: 1024n });
    expect(exactBinomialTailNumber(7, 12, 0.5, 'upper')).toBe(1586 / 4096);
  });
});

describe('binomialCdf / binomialSf', () => {
  it('agree with the exact rational sums (BigInt) for n ≤ 60 at several p', () => {
    for (const n of [1, 2, 3, 7, 20, 41, 60]) {
      for (const p of [0.5, 0.1, 0.3, 1 / 3, 0.7, 0.999, 1e-3]) {
        for (let k = 0; k <= n; k++) {
          const lo = exactBinomialTailNumber(k, n, p, 'lower');
          const hi = exactBinomialTailNumber(k, n, p, 'upper');
          expectClose(binomialCdf(k, n, p), lo, tolFor(lo), 1e-300, `cdf k=${k} n=${n} p=${p}`);
          expectClose(binomialSf(k, n, p), hi, tolFor(hi), 1e-300, `sf k=${k} n=${n} p=${p}`);
        }
      }
    }
  });

  it('agree with the exact rational sums for n = 200, p = ½ (every k)', () => {
    for (let k = 0; k <= 200; k++) {
      const ref = exactBinomialTailNumber(k, 200, 0.5, 'lower');
      expectClose(binomialCdf(k, 200, 0.5), ref, tolFor(ref), 0, `k=${k}`);
    }
  });

  it('match SciPy/Boost (fixture, n up to 1e7) to 1e-9 relative', () => {
    for (const r of scipyRef.binomial) {
      const what = `k=${r.k} n=${r.n} p=${r.p}`;
      expectClose(binomialCdf(r.k, r.n, r.p), r.cdf, 1e-9, 1e-300, `cdf ${what}`);
      expectClose(binomialSf(r.k, r.n, r.p), r.sf, 1e-9, 1e-300, `sf ${what}`);
    }
  });

  it('match 40-digit summation (mpmath fixture, n up to 1e7, tails to 1e-75) to 1e-12 relative', () => {
    for (const r of mpRef.binomial) {
      const what = `k=${r.k} n=${r.n} p=${r.p}`;
      expectClose(binomialCdf(r.k, r.n, r.p), r.cdf, 1e-12, 1e-300, `cdf ${what}`);
      expectClose(binomialSf(r.k, r.n, r.p), r.sf, 1e-12, 1e-300, `sf ${what}`);
    }
  });

  it('handle the edges', () => {
    expect(binomialCdf(-1, 10, 0.3)).toBe(0);
    expect(binomialCdf(10, 10, 0.3)).toBe(1);
    expect(binomialCdf(12, 10, 0.3)).toBe(1);
    expect(binomialSf(0, 10, 0.3)).toBe(1);
    expect(binomialSf(-3, 10, 0.3)).toBe(1);
    expect(binomialSf(11, 10, 0.3)).toBe(0);
    expect(binomialCdf(0, 10, 0)).toBe(1);
    expect(binomialSf(1, 10, 0)).toBe(0);
    expect(binomialCdf(9, 10, 1)).toBe(0);
    expect(binomialSf(10, 10, 1)).toBe(1);
    expect(binomialCdf(0, 0, 0.4)).toBe(1);
    expect(binomialSf(1, 0, 0.4)).toBe(0);
    expectClose(binomialCdf(0, 10, 0.3), 0.7 ** 10, 1e-14);
    expectClose(binomialSf(10, 10, 0.3), 0.3 ** 10, 1e-14);
  });

  it('log versions do not underflow', () => {
    expectClose(logBinomialSf(1e6, 1e6, 0.5), 1e6 * Math.log(0.5), 1e-14);
    expectClose(logBinomialCdf(0, 1e6, 0.5), 1e6 * Math.log(0.5), 1e-14);
    expect(logBinomialCdf(-1, 5, 0.5)).toBe(-Infinity);
    expect(Number.isFinite(logBinomialCdf(10, 1e7, 0.5))).toBe(true);
    expect(binomialCdf(10, 1e7, 0.5)).toBe(0);
  });

  it('cdf(k) + sf(k+1) = 1 and both are monotone in k (property, seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (n, p, u) => {
          const k = Math.floor(u * (n + 1)) - 1; // −1..n
          expect(Math.abs(binomialCdf(k, n, p) + binomialSf(k + 1, n, p) - 1)).toBeLessThan(1e-14);
          expect(binomialCdf(k + 1, n, p)).toBeGreaterThanOrEqual(binomialCdf(k, n, p));
        },
      ),
      FC,
    );
  });

  it('pmf matches the exact rational mass and sums to 1', () => {
    for (const p of [0.5, 0.2, 0.999]) {
      let total = 0;
      for (let k = 0; k <= 40; k++) {
        const exact = rationalToNumber({
          num: exactBinomialTail(k, 40, p, 'lower').num - exactBinomialTail(k - 1, 40, p, 'lower').num,
          den: exactBinomialTail(k, 40, p, 'lower').den,
        });
        expectClose(binomialPmf(k, 40, p), exact, tolFor(exact), 1e-300, `pmf k=${k} p=${p}`);
        total += binomialPmf(k, 40, p);
      }
      expect(Math.abs(total - 1)).toBeLessThan(1e-14);
    }
    expect(logBinomialPmf(3, 2, 0.5)).toBe(-Infinity);
  });

  it('rejects bad arguments naming them', () => {
    const bad: [() => unknown, string][] = [
      [() => binomialCdf(1.5, 10, 0.5), 'k'],
      [() => binomialSf(1, -1, 0.5), 'n'],
      [() => binomialSf(1, 2.5, 0.5), 'n'],
      [() => binomialCdf(1, 10, 1.2), 'p'],
      [() => binomialCdf(1, 10, Number.NaN), 'p'],
    ];
    for (const [f, field] of bad) {
      expect(f).toThrow(ImepError);
      try {
        f();
      } catch (e) {
        expect((e as ImepError).field).toBe(field);
        expect((e as ImepError).code).toBe('E_STATS_DOMAIN');
      }
    }
  });
});
