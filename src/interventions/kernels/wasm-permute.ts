/**
 * S_π's Fisher–Yates swaps as WebAssembly kernels: the fast path of `permuteLeaf` (../permute.ts) for leaves of up
 * to 2^21 elements and MAX_BYTES bytes. The draws still come from `Prng.fillUint32`, written straight into the
 * module's memory; a kernel turns each draw into its Lemire index (a 64-bit product) and swaps, and hands back
 * to JS at a draw that nextInt might reject (low product word below the bound: probability < 2^-11 per step),
 * which JS resolves exactly as nextInt does before the kernel resumes. Same permutation, same stream use as
 * the plain-JS shuffles (test/interventions/bit-identical.test.ts); returns undefined where WebAssembly is
 * unavailable (wasm-writer.ts), and the caller uses those.
 *
 * Memory: [0, DATA) holds one chunk of draws, [DATA, DATA + bytes) the leaf being shuffled in place.
 */
import type { Prng } from '../../core/index.js';
import {
  BLOCK,
  br,
  brIf,
  ensureBytes,
  func,
  funcType,
  get,
  i32,
  I32,
  I32_ADD,
  I32_EQZ,
  I32_GE_U,
  I32_LT_U,
  I32_SHL,
  I32_SHR_U,
  I32_SUB,
  I32_WRAP_I64,
  i32Load,
  i32Load16U,
  i32Store,
  i32Store16,
  i64Const,
  I64,
  I64_EXTEND_I32_U,
  I64_MUL,
  I64_SHR_U,
  i64Load,
  i64Load32U,
  i64Store,
  instantiate,
  LOOP,
  END,
  moduleBytes,
  set,
  tee,
  type WasmMemory,
} from './wasm-writer.js';

/** Draws per bulk fill (and kernel call). */
const CHUNK = 4096;
/** Byte offset of the leaf in the module's memory. */
const DATA = CHUNK * 4;
/** Largest leaf (bytes) shuffled here; bigger ones use the JS loops rather than grow the module's memory. */
const MAX_BYTES = 8 << 20;
/** Largest element count: bounds up to 2^21 keep the JS rejection step's products exact in doubles. */
const MAX_ELEMENTS = 2 ** 21;
const TWO32 = 4294967296;

/**
 * kernel(data, draws, count, top) → draws used. Runs Fisher–Yates steps i = top, top − 1, … with bound i + 1,
 * one draw each from draws[0..count), until the draws run out, i reaches 0, or a draw's low product word is
 * below the bound (left unused for JS). Elements are `width` bytes at data + i·width.
 */
export function shuffleKernel(width: 2 | 4 | 8): number[] {
  const DATA_P = 0,
    P = 1,
    COUNT = 2,
    I = 3; // params; COUNT becomes the end pointer
  const START = 4,
    J = 5,
    A = 6,
    B = 7; // i32 locals
  const M = 8,
    T64 = 9; // i64 locals
  const T32 = 10; // i32 local
  const shift = width === 2 ? 1 : width === 4 ? 2 : 3;
  const addr = (idx: number): number[] => [...get(DATA_P), ...get(idx), ...i32(shift), ...I32_SHL, ...I32_ADD];
  const swap =
    width === 8
      ? [
          ...get(A),
          ...i64Load(3),
          ...set(T64),
          ...get(A),
          ...get(B),
          ...i64Load(3),
          ...i64Store(3),
          ...get(B),
          ...get(T64),
          ...i64Store(3),
        ]
      : width === 4
        ? [
            ...get(A),
            ...i32Load(2),
            ...set(T32),
            ...get(A),
            ...get(B),
            ...i32Load(2),
            ...i32Store(2),
            ...get(B),
            ...get(T32),
            ...i32Store(2),
          ]
        : [
            ...get(A),
            ...i32Load16U(1),
            ...set(T32),
            ...get(A),
            ...get(B),
            ...i32Load16U(1),
            ...i32Store16(1),
            ...get(B),
            ...get(T32),
            ...i32Store16(1),
          ];
  return func(
    [
      [4, I32],
      [2, I64],
      [1, I32],
    ],
    [
      ...get(P),
      ...set(START),
      ...get(P),
      ...get(COUNT),
      ...i32(2),
      ...I32_SHL,
      ...I32_ADD,
      ...set(COUNT), // end pointer
      ...BLOCK,
      ...LOOP,
      ...get(P),
      ...get(COUNT),
      ...I32_GE_U,
      ...brIf(1),
      ...get(I),
      ...I32_EQZ,
      ...brIf(1),
      // m = draw · (i + 1), a 64-bit product
      ...get(P),
      ...i64Load32U(2),
      ...get(I),
      ...i32(1),
      ...I32_ADD,
      ...I64_EXTEND_I32_U,
      ...I64_MUL,
      ...tee(M),
      // low word < i + 1: nextInt may reject this draw — stop here
      ...I32_WRAP_I64,
      ...get(I),
      ...i32(1),
      ...I32_ADD,
      ...I32_LT_U,
      ...brIf(1),
      ...get(M),
      ...i64Const(32),
      ...I64_SHR_U,
      ...I32_WRAP_I64,
      ...set(J),
      ...addr(I),
      ...set(A),
      ...addr(J),
      ...set(B),
      ...swap,
      ...get(P),
      ...i32(4),
      ...I32_ADD,
      ...set(P),
      ...get(I),
      ...i32(1),
      ...I32_SUB,
      ...set(I),
      ...br(0),
      ...END,
      ...END,
      ...get(P),
      ...get(START),
      ...I32_SUB,
      ...i32(2),
      ...I32_SHR_U,
    ],
  );
}

type Kernel = (data: number, draws: number, count: number, top: number) => number;
interface Instance {
  readonly memory: WasmMemory;
  readonly kernels: Readonly<Record<2 | 4 | 8, Kernel>>;
}

let instance: Instance | null | undefined;
let enabled = true;

interface Views {
  readonly buffer: ArrayBuffer;
  readonly draws: Uint32Array;
  readonly u16: Uint16Array;
  readonly f32: Float32Array;
  readonly f64: Float64Array;
}
let cached: Views | undefined;

/** Views of the module's memory, rebuilt when it has grown (growing replaces its ArrayBuffer). */
function views(memory: WasmMemory): Views {
  const buffer = memory.buffer;
  if (cached === undefined || cached.buffer !== buffer) {
    cached = {
      buffer,
      draws: new Uint32Array(buffer, 0, CHUNK),
      u16: new Uint16Array(buffer),
      f32: new Float32Array(buffer),
      f64: new Float64Array(buffer),
    };
  }
  return cached;
}

function load(): Instance | null {
  if (instance !== undefined) return instance;
  const e = instantiate(() =>
    moduleBytes(
      [funcType([I32, I32, I32, I32], [I32])],
      [
        { name: 'w2', type: 0, code: shuffleKernel(2) },
        { name: 'w4', type: 0, code: shuffleKernel(4) },
        { name: 'w8', type: 0, code: shuffleKernel(8) },
      ],
      1,
    ),
  );
  if (e === null) return (instance = null);
  return (instance = {
    memory: e.memory as WasmMemory,
    kernels: { 2: e.w2 as Kernel, 4: e.w4 as Kernel, 8: e.w8 as Kernel },
  });
}

/** Switches the WebAssembly path on or off (tests compare it with the JS loops); returns the previous setting. */
export function setWasmPermuteEnabled(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

/** Whether leaves of `n` elements of `width` bytes take the WebAssembly path. */
export function wasmPermuteApplies(n: number, width: number): boolean {
  return enabled && n <= MAX_ELEMENTS && n * width <= MAX_BYTES && load() !== null;
}

/**
 * A shuffled copy of `data` (same type), or undefined when the WebAssembly path does not apply. The draws and
 * the permutation are those of ../permute.ts's JS loops (Fisher–Yates, i = n−1 … 1, j = prng.nextInt(i + 1)).
 */
export function wasmPermute<T extends Uint16Array | Float32Array | Float64Array>(data: T, prng: Prng): T | undefined {
  const n = data.length;
  const width = data.BYTES_PER_ELEMENT as 2 | 4 | 8;
  if (!wasmPermuteApplies(n, width)) return undefined;
  const inst = instance as Instance;
  ensureBytes(inst.memory, DATA + n * width);
  const v = views(inst.memory);
  const at = DATA / width;
  // Same-type typed-array set/slice copy bytes (ECMA-262 §23.2.3.26.1, §23.2.3.27): NaN payloads are kept.
  const view = (data instanceof Uint16Array ? v.u16 : data instanceof Float32Array ? v.f32 : v.f64) as T;
  view.set(data, at);
  const { draws, u16: words } = v; // words: the rare JS swap moves elements as 16-bit words
  const kernel = inst.kernels[width];
  const half = width / 2;
  let i = n - 1;
  while (i > 0) {
    const count = i < CHUNK ? i : CHUNK; // one draw per remaining step at most: never past nextInt's use
    prng.fillUint32(draws, count);
    let p = 0;
    while (p < count) {
      const used = kernel(DATA, 4 * p, count - p, i);
      p += used;
      i -= used;
      if (p === count) break;
      // The kernel stopped at a draw nextInt may reject (see ../permute.ts's `indicesFrom`): resolve it here.
      const bound = i + 1;
      let m = (draws[p++] as number) * bound;
      let l = m >>> 0;
      const t = (TWO32 - bound) % bound;
      while (l < t) {
        m = (p < count ? (draws[p++] as number) : prng.nextUint32()) * bound;
        l = m >>> 0;
      }
      const j = (m - l) / TWO32;
      for (let k = 0; k < half; k++) {
        const x = DATA / 2 + i * half + k,
          y = DATA / 2 + j * half + k;
        const w = words[x] as number;
        words[x] = words[y] as number;
        words[y] = w;
      }
      i -= 1;
    }
  }
  return view.slice(at, at + n) as T;
}
