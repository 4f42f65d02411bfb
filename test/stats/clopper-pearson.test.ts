import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ImepError } from '../../src/core/errors.js';
import { clopperPearson, clopperPearsonLower, clopperPearsonUpper } from '../../src/stats/clopper-pearson.js';
import { exactBinomialTailNumber } from '../../src/stats/binomial-exact.js';
import scipyRef from './fixtures/scipy-reference.json' with { type: 'json' };
import mpRef from './fixtures/mpmath-reference.json' with { type: 'json' };

function expectClose(ours: number, ref: number, rel: number, abs = 0, what = ''): void {
  const err = Math.abs(ours - ref);
  if (!(err <= rel * Math.abs(ref) || err <= abs)) {
    throw new Error(`${what}: ours ${ours} vs reference ${ref} (relative error ${err / Math.abs(ref)})`);
  }
}

const FC = { seed: 20260824, numRuns: 200 } as const;

describe('Clopper–Pearson', () => {
  it('reproduces the published 95% intervals at their printed precision', () => {
    expect((100 * clopperPearson(21, 200, 0.95)[1]).toFixed(1)).toBe('15.6');
    const fmt = (x: number, n: number, d: number): string[] => clopperPearson(x, n, 0.95).map((v) => v.toFixed(d));
    expect(fmt(78, 172, 3)).toEqual(['0.378', '0.531']);
    expect(fmt(202, 202, 3)).toEqual(['0.982', '1.000']);
    expect(fmt(88, 177, 3)).toEqual(['0.421', '0.573']);
    expect(fmt(88, 178, 3)).toEqual(['0.419', '0.570']);
    expect(clopperPearson(21, 300, 0.95).map((v) => (100 * v).toFixed(1))).toEqual(['4.4', '10.5']);
  });

  it('matches SciPy/Boost beta.ppf/isf (fixture, n up to 1e6, α down to 1e-10) to 1e-9 relative', () => {
    for (const r of scipyRef.clopperPearson) {
      const what = `x=${r.x} n=${r.n} α=${r.alpha}`;
      expectClose(clopperPearsonLower(r.x, r.n, r.alpha), r.lower, 1e-9, 0, `lower ${what}`);
      expectClose(clopperPearsonUpper(r.x, r.n, r.alpha), r.upper, 1e-9, 0, `upper ${what}`);
    }
  });

  it('matches 40-digit mpmath roots (fixture) to 1e-14 relative', () => {
    for (const r of mpRef.clopperPearson) {
      const what = `x=${r.x} n=${r.n} α=${r.alpha}`;
      expectClose(clopperPearsonLower(r.x, r.n, r.alpha), r.lower, 1e-14, 0, `lower ${what}`);
      expectClose(clopperPearsonUpper(r.x, r.n, r.alpha), r.upper, 1e-14, 0, `upper ${what}`);
    }
  });

  it('solves its defining equations exactly: P(X ≥ x | lower) = α and P(X ≤ x | upper) = α (BigInt tails)', () => {
    for (const [x, n] of [
      [1, 10],
      [3, 20],
      [7, 12],
      [13, 72],
      [6, 72],
      [50, 100],
      [99, 100],
    ] as const) {
      for (const alpha of [0.05, 0.025, 0.001]) {
        const lo = clopperPearsonLower(x, n, alpha);
        const hi = clopperPearsonUpper(x, n, alpha);
        expectClose(exactBinomialTailNumber(x, n, lo, 'upper'), alpha, 1e-12, 0, `lower x=${x} n=${n}`);
        expectClose(exactBinomialTailNumber(x, n, hi, 'lower'), alpha, 1e-12, 0, `upper x=${x} n=${n}`);
      }
    }
  });

  it('uses the closed forms at x = 0 and x = n, and [0, 1] for n = 0', () => {
    expect(clopperPearsonLower(0, 200, 0.05)).toBe(0);
    expectClose(clopperPearsonUpper(0, 200, 0.05), 1 - 0.05 ** (1 / 200), 1e-14);
    expect(clopperPearsonUpper(202, 202, 0.025)).toBe(1);
    expectClose(clopperPearsonLower(202, 202, 0.025), 0.025 ** (1 / 202), 1e-15);
    expectClose(clopperPearsonUpper(0, 1e6, 1e-10), -Math.expm1(Math.log(1e-10) / 1e6), 1e-15);
    expect(clopperPearson(0, 0)).toEqual([0, 1]);
  });

  it('brackets x/n, is monotone in x and widens as α shrinks (property, seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom(0.1, 0.05, 0.025, 0.005, 1e-6),
        (n, u, alpha) => {
          const x = Math.min(n, Math.floor(u * (n + 1)));
          const lo = clopperPearsonLower(x, n, alpha);
          const hi = clopperPearsonUpper(x, n, alpha);
          expect(lo).toBeLessThanOrEqual(x / n);
          expect(hi).toBeGreaterThanOrEqual(x / n);
          expect(lo).toBeGreaterThanOrEqual(0);
          expect(hi).toBeLessThanOrEqual(1);
          if (x < n) {
            expect(clopperPearsonLower(x + 1, n, alpha)).toBeGreaterThan(lo);
            expect(clopperPearsonUpper(x + 1, n, alpha)).toBeGreaterThan(hi);
          }
          expect(clopperPearsonLower(x, n, alpha / 2)).toBeLessThanOrEqual(lo);
          expect(clopperPearsonUpper(x, n, alpha / 2)).toBeGreaterThanOrEqual(hi);
        },
      ),
      FC,
    );
  });

  it('two-sided interval spends (1 − level)/2 per side', () => {
    const [lo, hi] = clopperPearson(13, 72, 0.9);
    expect(lo).toBe(clopperPearsonLower(13, 72, (1 - 0.9) / 2));
    expect(hi).toBe(clopperPearsonUpper(13, 72, (1 - 0.9) / 2));
    expect(lo).toBeCloseTo(clopperPearsonLower(13, 72, 0.05), 14);
  });

  it('rejects bad arguments naming them', () => {
    const cases: [() => unknown, string][] = [
      [() => clopperPearsonLower(5, 4, 0.05), 'x'],
      [() => clopperPearsonUpper(-1, 4, 0.05), 'x'],
      [() => clopperPearsonUpper(1, 4.5, 0.05), 'n'],
      [() => clopperPearsonUpper(1, 4, 0), 'alpha'],
      [() => clopperPearsonLower(1, 4, 1), 'alpha'],
      [() => clopperPearson(1, 4, 1.2), 'level'],
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
