/**
 * FROZEN TEST ORACLE — S_π version 3 (src/interventions/permute-v3.ts) written independently of it: BigInt
 * products and remainders, draws from the BigInt oracle of PrngX4 (./prng-x4.ts), the permutation kept as an
 * index array. Both paths of version 3 must reproduce it bit for bit (test/interventions/v3.test.ts). Do not
 * optimise or edit this copy.
 *
 * Fisher–Yates from i = n − 1 down to 1, each step using the next output u: for 2 ≤ i ≤ 8191 a pair step
 * (B = (i + 1)·i; reject u when (u·B) mod 2^32 < 2^32 mod B; else j1 = ⌊u·(i + 1) / 2^32⌋,
 * j2 = ⌊(u·(i + 1) mod 2^32)·i / 2^32⌋, swap a[i]↔a[j1], a[i − 1]↔a[j2], i −= 2), otherwise a single Lemire
 * step with bound i + 1.
 */
import type { Prng } from '../../../src/core/prng.js';
import type { FloatTensor } from '../../../src/core/tensor.js';
import { OracleX4 } from './prng-x4.js';

const W = 2n ** 32n;

/** The permutation as indices: out[k] = the input index whose element ends at position k. */
export function permutationV3(n: number, prng: Prng): number[] {
  const x4 = OracleX4.fromPrng(prng);
  const p = Array.from({ length: n }, (_, k) => k);
  const sw = (a: number, b: number): void => {
    const t = p[a] as number;
    p[a] = p[b] as number;
    p[b] = t;
  };
  let i = n - 1;
  while (i > 0) {
    const u = BigInt(x4.nextUint32());
    if (i >= 2 && i <= 8191) {
      const b1 = BigInt(i + 1), b2 = BigInt(i), B = b1 * b2;
      if ((u * B) % W < W % B) continue;
      const j1 = (u * b1) / W;
      const j2 = (((u * b1) % W) * b2) / W;
      sw(i, Number(j1));
      sw(i - 1, Number(j2));
      i -= 2;
    } else {
      const b = BigInt(i + 1);
      if ((u * b) % W < W % b) continue;
      sw(i, Number((u * b) / W));
      i -= 1;
    }
  }
  return p;
}

/** S_π v3 of a leaf, from the permutation above. */
export function permuteLeafV3Oracle(leaf: FloatTensor, prng: Prng): FloatTensor {
  const n = leaf.data.length;
  const p = permutationV3(n, prng);
  const w = leaf.data.BYTES_PER_ELEMENT;
  const src = new Uint8Array(leaf.data.buffer, leaf.data.byteOffset, leaf.data.byteLength);
  const out = new Uint8Array(n * w);
  for (let k = 0; k < n; k++) out.set(src.subarray((p[k] as number) * w, (p[k] as number) * w + w), k * w);
  const data = leaf.dtype === 'float32' ? new Float32Array(out.buffer) : leaf.dtype === 'float64' ? new Float64Array(out.buffer) : new Uint16Array(out.buffer);
  return { dtype: leaf.dtype, shape: [...leaf.shape], data } as FloatTensor;
}
