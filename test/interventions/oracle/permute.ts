/**
 * FROZEN TEST ORACLE — a verbatim copy of src/interventions/permute.ts as of commit 53b2e2e (before the
 * speed-up). The optimised operators must reproduce it bit for bit (test/interventions/bit-identical.test.ts).
 * Do not optimise or edit this copy.
 */
/**
 * S_π — within-latent permutation. A latent is one float leaf; its scalar components (all elements,
 * flattened) are shuffled by Fisher–Yates with the seeded Prng. Elements move as raw bit patterns
 * (16-bit words, 32-bit words, or float64 word pairs; 32-bit words through Int32Array views so
 * the JIT keeps them as small integers), so the multiset of values — norm, mean, variance,
 * every order statistic, even NaN payloads — is preserved bitwise; dtype and shape are kept.
 *
 * The index draws are exactly `prng.nextInt(i + 1)` for i = n−1 … 1 (Lemire's method), i.e. the same
 * permutation as `prng.shuffle` of 0…n−1; the loop is inlined for speed.
 */
import type { Prng } from '../../../src/core/prng.js';
import type { FloatTensor } from '../../../src/core/tensor.js';
import type { LeafOperator, LeafStats } from '../../../src/interventions/leaf-operator.js';

const TWO32 = 4294967296;
/** Bounds up to 2^21 keep uint32 × bound below 2^53, so the inline Lemire step is exact in doubles. */
const INLINE_BOUND = 2 ** 21;

/** Uniform integer in [0, bound): bit-identical to prng.nextInt(bound). */
function below(prng: Prng, bound: number): number {
  if (bound > INLINE_BOUND) return prng.nextInt(bound);
  let m = prng.nextUint32() * bound;
  let l = m >>> 0;
  if (l < bound) {
    const t = (TWO32 - bound) % bound;
    while (l < t) {
      m = prng.nextUint32() * bound;
      l = m >>> 0;
    }
  }
  return (m - l) / TWO32;
}

function shuffleWords(a: Uint16Array | Int32Array, prng: Prng): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = below(prng, i + 1);
    const t = a[i] as number;
    a[i] = a[j] as number;
    a[j] = t;
  }
}

/** Shuffles float64 elements held as word pairs (2k, 2k+1). */
function shuffleWordPairs(a: Int32Array, prng: Prng): void {
  for (let i = a.length / 2 - 1; i > 0; i--) {
    const j = below(prng, i + 1);
    const p = 2 * i,
      q = 2 * j;
    const t0 = a[p] as number,
      t1 = a[p + 1] as number;
    a[p] = a[q] as number;
    a[p + 1] = a[q + 1] as number;
    a[q] = t0;
    a[q + 1] = t1;
  }
}

/** A new leaf: the same elements (bitwise) in a Prng-drawn order. */
export function permuteLeaf(leaf: FloatTensor, prng: Prng): FloatTensor {
  const shape = [...leaf.shape];
  switch (leaf.dtype) {
    case 'float32': {
      const data = leaf.data.slice();
      shuffleWords(new Int32Array(data.buffer), prng);
      return { dtype: 'float32', shape, data };
    }
    case 'float64': {
      const data = leaf.data.slice();
      shuffleWordPairs(new Int32Array(data.buffer), prng);
      return { dtype: 'float64', shape, data };
    }
    case 'float16':
    case 'bfloat16': {
      const data = leaf.data.slice();
      shuffleWords(data, prng);
      return { dtype: leaf.dtype, shape, data };
    }
  }
}

export const permuteOperator: LeafOperator = {
  condition: 'S_pi',
  params: { scope: 'within-latent', algorithm: 'fisher-yates' },
  usesPrng: true,
  apply: (leaf: FloatTensor, prng: Prng, _stats: LeafStats) => permuteLeaf(leaf, prng),
};
