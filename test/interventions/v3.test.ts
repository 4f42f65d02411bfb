/**
 * S_π version 3 (permute-v3.ts, wasm-v3.ts): both paths (the fused WebAssembly kernel and the plain-JS
 * reference) against the independent BigInt oracle in ./oracle/permute-v3.ts, pinned digests, the operator's
 * invariants for every dtype, the uniformity of the permutations (chi-square over all permutations of a small
 * latent and over positions where the kernel's fast loop runs), determinism and version selection. Versions 1
 * and 2 keep their own oracles and digests, untouched.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import { Prng } from '../../src/core/prng.js';
import { numberToBfloat16, numberToHalf, type FloatDtype, type FloatTensor } from '../../src/core/tensor.js';
import { scrambleOperator } from '../../src/interventions/condition.js';
import { emptyLeafStats } from '../../src/interventions/leaf-operator.js';
import { permuteLeafV3, permuteLeafV3Reference, permuteOperatorV3 } from '../../src/interventions/permute-v3.js';
import { setWasmV3Enabled, wasmV3Available } from '../../src/interventions/wasm-v3.js';
import { ConditionSchema } from '../../src/protocol/schema-conditions.js';
import { permutationV3, permuteLeafV3Oracle } from './oracle/permute-v3.js';

afterEach(() => {
  setWasmV3Enabled(true);
});

const DTYPES: readonly FloatDtype[] = ['float32', 'float64', 'float16', 'bfloat16'];
const SIZES = [1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 25, 256, 4095, 4096, 4097, 8192, 8193, 8196, 9001];

function bytes(t: FloatTensor): Buffer {
  return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

/** kind 0: normal values; 1: constant; 2: with NaN (odd payloads)/±Inf/±0. */
function leafOf(dtype: FloatDtype, n: number, kind: number, g: Prng): FloatTensor {
  const vals = Array.from({ length: n }, (_, i) => {
    if (kind === 1) return 2.5;
    const r = g.nextFloat();
    if (kind === 2 && r < 0.03) return Number.NaN;
    if (kind === 2 && r < 0.05) return i % 2 === 0 ? Infinity : -Infinity;
    if (kind === 2 && r < 0.07) return i % 2 === 0 ? 0 : -0;
    return g.nextNormal() * 3 + 0.5;
  });
  let t: FloatTensor;
  if (dtype === 'float32') t = { dtype, shape: [n], data: Float32Array.from(vals) };
  else if (dtype === 'float64') t = { dtype, shape: [n], data: Float64Array.from(vals) };
  else t = { dtype, shape: [n], data: Uint16Array.from(vals, dtype === 'float16' ? numberToHalf : numberToBfloat16) };
  if (kind === 2 && n > 2) {
    // a NaN with a non-canonical payload: permutations move bit patterns, never values
    const b = bytes(t);
    b[b.length - 1] = 0x7f;
    b[b.length - 2] = 0xf1 | (b[b.length - 2] as number);
  }
  return t;
}

/** The leaf as a view a few elements into a larger buffer (the kernel must honour byteOffset). */
function offsetView(t: FloatTensor): FloatTensor {
  const w = t.data.BYTES_PER_ELEMENT;
  const buf = new ArrayBuffer(t.data.byteLength + 6 * w);
  new Uint8Array(buf).fill(0xa5);
  new Uint8Array(buf, 3 * w, t.data.byteLength).set(bytes(t));
  const n = t.data.length;
  const data = t.dtype === 'float32' ? new Float32Array(buf, 3 * w, n) : t.dtype === 'float64' ? new Float64Array(buf, 3 * w, n) : new Uint16Array(buf, 3 * w, n);
  return { dtype: t.dtype, shape: [...t.shape], data } as FloatTensor;
}

function sortedWords(t: FloatTensor): string {
  const w = t.data.BYTES_PER_ELEMENT;
  const b = bytes(t);
  const out: string[] = [];
  for (let i = 0; i < t.data.length; i++) out.push(b.subarray(i * w, (i + 1) * w).toString('hex'));
  return out.sort().join(' ');
}

type Op = (leaf: FloatTensor, prng: Prng) => FloatTensor;

function run(op: Op, leaf: FloatTensor, seed: string): { out: string; next: number[]; dtype: string; shape: string } {
  const prng = new Prng(seed);
  const r = op(leaf, prng);
  return { out: createHash('sha256').update(bytes(r)).digest('hex'), next: [prng.nextUint32(), prng.nextUint32()], dtype: r.dtype, shape: r.shape.join(',') };
}

/** The permutation the operator applied to a float32 latent of n distinct indices. */
function permOf(op: Op, n: number, prng: Prng): Float32Array {
  const leaf: FloatTensor = { dtype: 'float32', shape: [n], data: Float32Array.from({ length: n }, (_, k) => k) };
  return op(leaf, prng).data as Float32Array;
}

/** Wilson–Hilferty upper quantile of chi-square(df) at z standard deviations. */
function chi2Bound(df: number, z: number): number {
  const a = 2 / (9 * df);
  return df * (1 - a + z * Math.sqrt(a)) ** 3;
}

describe('S_π version 3', () => {
  it('uses the WebAssembly path here', () => {
    expect(wasmV3Available()).toBe(true);
  });

  it('both paths match the BigInt oracle: every dtype, size and kind, offset views, parent position', () => {
    const g = new Prng('v3-cases');
    for (const dtype of DTYPES) {
      for (const n of SIZES) {
        for (const kind of [0, 1, 2]) {
          const leaf = leafOf(dtype, n, kind, g);
          const seed = `v3/${dtype}/${n}/${kind}`;
          const want = run(permuteLeafV3Oracle, leaf, seed);
          expect(run(permuteLeafV3, leaf, seed)).toEqual(want);
          expect(run(permuteLeafV3, offsetView(leaf), seed)).toEqual(want);
          expect(run(permuteLeafV3Reference, leaf, seed)).toEqual(want);
          setWasmV3Enabled(false);
          expect(run(permuteLeafV3, leaf, seed)).toEqual(want);
          setWasmV3Enabled(true);
        }
      }
    }
  });

  it('matches the oracle over many 4096-element latents (the fast loop falls back to draw-by-draw on some blocks)', () => {
    const parentA = new Prng('v3-many'), parentB = new Prng('v3-many');
    for (let r = 0; r < 60; r++) {
      const got = permOf(permuteLeafV3, 4096, parentA);
      const want = permutationV3(4096, parentB);
      expect(Array.from(got)).toEqual(want);
    }
    expect(parentA.nextUint32()).toBe(parentB.nextUint32());
  });

  it('keeps dtype, shape and the multiset of bit patterns; never mutates its input; draws 16 parent outputs', () => {
    const g = new Prng('v3-inv');
    for (const dtype of DTYPES) {
      const leaf = { ...leafOf(dtype, 999, 2, g), shape: [27, 37] } as FloatTensor;
      const before = Buffer.from(bytes(leaf));
      const prng = new Prng('inv');
      const out = permuteOperatorV3.apply(leaf, prng, emptyLeafStats());
      expect(out.dtype).toBe(dtype);
      expect(out.shape).toEqual([27, 37]);
      expect(out.data.buffer).not.toBe(leaf.data.buffer);
      expect(bytes(leaf).equals(before)).toBe(true);
      expect(sortedWords(out)).toBe(sortedWords(leaf));
      expect(bytes(out).equals(before)).toBe(false);
      const q = new Prng('inv');
      for (let i = 0; i < 16; i++) q.nextUint32();
      expect(prng.nextUint32()).toBe(q.nextUint32());
    }
  });

  it('is deterministic in the seed and differs between seeds', () => {
    const leaf = leafOf('float32', 4096, 0, new Prng('det'));
    expect(run(permuteLeafV3, leaf, 's')).toEqual(run(permuteLeafV3, leaf, 's'));
    expect(run(permuteLeafV3, leaf, 's').out).not.toBe(run(permuteLeafV3, leaf, 't').out);
  });

  it('draws every permutation of 5 elements equally often (chi-square over all 120)', () => {
    const prng = new Prng('v3-chi-120');
    const counts = new Map<string, number>();
    const draws = 120 * 150;
    for (let r = 0; r < draws; r++) {
      const key = Array.from(permOf(permuteLeafV3, 5, prng)).join('');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(counts.size).toBe(120);
    let chi2 = 0;
    for (const c of counts.values()) chi2 += (c - 150) ** 2 / 150;
    expect(chi2).toBeLessThan(chi2Bound(119, 4));
  });

  it('sends every element to every position equally often where the fast loop runs (24 elements: chi-square)', () => {
    const n = 24, draws = n * 60;
    const prng = new Prng('v3-chi-pos');
    const table = new Float64Array(n * n);
    for (let r = 0; r < draws; r++) {
      const p = permOf(permuteLeafV3, n, prng);
      for (let k = 0; k < n; k++) table[(p[k] as number) * n + k]! += 1;
    }
    const e = draws / n;
    let chi2 = 0;
    for (const c of table) chi2 += (c - e) ** 2 / e;
    expect(chi2).toBeLessThan(chi2Bound((n - 1) * (n - 1), 4));
    // consecutive positions are independent too: the pair (p[0], p[1]) over 24·23 ordered pairs
    const pairs = new Map<number, number>();
    const prng2 = new Prng('v3-chi-pair');
    const m = n * (n - 1) * 20;
    for (let r = 0; r < m; r++) {
      const p = permOf(permuteLeafV3, n, prng2);
      const key = (p[n - 1] as number) * n + (p[n - 2] as number);
      pairs.set(key, (pairs.get(key) ?? 0) + 1);
    }
    expect(pairs.size).toBe(n * (n - 1));
    let chi2p = 0;
    for (const c of pairs.values()) chi2p += (c - 20) ** 2 / 20;
    expect(chi2p).toBeLessThan(chi2Bound(n * (n - 1) - 1, 4));
  });

  it('moves the top element uniformly across the single/pair boundary (8196 elements, 16 position bins)', () => {
    const n = 8196, draws = 1600;
    const prng = new Prng('v3-boundary');
    const bins = new Array<number>(16).fill(0);
    const leaf: FloatTensor = { dtype: 'float32', shape: [n], data: Float32Array.from({ length: n }, (_, k) => k) };
    for (let r = 0; r < draws; r++) {
      const p = permuteLeafV3(leaf, prng).data as Float32Array;
      const at = p.indexOf(n - 1);
      bins[Math.floor((at * 16) / n)]! += 1;
    }
    let chi2 = 0;
    for (const c of bins) chi2 += (c - draws / 16) ** 2 / (draws / 16);
    expect(chi2).toBeLessThan(chi2Bound(15, 4));
  });

  it('keeps its outputs: pinned digests', () => {
    expect(digests(permuteLeafV3)).toEqual(PERMUTE_V3_DIGESTS);
  });
});

describe('version 3 selection', () => {
  it('`version: 3` selects S_π v3; T_μ has no version 3', () => {
    expect(scrambleOperator('S_pi', 3)).toBe(permuteOperatorV3);
    expect(permuteOperatorV3.params.version).toBe(3);
    for (const [kind, version] of [['T_mu', 3], ['S_pi', 4]] as const) {
      try {
        scrambleOperator(kind, version as 3);
        expect.unreachable();
      } catch (e) {
        expect(isImepError(e) && e.code === 'E_INTERVENTION_INVALID').toBe(true);
      }
    }
    expect(ConditionSchema.safeParse({ id: 's', kind: 'S_pi', seed: 1, version: 3 }).success).toBe(true);
    expect(ConditionSchema.safeParse({ id: 't', kind: 'T_mu', seed: 1, version: 3 }).success).toBe(false);
  });
});

function digests(op: Op): Record<string, string> {
  const out: Record<string, string> = {};
  const g = new Prng('v3-golden');
  for (const dtype of DTYPES) {
    const h = createHash('sha256');
    for (const n of [1, 3, 4, 17, 4096, 8197]) {
      for (const kind of [0, 1, 2]) {
        const prng = new Prng(`g/${dtype}/${n}/${kind}`);
        h.update(bytes(op(leafOf(dtype, n, kind, g), prng)));
        h.update(`|${prng.nextUint32()},${prng.nextUint32()}|`);
      }
    }
    out[dtype] = h.digest('hex');
  }
  return out;
}

const PERMUTE_V3_DIGESTS: Readonly<Record<string, string>> = {
  bfloat16: 'c0babc406890cae4aa127648e31cba1c36b2aaf99ab372a7b59656a7e6952aed',
  float16: '05f1a71df2d5da2126d44882ab427d0839a09ea22c696ee1f3111b45440fffe9',
  float32: 'e57f98b414a4b2f04e0e1a9497b0309ca97b39c1e413ac9a7ae53dfcf65e4523',
  float64: '0757b685e6aab1578bdfebd5720ef91c040e9fd86d6bc4f86b83ad2c38f62f88',
};
