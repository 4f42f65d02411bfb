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
import type { Prng } from '../core/index.js';
import { bfloat16ToNumber, halfToNumber, numberToBfloat16, numberToHalf, type FloatTensor } from '../core/index.js';
import type { LeafOperator, LeafStats } from './leaf-operator.js';
import { fillStandardNormalSum } from './normal.js';

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

let valueScratch = new Float64Array(0);
let normalScratch = new Float64Array(0);

/** The leaf's values as doubles (exact): float64 storage itself, or converted into a reused scratch buffer. */
function valuesOf(leaf: FloatTensor): Float64Array {
  if (leaf.dtype === 'float64') return leaf.data;
  const n = leaf.data.length;
  if (valueScratch.length < n) valueScratch = new Float64Array(n);
  const v = valueScratch.subarray(0, n);
  if (leaf.dtype === 'float32') v.set(leaf.data);
  else {
    const conv = leaf.dtype === 'float16' ? halfToNumber : bfloat16ToNumber;
    const d = leaf.data;
    for (let i = 0; i < n; i++) v[i] = conv(d[i] as number);
  }
  return v;
}

/** Finite count of the last `finiteSum` call (a module slot instead of an allocated pair). */
let finiteCount = 0;

/** Left-to-right sum of the finite values; their count goes to `finiteCount`. */
function finiteSum(values: Float64Array): number {
  let n = 0,
    sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isFinite(v)) {
      n++;
      sum += v;
    }
  }
  finiteCount = n;
  return sum;
}

/** Σ (v − mean)² over the finite values, left to right. */
function finiteSumSquares(values: Float64Array, mean: number): number {
  let ss = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isFinite(v)) ss += (v - mean) * (v - mean);
  }
  return ss;
}

/** Σ (z[i] − m)² over i < count, left to right. */
function sumSquares(z: Float64Array, count: number, m: number): number {
  let ss = 0;
  for (let i = 0; i < count; i++) {
    const d = (z[i] as number) - m;
    ss += d * d;
  }
  return ss;
}

/**
 * The resampled values, in order of the finite elements: x_k = clamp(mean + (z_k − zm)·scale, ±max). x is NaN
 * only in overflow corner cases (an infinite scale); such an element keeps its bits, as do non-finite ones.
 * One writer per storage type keeps each loop monomorphic; `all` says every element is finite.
 */
interface Draw {
  readonly z: Float64Array;
  readonly mean: number;
  readonly zm: number;
  readonly scale: number;
  readonly max: number;
}

function writeFloat32(out: Float32Array, values: Float64Array, all: boolean, d: Draw): void {
  const { z, mean, zm, scale, max } = d;
  const n = values.length;
  if (all) {
    for (let i = 0; i < n; i++) {
      let x = mean + ((z[i] as number) - zm) * scale;
      if (x > max) x = max;
      else if (x < -max) x = -max;
      out[i] = x === x ? x : (values[i] as number);
    }
    return;
  }
  let k = 0;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(values[i] as number)) continue;
    let x = mean + ((z[k++] as number) - zm) * scale;
    if (x > max) x = max;
    else if (x < -max) x = -max;
    if (x === x) out[i] = x;
  }
}

function writeFloat64(out: Float64Array, values: Float64Array, all: boolean, d: Draw): void {
  const { z, mean, zm, scale, max } = d;
  const n = values.length;
  if (all) {
    for (let i = 0; i < n; i++) {
      let x = mean + ((z[i] as number) - zm) * scale;
      if (x > max) x = max;
      else if (x < -max) x = -max;
      out[i] = x === x ? x : (values[i] as number);
    }
    return;
  }
  let k = 0;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(values[i] as number)) continue;
    let x = mean + ((z[k++] as number) - zm) * scale;
    if (x > max) x = max;
    else if (x < -max) x = -max;
    if (x === x) out[i] = x;
  }
}

/** 16-bit storage: `out` is a copy of the leaf; finite elements are overwritten with the rounded draws. */
function writeHalf(out: Uint16Array, values: Float64Array, conv: (x: number) => number, d: Draw): void {
  const { z, mean, zm, scale, max } = d;
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i] as number)) continue;
    let x = mean + ((z[k++] as number) - zm) * scale;
    if (x > max) x = max;
    else if (x < -max) x = -max;
    if (x === x) out[i] = conv(x);
  }
}

/**
 * A new leaf drawn from N(mean, sd) of the leaf's own finite values (see the module comment).
 *
 * Bit-identical to the straightforward version (moments by `finiteMoments`, `fillStandardNormal`, the sums of
 * the draws, then the scaled values written through a float64 copy): the same operations in the same order,
 * with fewer passes and no per-call allocation besides the output — the draws' sum is taken while drawing,
 * and when every element is finite the output is written into a fresh array instead of a copy.
 */
export function resampleLeaf(leaf: FloatTensor, prng: Prng, stats?: LeafStats): FloatTensor {
  const values = valuesOf(leaf);
  const n = values.length;
  const shape = [...leaf.shape];
  const sum = finiteSum(values);
  const finite = finiteCount;
  if (stats) stats.nonFinite += n - finite;
  if (finite < 2) return { dtype: leaf.dtype, shape, data: leaf.data.slice() } as FloatTensor;
  const mean = sum / finite;
  const sd = Math.sqrt(finiteSumSquares(values, mean) / finite);
  if (!(sd > 0)) return { dtype: leaf.dtype, shape, data: leaf.data.slice() } as FloatTensor;

  if (normalScratch.length < finite) normalScratch = new Float64Array(finite);
  const z = normalScratch;
  const zm = fillStandardNormalSum(prng, z, finite) / finite;
  const zsd = Math.sqrt(sumSquares(z, finite, zm) / finite);
  const draw: Draw = { z, mean, zm, scale: zsd > 0 ? sd / zsd : 0, max: MAX_FINITE[leaf.dtype] };
  const all = finite === n;

  switch (leaf.dtype) {
    case 'float32': {
      const data = all ? new Float32Array(n) : leaf.data.slice();
      writeFloat32(data, values, all, draw);
      return { dtype: 'float32', shape, data };
    }
    case 'float64': {
      const data = all ? new Float64Array(n) : leaf.data.slice();
      writeFloat64(data, values, all, draw);
      return { dtype: 'float64', shape, data };
    }
    case 'float16':
    case 'bfloat16': {
      const data = leaf.data.slice();
      writeHalf(data, values, leaf.dtype === 'float16' ? numberToHalf : numberToBfloat16, draw);
      return { dtype: leaf.dtype, shape, data };
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
