import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { tensorFrom } from '../../src/core/tensor.js';
import { cosine, cosineOfUnits, dot64, isDegenerate, unitVector } from '../../src/banks/cosine.js';
import { isImepError } from '../../src/core/errors.js';
import { t } from './helpers.js';

describe('cosine', () => {
  it('is 1 for parallel, 0 for orthogonal, -1 for opposite vectors', () => {
    expect(cosine(t([1, 0]), t([2, 0]))).toBe(1);
    expect(cosine(t([1, 0]), t([0, 3]))).toBe(0);
    expect(cosine(t([1, 0]), t([-5, 0]))).toBe(-1);
    expect(cosine(t([3, 4]), t([1, 0]))).toBe(0.6);
  });

  it('returns exactly 0 against a zero vector (documented), also for -0', () => {
    expect(cosine(t([0, 0, 0]), t([1, 2, 3]))).toBe(0);
    expect(cosine(t([-0, 0]), t([-0, 0]))).toBe(0);
    expect(isDegenerate(t([0, -0]))).toBe(true);
  });

  it('treats vectors holding NaN or ±Infinity as degenerate (similarity 0)', () => {
    expect(cosine(t([NaN, 1]), t([1, 1]))).toBe(0);
    expect(cosine(t([1, NaN, 1]), t([1, 1, 1]))).toBe(0);
    expect(cosine(t([Infinity, 1], 'float64'), t([1, 1]))).toBe(0);
    expect(isDegenerate(t([1, 2]))).toBe(false);
  });

  it('works on exact float16 / bfloat16 values and mixes dtypes', () => {
    const a = tensorFrom('float16', [1, 2, 3]);
    const b = tensorFrom('bfloat16', [1, 2, 3]);
    expect(cosine(a, b)).toBeCloseTo(1, 15);
    expect(cosine(tensorFrom('float16', [0.5, 0]), tensorFrom('float64', [0, 7]))).toBe(0);
  });

  it('does not overflow or underflow on extreme magnitudes', () => {
    expect(cosine(t([1e300, 1e300], 'float64'), t([1, 1], 'float64'))).toBeCloseTo(1, 15);
    expect(cosine(t([1e-320, 0], 'float64'), t([1, 0], 'float64'))).toBe(1);
  });

  it('refuses vectors of different lengths', () => {
    let err: unknown;
    try {
      cosine(t([1, 2]), t([1, 2, 3]));
    } catch (e) {
      err = e;
    }
    expect(isImepError(err) && err.code === 'E_BANK_INVALID').toBe(true);
  });

  it('cached unit vectors give bit-identical similarities, close to the textbook formula', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 40 })
          .chain((n) =>
            fc.tuple(
              fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: n, maxLength: n }),
              fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: n, maxLength: n }),
            ),
          ),
        ([x, y]) => {
          const a = t(x, 'float64');
          const b = t(y, 'float64');
          const c = cosine(a, b);
          expect(Object.is(c, cosineOfUnits(unitVector(a), unitVector(b)))).toBe(true);
          const na = Math.hypot(...x);
          const nb = Math.hypot(...y);
          if (na > 1e-100 && nb > 1e-100) {
            const naive = x.reduce((s, v, i) => s + v * (y[i] as number), 0) / (na * nb);
            expect(Math.abs(c - naive)).toBeLessThan(1e-9);
          }
        },
      ),
      { seed: 11, numRuns: 500 },
    );
  });

  it('dot64 sums lanes in a fixed order for any length', () => {
    for (let n = 0; n < 10; n++) {
      const a = Float64Array.from({ length: n }, (_, i) => i + 1);
      const b = Float64Array.from({ length: n }, () => 2);
      expect(dot64(a, b)).toBe(n * (n + 1));
    }
  });
});
