import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Prng } from '../../src/core/prng.js';
import { tensorBytes, type FloatDtype, type FloatTensor } from '../../src/core/tensor.js';
import { applyToItems, emptyLeafStats } from '../../src/interventions/leaf-operator.js';
import { permuteLeaf, permuteOperator } from '../../src/interventions/permute.js';

fc.configureGlobal({ seed: 20260902, numRuns: 3000 });

const DTYPES: readonly FloatDtype[] = ['float16', 'bfloat16', 'float32', 'float64'];

/** A tensor filled with arbitrary raw bytes (any bit pattern, NaN payloads included). */
function tensorFromBytes(dtype: FloatDtype, bytes: Uint8Array, shape: readonly number[]): FloatTensor {
  const buf = bytes.slice().buffer;
  switch (dtype) {
    case 'float16':
    case 'bfloat16':
      return { dtype, shape, data: new Uint16Array(buf) };
    case 'float32':
      return { dtype, shape, data: new Float32Array(buf) };
    case 'float64':
      return { dtype, shape, data: new Float64Array(buf) };
  }
}

/** Element bit patterns as hex strings (independent of the implementation's word views). */
function elementPatterns(t: FloatTensor): string[] {
  const b = tensorBytes(t);
  const w = t.data.BYTES_PER_ELEMENT;
  const out: string[] = [];
  for (let i = 0; i < t.data.length; i++) out.push(Buffer.from(b.subarray(i * w, (i + 1) * w)).toString('hex'));
  return out;
}

const tensorArb = fc
  .tuple(fc.constantFrom(...DTYPES), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 40 }))
  .chain(([dtype, rows, cols]) => {
    const w = dtype === 'float64' ? 8 : dtype === 'float32' ? 4 : 2;
    return fc
      .uint8Array({ minLength: rows * cols * w, maxLength: rows * cols * w })
      .map((bytes) => tensorFromBytes(dtype, bytes, [rows, cols]));
  });

describe('S_π: within-latent permutation', () => {
  it('preserves the sorted multiset of bit patterns, dtype and shape; never mutates or aliases the input', () => {
    fc.assert(
      fc.property(tensorArb, fc.integer(), (t, seed) => {
        const before = elementPatterns(t);
        const out = permuteLeaf(t, new Prng(seed));
        expect(out.dtype).toBe(t.dtype);
        expect(out.shape).toEqual(t.shape);
        expect(out.data.buffer).not.toBe(t.data.buffer);
        expect(elementPatterns(t)).toEqual(before);
        expect([...elementPatterns(out)].sort()).toEqual([...before].sort());
      }),
    );
  });

  it('draws exactly the permutation Prng.shuffle draws (same stream, same indices)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.integer(), (n, seed) => {
        const idx = Float64Array.from({ length: n }, (_, i) => i);
        const out = permuteLeaf({ dtype: 'float64', shape: [n], data: idx }, new Prng(seed));
        const ref = new Prng(seed).shuffle(Array.from({ length: n }, (_, i) => i));
        expect(Array.from(out.data)).toEqual(ref);
      }),
      { numRuns: 500 },
    );
  });

  it('is deterministic in the seed and moves elements (n = 4096)', () => {
    const data = Float32Array.from({ length: 4096 }, (_, i) => i);
    const t: FloatTensor = { dtype: 'float32', shape: [16, 256], data };
    const a = permuteLeaf(t, new Prng('s'));
    const b = permuteLeaf(t, new Prng('s'));
    const c = permuteLeaf(t, new Prng('other'));
    expect(Buffer.from(tensorBytes(a)).equals(Buffer.from(tensorBytes(b)))).toBe(true);
    expect(Buffer.from(tensorBytes(a)).equals(Buffer.from(tensorBytes(c)))).toBe(false);
    let fixed = 0;
    for (let i = 0; i < 4096; i++) if (a.data[i] === i) fixed++;
    expect(fixed).toBeLessThan(10); // expected ≈ 1 fixed point
  });

  it('leaves identities untouched when applied to retrieved items', () => {
    const identity = { slot: 3, scope: 'u', sourceEpisode: 'e', timestep: 7, version: 2 };
    const items = [
      {
        identity,
        leaves: {
          feature: { dtype: 'float32', shape: [8], data: Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]) } as FloatTensor,
        },
      },
    ];
    const out = applyToItems(items, permuteOperator, new Prng(1), emptyLeafStats());
    expect(out[0]?.identity).toBe(identity);
    expect(out[0]?.leaves.feature).not.toBe(items[0]?.leaves.feature);
  });
});

describe('operators on packed leaves (views with a byte offset into a shared buffer)', () => {
  it('S_π and U read only their own view and leave the neighbours alone', async () => {
    const { stepTensorUlp } = await import('../../src/interventions/ulp.js');
    const shared = new ArrayBuffer(4 * 12);
    const all = new Float32Array(shared);
    for (let i = 0; i < 12; i++) all[i] = i + 1;
    const view: FloatTensor = { dtype: 'float32', shape: [4], data: new Float32Array(shared, 16, 4) }; // values 5..8
    const p = permuteLeaf(view, new Prng(3));
    expect([...p.data].sort((a, b) => a - b)).toEqual([5, 6, 7, 8]);
    const u = stepTensorUlp(view, 'away').tensor;
    expect([...u.data]).toEqual([5 + 2 ** -21, 6 + 2 ** -21, 7 + 2 ** -21, 8 + 2 ** -20]); // ULP is 2^-21 in [4, 8), 2^-20 in [8, 16)
    expect([...all]).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const f64: FloatTensor = { dtype: 'float64', shape: [2], data: new Float64Array(new ArrayBuffer(32), 8, 2) };
    f64.data[0] = 1;
    f64.data[1] = -2;
    expect([...stepTensorUlp(f64, 'toward-zero').tensor.data]).toEqual([1 - 2 ** -53, -2 + 2 ** -52]);
    expect([...permuteLeaf(f64, new Prng(1)).data].sort()).toEqual([-2, 1]);
  });
});
