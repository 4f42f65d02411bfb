import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Prng } from '../../src/core/prng.js';
import { tensorFrom, tensorsBitEqual, toFloat64, type FloatDtype } from '../../src/core/tensor.js';
import { emptyLeafStats } from '../../src/interventions/leaf-operator.js';
import { fillStandardNormal } from '../../src/interventions/normal.js';
import { finiteMoments, resampleLeaf } from '../../src/interventions/resample.js';

fc.configureGlobal({ seed: 20260903, numRuns: 2000 });

const DTYPES: readonly FloatDtype[] = ['float16', 'bfloat16', 'float32', 'float64'];
/** Relative precision of each dtype (half an ULP at 1). */
const EPS: Record<FloatDtype, number> = { float16: 2 ** -11, bfloat16: 2 ** -8, float32: 2 ** -24, float64: 2 ** -53 };

describe('T_μ: moment-matched resample', () => {
  it('keeps dtype and shape and matches the finite mean and SD up to rounding to the dtype', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DTYPES),
        fc.array(fc.double({ min: -1000, max: 1000, noNaN: true }), { minLength: 2, maxLength: 200 }),
        fc.integer(),
        (dtype, values, seed) => {
          const t = tensorFrom(dtype, values);
          const m0 = finiteMoments(toFloat64(t));
          fc.pre(m0.sd > 1e-3 * (Math.abs(m0.mean) + 1));
          const out = resampleLeaf(t, new Prng(seed));
          expect(out.dtype).toBe(dtype);
          expect(out.shape).toEqual(t.shape);
          const m1 = finiteMoments(toFloat64(out));
          expect(m1.finite).toBe(m0.finite);
          // Rounding each value to the dtype moves it by at most eps·(|μ| + k·σ); allow a generous bound.
          const tol = 4 * EPS[dtype] * (Math.abs(m0.mean) + 12 * m0.sd) + 1e-12;
          expect(Math.abs(m1.mean - m0.mean)).toBeLessThanOrEqual(tol);
          expect(Math.abs(m1.sd - m0.sd)).toBeLessThanOrEqual(tol * 2);
        },
      ),
    );
  });

  it('keeps non-finite elements in place and draws only the finite ones', () => {
    const t = tensorFrom('float32', [1, NaN, 2, Infinity, 3, -Infinity, 4]);
    const stats = emptyLeafStats();
    const out = resampleLeaf(t, new Prng(5), stats);
    expect(stats.nonFinite).toBe(3);
    expect(Number.isNaN(out.data[1] as number)).toBe(true);
    expect(out.data[3]).toBe(Infinity);
    expect(out.data[5]).toBe(-Infinity);
    const m = finiteMoments(toFloat64(out));
    expect(m.mean).toBeCloseTo(2.5, 5);
    expect(m.sd).toBeCloseTo(Math.sqrt(1.25), 5);
  });

  it('returns a byte copy for a constant latent or a single finite value', () => {
    for (const values of [[3, 3, 3, 3], [7], [NaN, 2]]) {
      const t = tensorFrom('bfloat16', values);
      const out = resampleLeaf(t, new Prng(1));
      expect(tensorsBitEqual(out, t)).toBe(true);
      expect(out.data).not.toBe(t.data);
    }
  });

  it('never creates an infinity in a narrow dtype (clamped to max finite)', () => {
    const t = tensorFrom('float16', [65504, -65504, 65504, -65504, 0, 0]);
    for (let s = 0; s < 50; s++) {
      const out = resampleLeaf(t, new Prng(s));
      for (const v of toFloat64(out)) expect(Number.isFinite(v)).toBe(true);
    }
  });

  it('changes content and is deterministic in the seed', () => {
    const t = tensorFrom(
      'float32',
      Array.from({ length: 4096 }, (_, i) => Math.sin(i)),
      [16, 256],
    );
    const a = resampleLeaf(t, new Prng('x'));
    expect(tensorsBitEqual(a, resampleLeaf(t, new Prng('x')))).toBe(true);
    expect(tensorsBitEqual(a, t)).toBe(false);
    expect(tensorsBitEqual(a, resampleLeaf(t, new Prng('y')))).toBe(false);
  });
});

describe('ziggurat standard normal', () => {
  it('has the moments and tail mass of N(0,1) (200k draws)', () => {
    const n = 200_000;
    const z = new Float64Array(n);
    fillStandardNormal(new Prng('zig'), z);
    let s = 0,
      s2 = 0,
      s4 = 0,
      in1 = 0,
      beyond3 = 0,
      beyondR = 0;
    for (const v of z) {
      s += v;
      s2 += v * v;
      s4 += v ** 4;
      if (Math.abs(v) < 1) in1++;
      if (Math.abs(v) > 3) beyond3++;
      if (Math.abs(v) > 3.442619855899) beyondR++;
    }
    expect(Math.abs(s / n)).toBeLessThan(0.01);
    expect(Math.abs(s2 / n - 1)).toBeLessThan(0.015);
    expect(Math.abs(s4 / n - 3)).toBeLessThan(0.1);
    expect(Math.abs(in1 / n - 0.682689)).toBeLessThan(0.004);
    expect(Math.abs(beyond3 / n - 0.0026998)).toBeLessThan(0.0006);
    expect(beyondR).toBeGreaterThan(40); // tail sampler is reached (expected ≈ 115)
  });

  it('passes a 20-bin chi-square against the normal CDF', () => {
    const n = 100_000;
    const z = new Float64Array(n);
    fillStandardNormal(new Prng(99), z);
    // Bins with equal probability 1/20 under N(0,1): quantiles of the standard normal.
    const q = [
      -1.6449, -1.2816, -1.0364, -0.8416, -0.6745, -0.5244, -0.3853, -0.2533, -0.1257, 0, 0.1257, 0.2533, 0.3853,
      0.5244, 0.6745, 0.8416, 1.0364, 1.2816, 1.6449,
    ];
    const counts = new Array<number>(20).fill(0);
    for (const v of z) {
      let k = 0;
      while (k < q.length && v > (q[k] as number)) k++;
      counts[k]! += 1;
    }
    const e = n / 20;
    const chi2 = counts.reduce((acc, o) => acc + (o - e) ** 2 / e, 0);
    expect(chi2).toBeLessThan(43.8); // p ≈ 0.001 at 19 df
  });
});
