/**
 * S_π version 3 — within-latent permutation ("fisher-yates", draws "xoshiro128**x4" v1, two indices per draw).
 * The same operator as versions 1 and 2 (permute.ts: the latent's elements shuffled as raw bit patterns, so
 * the multiset is preserved bitwise; dtype and shape kept); the bounded indices are drawn two per 32-bit
 * output, so that one kernel can generate, bound and swap in a single pass (wasm-v3.ts):
 *
 * 1. x4 = PrngX4.fromPrng(prng): the parent Prng advances by exactly 16 draws per leaf, whatever the leaf.
 * 2. Fisher–Yates from i = n − 1 down to 1, each step using x4's next output u in order:
 *    - pair step, when 2 ≤ i ≤ 8191 (PAIR_MAX_I): with b1 = i + 1, b2 = i, B = b1·b2 (< 2^26),
 *      m1 = u·b1 = j1·2^32 + l1, m2 = l1·b2 = j2·2^32 + l (exact products, j's the high words);
 *      if l < 2^32 mod B the draw is rejected (nothing moves, i unchanged); else swap a[i]↔a[j1], then
 *      a[i − 1]↔a[j2], and i −= 2;
 *    - single step otherwise (i = 1, or i > 8191): Lemire with bound b = i + 1 (m = u·b = j·2^32 + l,
 *      rejected when l < 2^32 mod b); swap a[i]↔a[j], i −= 1.
 *    Why a pair step is exact: u·B = (j1·b2 + j2)·2^32 + l, so j1·b2 + j2 is Lemire's index in [0, B) for the
 *    same u, uniform once the same rejection is applied; its mixed-radix digits (j1, j2) are then independent
 *    and uniform on [0, b1) × [0, b2) — the batched bounded draws of Brackett-Rozinsky & Lemire (2024). Each
 *    Fisher–Yates index is therefore uniform on its range and independent of the others: every permutation of
 *    the latent has probability 1/n!.
 *
 * Version 1 stays the default; `version: 3` on an S_pi condition (condition.ts) selects this one and is
 * recorded in the operator's params. `permuteLeafV3Reference` is the specification (and the path where
 * WebAssembly is unavailable); the WebAssembly path gives the same bits (test/interventions/v3.test.ts).
 */
import { PrngX4, type Prng } from '../core/prng.js';
import type { FloatTensor } from '../core/tensor.js';
import type { LeafOperator, LeafStats } from './leaf-operator.js';
import { PAIR_MAX_I, wasmPermuteV3 } from './wasm-v3.js';

export const PERMUTE_V3_PARAMS = {
  scope: 'within-latent',
  algorithm: 'fisher-yates',
  version: 3,
  draws: 'xoshiro128**x4-v1',
  bounded: 'lemire-batched-2',
} as const;

const TWO32 = 4294967296;

/** Swaps elements p and q (`words` 16-bit words each). */
function swap(a: Uint16Array, words: number, p: number, q: number): void {
  for (let k = 0; k < words; k++) {
    const x = p * words + k, y = q * words + k;
    const t = a[x] as number;
    a[x] = a[y] as number;
    a[y] = t;
  }
}

/** One use of draw u at position i ≥ 1 (module comment, step 2); returns the next i. Products are exact in doubles. */
export function stepV3(a: Uint16Array, words: number, u: number, i: number): number {
  if (i >= 2 && i <= PAIR_MAX_I) {
    const b1 = i + 1, b2 = i, bound = b1 * b2;
    const m1 = u * b1;
    const l1 = m1 % TWO32;
    const m2 = l1 * b2;
    const l = m2 % TWO32;
    if (l < bound && l < (TWO32 - bound) % bound) return i;
    swap(a, words, i, (m1 - l1) / TWO32);
    swap(a, words, i - 1, (m2 - l) / TWO32);
    return i - 2;
  }
  const b = i + 1;
  const m = u * b;
  const l = m % TWO32;
  if (l < b && l < (TWO32 - b) % b) return i;
  swap(a, words, i, (m - l) / TWO32);
  return i - 1;
}

/** The specification of S_π v3 in plain JS (see the module comment). */
export function permuteLeafV3Reference(leaf: FloatTensor, prng: Prng): FloatTensor {
  const x4 = PrngX4.fromPrng(prng);
  const data = leaf.data.slice() as FloatTensor['data'];
  const a = new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2);
  const words = data.BYTES_PER_ELEMENT / 2;
  let i = data.length - 1;
  while (i > 0) i = stepV3(a, words, x4.nextUint32(), i);
  return { dtype: leaf.dtype, shape: [...leaf.shape], data } as FloatTensor;
}

/** S_π v3: the WebAssembly path where it applies, else the reference; the same bits either way. */
export function permuteLeafV3(leaf: FloatTensor, prng: Prng): FloatTensor {
  const fast = wasmPermuteV3(leaf.data, prng);
  if (fast === undefined) return permuteLeafV3Reference(leaf, prng);
  return { dtype: leaf.dtype, shape: [...leaf.shape], data: fast } as FloatTensor;
}

export const permuteOperatorV3: LeafOperator = {
  condition: 'S_pi',
  params: PERMUTE_V3_PARAMS,
  usesPrng: true,
  apply: (leaf: FloatTensor, prng: Prng, _stats: LeafStats) => permuteLeafV3(leaf, prng),
};
