/**
 * The sped-up operators (U, S_π, T_μ and the ziggurat) against the pre-speed-up implementation, kept verbatim
 * as the oracle in ./oracle/: the same output bits, the same non-finite counts, and the same use of the Prng
 * stream (the draws after the operator agree), on random inputs, every edge pattern, leaves that cross the
 * bulk-draw chunks, and rigged streams that force the rare paths (Lemire rejections, ziggurat tails/wedges).
 * U and S_π are checked on both of their paths (WebAssembly kernels and the plain-JS loops).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Prng } from '../../src/core/prng.js';
import type { FloatDtype, FloatTensor } from '../../src/core/tensor.js';
import { emptyLeafStats } from '../../src/interventions/leaf-operator.js';
import { fillStandardNormal, standardNormal } from '../../src/interventions/normal.js';
import { permuteLeaf } from '../../src/interventions/permute.js';
import { resampleLeaf } from '../../src/interventions/resample.js';
import {
  setSimdUlpEnabled,
  setWasmPermuteEnabled,
  simdUlpAvailable,
  wasmPermuteApplies,
} from '../../src/interventions/kernels/index.js';
import { stepTensorUlp, ULP_DIRECTIONS, type UlpDirection } from '../../src/interventions/ulp.js';
import { goldenDigests } from './golden-cases.js';
import { fillStandardNormal as oracleFillNormal, standardNormal as oracleNormal } from './oracle/normal.js';
import { permuteLeaf as oraclePermute } from './oracle/permute.js';
import { resampleLeaf as oracleResample } from './oracle/resample.js';
import { stepTensorUlp as oracleStep } from './oracle/ulp.js';

fc.configureGlobal({ seed: 20261107, numRuns: 600 });

const DTYPES: readonly FloatDtype[] = ['float32', 'float64', 'float16', 'bfloat16'];
const WIDTH: Record<FloatDtype, number> = { float16: 2, bfloat16: 2, float32: 4, float64: 8 };

afterEach(() => {
  setSimdUlpEnabled(true);
  setWasmPermuteEnabled(true);
});

// ------------------------------------------------------------------ helpers

function bytesOf(t: FloatTensor): Buffer {
  return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

/** A tensor over the given raw bytes, as a view `offsetWords` elements into a larger buffer (neighbours 0xa5). */
function tensorOver(dtype: FloatDtype, bytes: Uint8Array, offsetWords = 0): FloatTensor {
  const w = WIDTH[dtype];
  const n = bytes.length / w;
  const buf = new ArrayBuffer(bytes.length + 2 * offsetWords * w + 8);
  new Uint8Array(buf).fill(0xa5);
  new Uint8Array(buf, offsetWords * w, bytes.length).set(bytes);
  const off = offsetWords * w;
  switch (dtype) {
    case 'float16':
    case 'bfloat16':
      return { dtype, shape: [n], data: new Uint16Array(buf, off, n) };
    case 'float32':
      return { dtype, shape: [n], data: new Float32Array(buf, off, n) };
    case 'float64':
      return { dtype, shape: [n], data: new Float64Array(buf, off, n) };
  }
}

/** Little-endian bytes of word patterns (16/32-bit as numbers, 64-bit as [hi, lo] pairs). */
function wordsToBytes(dtype: FloatDtype, words: readonly (number | readonly [number, number])[]): Uint8Array {
  const w = WIDTH[dtype];
  const out = new Uint8Array(words.length * w);
  const dv = new DataView(out.buffer);
  words.forEach((x, i) => {
    if (w === 2) dv.setUint16(i * 2, x as number, true);
    else if (w === 4) dv.setUint32(i * 4, x as number, true);
    else {
      const [hi, lo] = x as readonly [number, number];
      dv.setUint32(i * 8, lo, true);
      dv.setUint32(i * 8 + 4, hi, true);
    }
  });
  return out;
}

/** Patterns around every boundary of a 16/32-bit format: zeros, subnormals, normals, max finite, ±Inf, NaNs. */
function edgeWords(dtype: 'float16' | 'bfloat16' | 'float32', span: number): number[] {
  const f = {
    float16: { sign: 0x8000, bases: [0, 0x3ff, 0x400, 0x3c00, 0x7bff, 0x7c00, 0x7e00, 0x7fff] },
    bfloat16: { sign: 0x8000, bases: [0, 0x7f, 0x80, 0x3f80, 0x7f7f, 0x7f80, 0x7fc0, 0x7fff] },
    float32: {
      sign: 0x80000000,
      bases: [0, 0x7fffff, 0x800000, 0x3f800000, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0x7fffffff],
    },
  }[dtype];
  const mag = f.sign - 1;
  const out: number[] = [];
  for (const b of f.bases) {
    for (let d = -span; d <= span; d++) {
      const m = b + d;
      if (m < 0 || m > mag) continue;
      out.push(m, (m + f.sign) >>> 0);
    }
  }
  return out;
}

function edgePairs(span: number): [number, number][] {
  const his = [0, 0x000fffff, 0x00100000, 0x3ff00000, 0x7fefffff, 0x7ff00000, 0x7ff80000, 0x7fffffff];
  const los = [0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
  const out: [number, number][] = [];
  for (const h of his) {
    for (let d = -span; d <= span; d++) {
      const hi = h + d;
      if (hi < 0 || hi > 0x7fffffff) continue;
      for (const lo of los) out.push([hi, lo], [(hi + 0x80000000) >>> 0, lo]);
    }
  }
  return out;
}

const word16 = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }),
  fc.constantFrom(
    0,
    0x8000,
    0x7bff,
    0xfbff,
    0x7c00,
    0xfc00,
    0x7e00,
    0x7f7f,
    0xff7f,
    0x7f80,
    0xff80,
    0x7fc0,
    0xffff,
    1,
    0x8001,
  ),
);
const word32 = fc.oneof(
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.constantFrom(
    0,
    0x80000000,
    1,
    0x80000001,
    0x7f7fffff,
    0xff7fffff,
    0x7f800000,
    0xff800000,
    0x7fc00000,
    0xffc00001,
    0x7f800001,
    0xffffffff,
    0x7fffffff,
  ),
);
const hiWord = fc.oneof(
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.constantFrom(0, 0x80000000, 0x7fefffff, 0xffefffff, 0x7ff00000, 0xfff00000, 0x7ff80000, 0xffffffff),
);
const loWord = fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(0, 1, 0xffffffff, 0xfffffffe));
const word64 = fc.tuple(hiWord, loWord);

function wordsArb(dtype: FloatDtype, maxLength: number): fc.Arbitrary<(number | readonly [number, number])[]> {
  const w = dtype === 'float64' ? word64 : dtype === 'float32' ? word32 : word16;
  return fc.array(w as fc.Arbitrary<number | readonly [number, number]>, { minLength: 0, maxLength });
}

/** Checks U on `bytes` against the oracle, on the current path; the input must stay untouched. */
function checkUlp(dtype: FloatDtype, bytes: Uint8Array, dir: UlpDirection, offsetWords = 0): void {
  const t = tensorOver(dtype, bytes, offsetWords);
  const whole = Buffer.from(new Uint8Array(t.data.buffer)); // the view and its neighbours
  const got = stepTensorUlp(t, dir);
  const want = oracleStep(tensorOver(dtype, bytes), dir);
  expect(got.tensor.dtype).toBe(dtype);
  expect(got.tensor.shape).toEqual(t.shape);
  expect(got.tensor.data.buffer).not.toBe(t.data.buffer);
  expect(got.nonFinite).toBe(want.nonFinite);
  if (!bytesOf(got.tensor).equals(bytesOf(want.tensor)))
    throw new Error(`U ${dtype} ${dir}: output bits differ from the oracle`);
  expect(Buffer.from(new Uint8Array(t.data.buffer)).equals(whole)).toBe(true);
}

/** The two implementations of U and of S_π: WebAssembly kernels, or the plain-JS loops. */
const PATHS = [
  ['WebAssembly', true],
  ['plain-JS', false],
] as const;

function usePath(wasm: boolean): void {
  setSimdUlpEnabled(wasm);
  setWasmPermuteEnabled(wasm);
}

// ------------------------------------------------------------------ golden digests of the pre-speed-up code

/** Produced by golden-cases.ts run against commit 53b2e2e's src/ (see that file). */
const GOLDEN: Readonly<Record<string, string>> = {
  'float32 U:up': '5681722030ea0b070281b875807899c07362264fa3f9b54ae4d9662dcb87566a',
  'float32 U:down': 'd18488d32913585db642a44112186f26c7f58d7e7799af3a5a93e7c9c925851e',
  'float32 U:away': 'c7697e0edb29117b7b6198cbe8842f715708f812028dbb6eb23c87d6632728df',
  'float32 U:toward-zero': 'd3dcf6b2eb053e12fcc0a816865589be592a5af7df156bc23b5fa6e2876b467e',
  'float32 S_pi': '0ce081925f032134467a8f261c0efe1350981d754078c1be16f90ac432f207db',
  'float32 T_mu': '55d5a3a1459e562263d2cb39f8c95e15866498acd5e1022fe2f21e7a542030eb',
  'float64 U:up': 'b709177a992be6ce17dd4ed8d3ba8854bf3bed87828700cb8829dd1ce927aaaf',
  'float64 U:down': '1ffb57a8bb8897d58bd25a08c9da94737130556797d0a460e949fe530bddb4b3',
  'float64 U:away': '141086954f79bad407aa5f9fb23d9c95abf279d3574ddca9a93f5e26b226cc37',
  'float64 U:toward-zero': 'dfd10a4802dfaf6c740ed737c8fa4b94dc0c87780574f88854efe26deefb92a6',
  'float64 S_pi': 'e73d62d58b4bf55da8e28514609601466284c99379fa007f0d1e6c64a4a78489',
  'float64 T_mu': 'f6070d632b3eb8a70223d65c57478aaf8791bb970ad96655c5b279fc3901da35',
  'float16 U:up': '4f5d2929ed62fee92183f8fd8c4e173b46f51f44b0e3792da65420533b1f2ba3',
  'float16 U:down': '29f9f7ba50588b4bc064df0d3d1586cc50e44ffe72c7aac416c65434ef39d841',
  'float16 U:away': '5aa19fbaeae8d19d288c16bbb2745194c040d8d2fcae0c9edf0641a96c7bd987',
  'float16 U:toward-zero': '3145186346ef186687f15e5172aa7f26510dda71e42ed6b93f6c15a72eda8247',
  'float16 S_pi': '8b59e6b88f449e093fb2c51dc71036685d39ad8033bf4ca93ffc5edd6cb5a1fc',
  'float16 T_mu': '53cd4a3747e403653507df2fe681299f7656a8a7d10e99dfbb9d4c8d893bb68f',
  'bfloat16 U:up': '7b4f7ed144bbcdb699955f4252c9fe785867086410aeba4c01c8162f94f23957',
  'bfloat16 U:down': '092fdea5b6965b2d482abc3a1f15985400d99a550077ca420cb43d837039463b',
  'bfloat16 U:away': '18b3e2e139171727a259909d2d91c4dbf5487a4ad21dbbd8a5f4290a8cc7993a',
  'bfloat16 U:toward-zero': '48e990bae97bb0f2e7a3ec2e7c65cc2589743d9ffaf28aea39f7ce233acef896',
  'bfloat16 S_pi': '628706d6e39e0546ac7cfd9e4ee22b0eb7e4a10a8f2a01cc4fa8338f467f284f',
  'bfloat16 T_mu': '4cd78ab6375b18866c9dafe3f52fd9284eed8eadeb5eec61a4eda111f3242115',
  'normals 0': 'c7f334ccd3cb087fe65a756e94a53f9b2d70ad21fba271d6eeae0916aa17cafd',
  'normals 1': 'f0bd6730603ed4573d1cb7f77193cf569771c85150e183496d25f4eb96a3ce92',
  'normals 4095': '5bd8b95bc9b0f6a1f4c0bbabcf03042b1a7b01e62b4ca5dd9f89d3338476f914',
  'normals 4096': '0f879302e9790da03f06d43e859ab2ab2d0e68f6e444c23919f06ba2851fb10d',
  'normals 4097': 'e89b0de6d2c653954290083c912ce7ca026e8bbed4089bb7037e10cc7a0b473d',
  'normals 50000': '3dba66f24eb6a131aaf421d1380d52402329711994cae8754e5e0dc16e4f1386',
};

describe('golden digests: the same bits as before the speed-up', () => {
  for (const [label, wasm] of PATHS) {
    it(`every operator, dtype and direction (U and S_π on their ${label} path)`, () => {
      usePath(wasm);
      expect(goldenDigests()).toEqual(GOLDEN);
    });
  }
});

// ------------------------------------------------------------------ U

describe('U: identical to the oracle on both paths', () => {
  it('the WebAssembly path is in use on this platform', () => {
    expect(simdUlpAvailable()).toBe(true);
  });

  for (const [label, wasm] of PATHS) {
    describe(`${label} path`, () => {
      it('random patterns (specials weighted), every dtype and direction, views at an offset', () => {
        usePath(wasm);
        fc.assert(
          fc.property(
            fc.constantFrom(...DTYPES).chain((d) => fc.tuple(fc.constant(d), wordsArb(d, 70))),
            fc.constantFrom(...ULP_DIRECTIONS),
            fc.integer({ min: 0, max: 5 }),
            ([dtype, words], dir, offset) => checkUlp(dtype, wordsToBytes(dtype, words), dir, offset),
          ),
        );
      });

      it('all 65,536 patterns of float16 and bfloat16 in one leaf, every direction', () => {
        usePath(wasm);
        const all = Array.from({ length: 65536 }, (_, i) => i);
        for (const dtype of ['float16', 'bfloat16'] as const)
          for (const dir of ULP_DIRECTIONS) checkUlp(dtype, wordsToBytes(dtype, all), dir);
      });

      it('every float32 and float64 pattern within ±300 ULP of each format boundary, every direction', () => {
        usePath(wasm);
        const w32 = wordsToBytes('float32', edgeWords('float32', 300));
        const w64 = wordsToBytes('float64', edgePairs(40));
        for (const dir of ULP_DIRECTIONS) {
          checkUlp('float32', w32, dir);
          checkUlp('float32', w32.subarray(4, w32.length - 8), dir); // lengths not a multiple of the lane count
          checkUlp('float64', w64, dir);
          checkUlp('float64', w64.subarray(8), dir);
          for (const d16 of ['float16', 'bfloat16'] as const)
            checkUlp(d16, wordsToBytes(d16, edgeWords(d16, 300)), dir);
        }
      });

      it('leaves longer than the kernel chunk (1 MiB), with specials and a ragged tail', () => {
        usePath(wasm);
        const g = new Prng('ulp/long');
        for (const [dtype, n] of [
          ['float32', 700_001],
          ['float64', 300_003],
          ['float16', 1_200_001],
          ['bfloat16', 524_288],
        ] as const) {
          const bytes = new Uint8Array(n * WIDTH[dtype]);
          const u32 = new Uint32Array(bytes.buffer, 0, bytes.length >> 2);
          g.fillUint32(u32);
          for (let k = 0; k < 2000; k++) bytes[g.nextInt(bytes.length)] = 0xff; // some NaN/Inf/max-magnitude words
          for (const dir of ULP_DIRECTIONS) checkUlp(dtype, bytes, dir, 3);
        }
      });
    });
  }
});

// ------------------------------------------------------------------ a rigged stream for the rare paths

/**
 * A Prng whose stream is rigged (deterministically) to hit rare paths often: `mode` 'small' makes a quarter of
 * the draws tiny (0..7, so Lemire rejects 0 for most bounds), 'zeros' makes half of them 0 (retries at nearly
 * every chunk end), 'tails' sets a quarter of the draws' abscissa bits near the top (the ziggurat's wedge and
 * tail paths). Bulk fills go through nextUint32, so both the
 * oracle (nextUint32 / nextInt) and the optimised code (fillUint32) read the same stream.
 */
class RiggedPrng extends Prng {
  private readonly src: Prng;
  private filling = false;
  /** Rigged draws handed out. */
  rare = 0;
  /** Draws taken one by one rather than in a bulk fill (the optimised code does so only past a spent chunk). */
  direct = 0;
  constructor(
    seed: string,
    private readonly mode: 'small' | 'zeros' | 'tails',
  ) {
    super(seed);
    this.src = new Prng(`${seed}/rig`);
  }
  override nextUint32(): number {
    if (!this.filling) this.direct++;
    const r = this.src.nextUint32();
    if (this.mode === 'zeros') return (r & 1) === 0 ? (this.rare++, 0) : r;
    if ((r & 3) !== 0) return r;
    this.rare++;
    if (this.mode === 'small') return (r >>> 2) & 7;
    // |abscissa| near its top (2^24 > |hz| ≥ 0.94·2^24), random sign and layer
    const mag = 0x78000000 | ((r >>> 3) & 0x07ffff80);
    return ((r & 0x80000000) !== 0 ? 0x80000000 | (~mag & 0x7fffff80) | (r & 127) : mag | (r & 127)) >>> 0;
  }
  override fillUint32(out: Uint32Array, count: number = out.length): Uint32Array {
    this.filling = true;
    for (let i = 0; i < count; i++) out[i] = this.nextUint32();
    this.filling = false;
    return out;
  }
}

function nextDraws(p: Prng): number[] {
  return [p.nextUint32(), p.nextUint32(), p.nextUint32()];
}

// ------------------------------------------------------------------ S_π

function checkPermute(t: FloatTensor, make: () => Prng): void {
  const a = make(),
    b = make();
  const got = permuteLeaf(t, a);
  const want = oraclePermute(t, b);
  expect(got.dtype).toBe(t.dtype);
  expect(got.shape).toEqual(t.shape);
  expect(got.data.buffer).not.toBe(t.data.buffer);
  if (!bytesOf(got).equals(bytesOf(want)))
    throw new Error(`S_π ${t.dtype} n=${t.data.length}: output differs from the oracle`);
  expect(nextDraws(a)).toEqual(nextDraws(b));
}

describe('S_π: identical to the oracle (bits and stream use)', () => {
  it('the WebAssembly path is in use on this platform for leaves up to 2^21 elements', () => {
    expect(wasmPermuteApplies(4096, 4)).toBe(true);
    expect(wasmPermuteApplies(2 ** 21, 2)).toBe(true);
    expect(wasmPermuteApplies(2 ** 21 + 1, 2)).toBe(false);
  });

  for (const [label, wasm] of PATHS) {
    describe(`${label} path`, () => {
      it('random bytes, every dtype, n ≤ 600, random seeds, views at an offset', () => {
        usePath(wasm);
        fc.assert(
          fc.property(
            fc.constantFrom(...DTYPES).chain((d) => fc.tuple(fc.constant(d), fc.integer({ min: 0, max: 600 }))),
            fc.integer(),
            fc.integer({ min: 0, max: 3 }),
            ([dtype, n], seed, offset) => {
              const g = new Prng(seed ^ 0x5bd1e995);
              const bytes = new Uint8Array(n * WIDTH[dtype]);
              for (let i = 0; i < bytes.length; i++) bytes[i] = g.nextUint32() & 0xff;
              checkPermute(tensorOver(dtype, bytes, offset), () => new Prng(seed));
            },
          ),
          { numRuns: 300 },
        );
      });

      it('sizes around the bulk-draw chunk (4096 steps), every dtype', () => {
        usePath(wasm);
        for (const dtype of DTYPES) {
          for (const n of [4095, 4096, 4097, 4098, 8192, 8193, 12289]) {
            const bytes = new Uint8Array(n * WIDTH[dtype]);
            new Prng(`bytes/${n}`).fillUint32(new Uint32Array(bytes.buffer, 0, bytes.length >> 2));
            for (const seed of ['a', 'b', 7]) checkPermute(tensorOver(dtype, bytes), () => new Prng(seed));
          }
        }
      });

      it('a rejection-heavy stream (Lemire retries, retries past the end of a bulk chunk)', () => {
        usePath(wasm);
        let rare = 0,
          direct = 0;
        const cases = [
          [2, 'small'],
          [3, 'small'],
          [10, 'small'],
          [257, 'small'],
          [4097, 'small'],
          [9000, 'small'],
          [4097, 'zeros'],
          [12289, 'zeros'],
        ] as const;
        for (const dtype of DTYPES) {
          for (const [n, mode] of cases) {
            const idx = Array.from({ length: n }, (_, i) => i);
            const raw =
              dtype === 'float64'
                ? Float64Array.from(idx)
                : dtype === 'float32'
                  ? Int32Array.from(idx)
                  : Uint16Array.from(idx);
            const t = tensorOver(dtype, new Uint8Array(raw.buffer));
            for (const seed of ['r1', 'r2', 'r3']) {
              checkPermute(t, () => new RiggedPrng(`${seed}/${n}`, mode));
              const probe = new RiggedPrng(`${seed}/${n}`, mode);
              permuteLeaf(t, probe);
              rare += probe.rare;
              direct += probe.direct;
            }
          }
        }
        expect(rare).toBeGreaterThan(1000);
        expect(direct).toBeGreaterThan(0); // some retry ran past its chunk's bulk draws
      });

      it('the longest leaves: 2^21 elements, and beyond (bounds past the inline Lemire step)', () => {
        usePath(wasm);
        for (const n of [2 ** 21, 2 ** 21 + 5]) {
          const data = new Uint16Array(n);
          for (let i = 0; i < n; i++) data[i] = i & 0xffff;
          checkPermute({ dtype: 'float16', shape: [n], data }, () => new Prng(`wide/${n}`));
        }
      });
    });
  }
});

// ------------------------------------------------------------------ T_μ and the ziggurat

const valueArb = fc.oneof(
  { weight: 8, arbitrary: fc.double({ min: -1e4, max: 1e4, noNaN: true }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity, 0, -0, 65504, -65504, 3.4e38, -3.4e38, 1e300, -1.7e308),
  },
  { weight: 1, arbitrary: fc.double({ noNaN: false }) },
);

function tensorOfValues(dtype: FloatDtype, values: readonly number[]): FloatTensor {
  // Round through the dtype's storage (not tensorFrom, whose checks are not the subject here).
  const n = values.length;
  switch (dtype) {
    case 'float32':
      return { dtype, shape: [n], data: Float32Array.from(values) };
    case 'float64':
      return { dtype, shape: [n], data: Float64Array.from(values) };
    case 'float16':
    case 'bfloat16': {
      const f32 = Float32Array.from(values);
      const u32 = new Uint32Array(f32.buffer);
      const data = new Uint16Array(n);
      for (let i = 0; i < n; i++) {
        const x = u32[i] as number;
        // bfloat16: truncate float32; float16: a coarse mapping is enough — any bit pattern is a valid input
        data[i] = dtype === 'bfloat16' ? x >>> 16 : ((x >>> 16) & 0x8000) | ((x >>> 13) & 0x7fff);
      }
      return { dtype, shape: [n], data };
    }
  }
}

function checkResample(t: FloatTensor, make: () => Prng): void {
  const a = make(),
    b = make();
  const sa = emptyLeafStats(),
    sb = emptyLeafStats();
  const got = resampleLeaf(t, a, sa);
  const want = oracleResample(t, b, sb);
  expect(got.dtype).toBe(t.dtype);
  expect(got.shape).toEqual(t.shape);
  expect(got.data.buffer).not.toBe(t.data.buffer);
  if (!bytesOf(got).equals(bytesOf(want)))
    throw new Error(`T_μ ${t.dtype} n=${t.data.length}: output differs from the oracle`);
  expect(sa.nonFinite).toBe(sb.nonFinite);
  expect(nextDraws(a)).toEqual(nextDraws(b));
}

describe('T_μ: identical to the oracle (bits, non-finite counts and stream use)', () => {
  it('random values with NaN, ±Inf, ±0, huge magnitudes; every dtype', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DTYPES),
        fc.array(valueArb, { minLength: 0, maxLength: 120 }),
        fc.integer(),
        (dtype, values, seed) => {
          checkResample(tensorOfValues(dtype, values), () => new Prng(seed));
        },
      ),
    );
  });

  it('constant, single-finite and overflowing leaves', () => {
    const cases: [FloatDtype, number[]][] = [
      ['float32', [3, 3, 3]],
      ['float64', [NaN, 5]],
      ['float16', [Infinity, -Infinity, 2]],
      ['float64', [1.7e308, -1.7e308, 1.7e308, -1.7e308, 1e308]], // SD overflows: infinite scale, clamped draws
      ['float32', [3.4e38, -3.4e38, 3.4e38, 0]],
      ['float64', [Number.MAX_VALUE, -Number.MAX_VALUE]],
    ];
    for (const [dtype, v] of cases)
      for (const seed of [1, 2, 3, 'x']) checkResample(tensorOfValues(dtype, v), () => new Prng(seed));
  });

  it('leaves across the bulk-draw chunk (4096 normals), with and without non-finite elements', () => {
    const g = new Prng('resample/sizes');
    for (const dtype of DTYPES) {
      for (const n of [4095, 4096, 4097, 8193, 12000]) {
        for (const holes of [0, 0.02]) {
          const v = Array.from({ length: n }, () => (g.nextFloat() < holes ? NaN : g.nextNormal() * 2 - 1));
          checkResample(tensorOfValues(dtype, v), () => new Prng(`s/${n}/${holes}`));
        }
      }
    }
  });

  it('a stream rigged towards the ziggurat tails and wedges', () => {
    let rare = 0,
      direct = 0;
    for (const dtype of DTYPES) {
      for (const n of [5, 300, 4097, 9000]) {
        const v = Array.from({ length: n }, (_, i) => Math.sin(i) * 10);
        checkResample(tensorOfValues(dtype, v), () => new RiggedPrng(`t/${dtype}/${n}`, 'tails'));
        const probe = new RiggedPrng(`t/${dtype}/${n}`, 'tails');
        resampleLeaf(tensorOfValues(dtype, v), probe);
        rare += probe.rare;
        direct += probe.direct;
      }
    }
    expect(rare).toBeGreaterThan(1000);
    expect(direct).toBeGreaterThan(0); // some slow path ran past its chunk's bulk draws
  });
});

describe('ziggurat: fillStandardNormal and standardNormal identical to the oracle', () => {
  function checkFill(count: number, length: number, make: () => Prng): void {
    const a = make(),
      b = make();
    const x = new Float64Array(length),
      y = new Float64Array(length);
    fillStandardNormal(a, x, count);
    oracleFillNormal(b, y, count);
    expect(Buffer.from(x.buffer).equals(Buffer.from(y.buffer))).toBe(true);
    expect(nextDraws(a)).toEqual(nextDraws(b));
  }

  it('counts across chunk boundaries, fractional counts and counts beyond the array', () => {
    for (const [count, length] of [
      [0, 0],
      [1, 1],
      [2.5, 3],
      [4095, 4095],
      [4096, 4096],
      [4097, 4097],
      [20_000, 20_000],
      [10, 4],
      [5000, 100],
    ]) {
      checkFill(count as number, length as number, () => new Prng(`fill/${count}`));
      checkFill(count as number, length as number, () => new RiggedPrng(`fill/${count}`, 'tails'));
    }
  });

  it('single draws', () => {
    for (const make of [() => new Prng('single'), () => new RiggedPrng('single', 'tails')]) {
      const a = make(),
        b = make();
      for (let i = 0; i < 20_000; i++)
        if (!Object.is(standardNormal(a), oracleNormal(b))) throw new Error(`draw ${i} differs`);
      expect(nextDraws(a)).toEqual(nextDraws(b));
    }
  });
});
