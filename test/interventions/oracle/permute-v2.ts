/**
 * FROZEN TEST ORACLE — a verbatim copy of the reference (specification) part of src/interventions/permute-v2.ts
 * as first written, drawing from the BigInt oracle of PrngX4 (./prng-x4.ts). S_π version 2 must reproduce it
 * bit for bit on both of its paths (test/interventions/v2.test.ts). Do not optimise or edit this copy.
 */
/**
 * S_π version 2 — within-latent permutation ("fisher-yates", draws "xoshiro128**x4" v1). Same operator as
 * version 1 (permute.ts: the latent's elements shuffled as raw bit patterns, so the multiset is preserved
 * bitwise; dtype and shape kept); only where the draws come from differs, so that they can be generated four
 * at a time by SIMD (wasm-x4.ts):
 *
 * 1. x4 = PrngX4.fromPrng(prng): the parent Prng advances by exactly 16 draws per leaf, whatever the leaf.
 * 2. Fisher–Yates, i = n−1 … 1: j = Lemire's nearly-divisionless bounded integer in [0, i + 1) from x4's
 *    outputs in order (m = u·(i + 1) as an exact 64-bit product; if its low word l < i + 1 and
 *    l < (2^32 − (i + 1)) mod (i + 1), u is rejected and the next output tried); j = m >> 32; swap a[i], a[j].
 *
 * Version 1 stays the default and is byte-identical to its frozen oracle; a protocol opts into version 2 by
 * `version: 2` on its S_pi condition (condition.ts), which is recorded in the operator's params.
 * `permuteLeafV2Reference` is the specification (and the path where WebAssembly is unavailable); the
 * WebAssembly path gives the same bits (test/interventions/v2.test.ts).
 */
import type { Prng } from '../../../src/core/prng.js';
import type { FloatTensor } from '../../../src/core/tensor.js';
import { OracleX4 as PrngX4 } from './prng-x4.js';

export const PERMUTE_V2_PARAMS = { scope: 'within-latent', algorithm: 'fisher-yates', version: 2, draws: 'xoshiro128**x4-v1', bounded: 'lemire' } as const;

const TWO32 = 4294967296;

/** High and low 32-bit words of u·b (u, b < 2^32), exact. */
function mul64(u: number, b: number): [number, number] {
  const ul = u & 0xffff, uh = u >>> 16, bl = b & 0xffff, bh = Math.floor(b / 65536);
  const ll = ul * bl, lh = ul * bh, hl = uh * bl, hh = uh * bh;
  const mid = (ll >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  const lo = ((mid & 0xffff) * 65536 + (ll & 0xffff)) >>> 0;
  const hi = hh + Math.floor(lh / 65536) + Math.floor(hl / 65536) + Math.floor(mid / 65536);
  return [hi, lo];
}

/** Lemire's unbiased integer in [0, bound), 1 ≤ bound ≤ 2^32 − 1, from x4's outputs in order. */
export function boundedX4(x4: PrngX4, bound: number): number {
  let [hi, lo] = mul64(x4.nextUint32(), bound);
  if (lo < bound) {
    const t = (TWO32 - bound) % bound;
    while (lo < t) [hi, lo] = mul64(x4.nextUint32(), bound);
  }
  return hi;
}

/** Fisher–Yates over `count` elements of `words` words each (16-bit words: any dtype's bit patterns). */
function shuffleWords(a: Uint16Array, words: number, x4: PrngX4): void {
  for (let i = a.length / words - 1; i > 0; i--) {
    const j = boundedX4(x4, i + 1);
    for (let k = 0; k < words; k++) {
      const p = i * words + k, q = j * words + k;
      const t = a[p] as number;
      a[p] = a[q] as number;
      a[q] = t;
    }
  }
}

/** The specification of S_π v2 in plain JS (see the module comment). */
export function permuteLeafV2Reference(leaf: FloatTensor, prng: Prng): FloatTensor {
  const x4 = PrngX4.fromPrng(prng);
  const data = leaf.data.slice() as FloatTensor['data'];
  shuffleWords(new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2), data.BYTES_PER_ELEMENT / 2, x4);
  return { dtype: leaf.dtype, shape: [...leaf.shape], data } as FloatTensor;
}

