/**
 * FROZEN TEST ORACLE — a verbatim copy of the reference (specification) part of src/interventions/resample-v2.ts
 * as first written, drawing from the BigInt oracle of PrngX4 (./prng-x4.ts) and the frozen ziggurat
 * (./normal-v2.ts). T_μ version 2 must reproduce it bit for bit on both of its paths
 * (test/interventions/v2.test.ts). Do not optimise or edit this copy.
 */
/**
 * T_μ version 2 — moment-matched resample ("ziggurat-128-det", draws "xoshiro128**x4" v1). The same operator
 * as version 1 (resample.ts: each latent replaced by normal draws re-standardised to sample mean 0 and
 * population SD 1, scaled to the latent's own finite mean and population SD, clamped to ±max finite and
 * rounded to its dtype; non-finite elements keep position and bits; fewer than two finite elements or SD 0
 * → a byte copy), specified so that SIMD can compute it and every IEEE-754 engine reproduces it:
 *
 * 1. x4 = PrngX4.fromPrng(prng): the parent Prng advances by 16 draws, for every leaf.
 * 2. Sums are four-partial: s_r = Σ over indices ≡ r (mod 4), each left to right from +0, total
 *    (s0 + s1) + (s2 + s3). Over the elements (index i, finite ones only): mean = Σ v / f,
 *    sd = √(Σ (v − mean)² / f), f the finite count.
 * 3. Normal draw k (k = 0 … f−1) comes from x4's output k by the ziggurat fast path of normal-v2.ts; an output
 *    that fails it is resolved afterwards, in increasing k, by the general ziggurat with its extra uniforms
 *    from the parent Prng (so the parent's position after a leaf depends on how many draws needed it).
 *    normal-v2.ts uses exactly specified exp/log, not Math.exp/Math.log (why: see there).
 * 4. zm = Σ z / f and zsd = √(Σ (z − zm)² / f) (four-partial over k), scale = zsd > 0 ? sd / zsd : 0, and the
 *    k-th finite element becomes clamp(mean + (z_k − zm)·scale, ±max) rounded to the dtype (kept if NaN).
 *
 * Version 1 stays the default; `version: 2` on a T_mu condition (condition.ts) selects this one and is
 * recorded in the operator's params. `resampleLeafV2Reference` is the specification; float32 latents whose
 * size is a multiple of 4 take the WebAssembly path (wasm-x4.ts), which gives the same bits.
 */
import type { Prng } from '../../../src/core/prng.js';
import { bfloat16ToNumber, halfToNumber, numberToBfloat16, numberToHalf, type FloatTensor } from '../../../src/core/tensor.js';
import type { LeafStats } from '../../../src/interventions/leaf-operator.js';
import { zigFast, zigSlow } from './normal-v2.js';
import { OracleX4 as PrngX4 } from './prng-x4.js';

export const RESAMPLE_V2_PARAMS = {
  distribution: 'normal',
  moments: 'empirical-mean-population-sd',
  standardised: true,
  normal: 'ziggurat-128-det',
  version: 2,
  draws: 'xoshiro128**x4-v1',
  sums: 'four-partial',
} as const;

const MAX_FINITE = { float16: 65504, bfloat16: 3.3895313892515355e38, float32: 3.4028234663852886e38, float64: Number.MAX_VALUE } as const;

/** The leaf's values as doubles (exact). */
function valuesOf(leaf: FloatTensor): Float64Array {
  if (leaf.dtype === 'float64') return leaf.data;
  if (leaf.dtype === 'float32') return Float64Array.from(leaf.data);
  const conv = leaf.dtype === 'float16' ? halfToNumber : bfloat16ToNumber;
  return Float64Array.from(leaf.data, (h) => conv(h));
}

/** Four-partial sum of f(values[i]) over the finite values (index i mod 4 picks the partial sum). */
function sum4(values: Float64Array, count: number, term: (v: number) => number, finiteOnly: boolean): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (let i = 0; i < count; i++) {
    const v = values[i] as number;
    if (finiteOnly && !Number.isFinite(v)) continue;
    const t = term(v);
    switch (i & 3) {
      case 0: s0 += t; break;
      case 1: s1 += t; break;
      case 2: s2 += t; break;
      default: s3 += t;
    }
  }
  return (s0 + s1) + (s2 + s3);
}

const identity = (v: number): number => v;

/** The standard normal draws z_0 … z_{count−1} of step 3. */
function draws(x4: PrngX4, prng: Prng, count: number): Float64Array {
  const z = new Float64Array(count);
  const u = new Uint32Array(count);
  const slow: number[] = [];
  for (let k = 0; k < count; k++) {
    u[k] = x4.nextUint32();
    const fast = zigFast(u[k] as number);
    if (fast === fast) z[k] = fast;
    else slow.push(k);
  }
  for (const k of slow) z[k] = zigSlow(prng, u[k] as number);
  return z;
}

const clampTo = (x: number, max: number): number => (x > max ? max : x < -max ? -max : x);

/** The specification of T_μ v2 in plain JS (see the module comment). */
export function resampleLeafV2Reference(leaf: FloatTensor, prng: Prng, stats?: LeafStats): FloatTensor {
  const x4 = PrngX4.fromPrng(prng);
  const values = valuesOf(leaf);
  const n = values.length;
  const shape = [...leaf.shape];
  let finite = 0;
  for (let i = 0; i < n; i++) if (Number.isFinite(values[i] as number)) finite++;
  if (stats) stats.nonFinite += n - finite;
  const copy = (): FloatTensor => ({ dtype: leaf.dtype, shape, data: leaf.data.slice() }) as FloatTensor;
  if (finite < 2) return copy();
  const mean = sum4(values, n, identity, true) / finite;
  const sd = Math.sqrt(sum4(values, n, (v) => (v - mean) * (v - mean), true) / finite);
  if (!(sd > 0)) return copy();
  const z = draws(x4, prng, finite);
  const zm = sum4(z, finite, identity, false) / finite;
  const zsd = Math.sqrt(sum4(z, finite, (v) => (v - zm) * (v - zm), false) / finite);
  const scale = zsd > 0 ? sd / zsd : 0;
  const max = MAX_FINITE[leaf.dtype];
  const data = leaf.data.slice() as FloatTensor['data'];
  const round = leaf.dtype === 'float16' ? numberToHalf : leaf.dtype === 'bfloat16' ? numberToBfloat16 : identity;
  let k = 0;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(values[i] as number)) continue;
    const x = clampTo(mean + ((z[k++] as number) - zm) * scale, max);
    if (x === x) data[i] = round(x);
  }
  return { dtype: leaf.dtype, shape, data } as FloatTensor;
}

