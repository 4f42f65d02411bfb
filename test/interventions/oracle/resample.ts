/**
 * FROZEN TEST ORACLE — a verbatim copy of src/interventions/resample.ts as of commit 53b2e2e (before the
 * speed-up). The optimised operators must reproduce it bit for bit (test/interventions/bit-identical.test.ts).
 * Do not optimise or edit this copy.
 */
/**
 * T_μ — moment-matched resample. Each latent (one float leaf) is replaced by draws from a normal
 * distribution with the latent's own empirical mean and (population) standard deviation, rounded to the
 * latent's dtype; dtype and shape are kept.
 *
 * Decisions:
 * - The standard-normal draws are re-standardised to sample mean 0 and population SD 1 before scaling,
 *   so the resampled latent's mean and SD equal the original's up to rounding to the dtype.
 * - Moments are taken over the finite elements only; ±Inf and NaN elements keep their position and bits
 *   (counted as non-finite).
 * - With fewer than two finite elements, or SD 0 (a constant latent), the resample is the latent itself
 *   (a byte copy): there is no spread to draw from. Such a read's content digest does not change, which
 *   the "every substituted read changed its digest" gate reports.
 * - Draws are clamped to ±max finite of the dtype, so a resample never creates an infinity.
 */
import type { Prng } from '../../../src/core/prng.js';
import { numberToBfloat16, numberToHalf, toFloat64, type FloatTensor } from '../../../src/core/tensor.js';
import type { LeafOperator, LeafStats } from '../../../src/interventions/leaf-operator.js';
import { fillStandardNormal } from './normal.js';

const MAX_FINITE = {
  float16: 65504,
  bfloat16: 3.3895313892515355e38,
  float32: 3.4028234663852886e38,
  float64: Number.MAX_VALUE,
} as const;

export interface Moments {
  readonly finite: number;
  readonly mean: number;
  /** Population standard deviation (divides by the finite count). */
  readonly sd: number;
}

/** Mean and population SD over the finite values (two-pass). */
export function finiteMoments(values: Float64Array): Moments {
  let n = 0,
    sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isFinite(v)) {
      n++;
      sum += v;
    }
  }
  if (n === 0) return { finite: 0, mean: NaN, sd: NaN };
  const mean = sum / n;
  let ss = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isFinite(v)) ss += (v - mean) * (v - mean);
  }
  return { finite: n, mean, sd: Math.sqrt(ss / n) };
}

let scratch = new Float64Array(0);

/** A new leaf drawn from N(mean, sd) of the leaf's own finite values (see the module comment). */
export function resampleLeaf(leaf: FloatTensor, prng: Prng, stats?: LeafStats): FloatTensor {
  const values = toFloat64(leaf);
  const { finite, mean, sd } = finiteMoments(values);
  if (stats) stats.nonFinite += values.length - finite;
  const data = leaf.data.slice();
  const shape = [...leaf.shape];
  const out = { dtype: leaf.dtype, shape, data } as FloatTensor;
  if (finite < 2 || !(sd > 0)) return out;

  if (scratch.length < finite) scratch = new Float64Array(finite);
  const z = scratch;
  fillStandardNormal(prng, z, finite);
  let zs = 0;
  for (let i = 0; i < finite; i++) zs += z[i] as number;
  const zm = zs / finite;
  let zss = 0;
  for (let i = 0; i < finite; i++) {
    const d = (z[i] as number) - zm;
    zss += d * d;
  }
  const zsd = Math.sqrt(zss / finite);
  const scale = zsd > 0 ? sd / zsd : 0;
  const max = MAX_FINITE[leaf.dtype];

  let k = 0;
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i] as number)) continue;
    let x = mean + ((z[k++] as number) - zm) * scale;
    if (x > max) x = max;
    else if (x < -max) x = -max;
    values[i] = x;
  }
  writeRounded(out, values);
  return out;
}

/** Writes finite values into the tensor's storage, rounding to nearest even in its dtype. */
function writeRounded(t: FloatTensor, values: Float64Array): void {
  switch (t.dtype) {
    case 'float32':
    case 'float64':
      for (let i = 0; i < values.length; i++) {
        const v = values[i] as number;
        if (Number.isFinite(v)) t.data[i] = v;
      }
      return;
    case 'float16':
    case 'bfloat16': {
      const conv = t.dtype === 'float16' ? numberToHalf : numberToBfloat16;
      for (let i = 0; i < values.length; i++) {
        const v = values[i] as number;
        if (Number.isFinite(v)) t.data[i] = conv(v);
      }
    }
  }
}

export const resampleOperator: LeafOperator = {
  condition: 'T_mu',
  params: {
    distribution: 'normal',
    moments: 'empirical-mean-population-sd',
    standardised: true,
    normal: 'ziggurat-128',
  },
  usesPrng: true,
  apply: (leaf: FloatTensor, prng: Prng, stats: LeafStats) => resampleLeaf(leaf, prng, stats),
};
