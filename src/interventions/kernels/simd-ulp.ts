/**
 * U's one-ULP step as WebAssembly SIMD kernels (128-bit vectors of 8 × 16-bit, 4 × 32-bit or 2 × 64-bit
 * words): the fast path of `stepTensorUlp` (../ulp.ts). A plain-JS loop costs several times a byte copy of the
 * leaf; these kernels step 16 bytes per handful of instructions, so U costs little more than the copy it makes.
 *
 * The module is assembled here at load time from the instruction sequences below (no build step, no binary
 * file). Where WebAssembly SIMD is unavailable, or on a big-endian platform, `simdStepUlp` returns undefined and
 * ../ulp.ts runs its scalar loops; both give the same bits (test/interventions/bit-identical.test.ts).
 *
 * Two kernels per dtype and direction, both reading the words at [src, end) of the module's memory and writing
 * the stepped words to the output region OUT bytes further on (the leaf is copied in once and the result sliced
 * out once; the loop handles 4 vectors per iteration):
 *
 * - `plain` handles only "plain" words — finite, not at max finite magnitude and, unless the direction is
 *   'away', non-zero — for which the step is b + 1 ('away'), b − 1 ('toward-zero'), b + (s | 1) ('up') or
 *   b − (s | 1) ('down'), with s = b >> (width − 1) arithmetic (0 or −1, so s | 1 is the sign as ±1).
 *   It returns whether any word was not plain; then the whole chunk is redone by
 * - `general`, which steps every word as b + δ (mod 2^width), δ chosen per lane without branches:
 *     m = b & magnitude mask
 *     m > max finite   → δ = 0 (±Inf, NaN: unchanged, counted)
 *     m = max finite   → δ = −1 (U never overflows: the step goes toward zero)
 *     m = 0            → δ = ((s ^ zX) & zA & sign bit) | 1
 *     otherwise        → δ = ((s ^ nX) & nA) | nB
 *   with (nX, nA, nB, zX, zA) per direction (`GENERAL_PARAMS`), and returns the count of non-finite words.
 *
 * Both are exactly the rules of ../ulp.ts (module comment there): 'away' δ = +1 (also from ±0); 'toward-zero'
 * δ = −1 but +1 from ±0; 'up' +1 for positives, −1 for negatives, and ±0 lands on +smallest subnormal; 'down'
 * the mirror image.
 */

import {
  BLOCK,
  brIf,
  ensureBytes,
  func,
  funcType,
  get,
  i32,
  I32,
  I32_ADD,
  I32_GE_U,
  I32_LT_U,
  I32_WRAP_I64,
  i64Const,
  I64_ADD,
  I64_EXTEND_I32_S,
  I64_EXTEND_I32_U,
  I64_OR,
  I64_SHL,
  instantiate,
  LOOP,
  END,
  moduleBytes,
  set,
  simd,
  V128,
  vLoad,
  vStore,
  type WasmMemory,
} from './wasm-writer.js';

// ------------------------------------------------------------------ the kernels

const V_AND = simd(78),
  V_ANDNOT = simd(79),
  V_OR = simd(80),
  V_XOR = simd(81),
  V_BITSELECT = simd(82),
  V_ANY_TRUE = simd(83);
const I32X4_SUB = simd(177),
  I32X4_EXTADD_PAIRWISE_I16X8_S = simd(126);
const i32x4Lane = (k: number): number[] => simd(27, k);
const i64x2Lane = (k: number): number[] => simd(29, k);

/** The lane operations of one word width. */
interface Lanes {
  readonly width: 16 | 32 | 64;
  /** Splats the i32 on the stack (sign-extended for 64-bit lanes). */
  readonly splatI32: number[];
  readonly eq: number[];
  readonly gtS: number[];
  readonly geS: number[];
  /** Unsigned ≥ (for 64-bit lanes emulated by the caller: see `geU`). */
  readonly geU: number[] | undefined;
  readonly shrS: number[];
  readonly add: number[];
  readonly sub: number[];
  /** Adds the lanes of the −1/0 mask on the stack into the i32x4 or i64x2 accumulator `acc`, as counts. */
  readonly count: (acc: number, scratch: number) => number[];
  /** Pushes the accumulator's total as an i32. */
  readonly total: (acc: number) => number[];
}

const LANES: Readonly<Record<16 | 32 | 64, Lanes>> = {
  16: {
    width: 16,
    splatI32: simd(16),
    eq: simd(45),
    gtS: simd(49),
    geS: simd(53),
    geU: simd(54),
    shrS: simd(140),
    add: simd(142),
    sub: simd(145),
    // widen the 16-bit masks pairwise to 32-bit sums first, so counts cannot overflow a 16-bit lane
    count: (acc, t) => [...I32X4_EXTADD_PAIRWISE_I16X8_S, ...set(t), ...get(acc), ...get(t), ...I32X4_SUB, ...set(acc)],
    total: (acc) => sumI32x4(acc),
  },
  32: {
    width: 32,
    splatI32: simd(17),
    eq: simd(55),
    gtS: simd(59),
    geS: simd(63),
    geU: simd(64),
    shrS: simd(172),
    add: simd(174),
    sub: simd(177),
    count: (acc, t) => [...set(t), ...get(acc), ...get(t), ...I32X4_SUB, ...set(acc)],
    total: (acc) => sumI32x4(acc),
  },
  64: {
    width: 64,
    splatI32: [...I64_EXTEND_I32_S, ...simd(18)],
    eq: simd(214),
    gtS: simd(217),
    geS: simd(219),
    geU: undefined,
    shrS: simd(204),
    add: simd(206),
    sub: simd(209),
    count: (acc, t) => [...set(t), ...get(acc), ...get(t), ...simd(209), ...set(acc)],
    total: (acc) => [...get(acc), ...i64x2Lane(0), ...get(acc), ...i64x2Lane(1), ...I64_ADD, ...I32_WRAP_I64],
  },
};

function sumI32x4(acc: number): number[] {
  return [
    ...get(acc),
    ...i32x4Lane(0),
    ...get(acc),
    ...i32x4Lane(1),
    ...I32_ADD,
    ...get(acc),
    ...i32x4Lane(2),
    ...I32_ADD,
    ...get(acc),
    ...i32x4Lane(3),
    ...I32_ADD,
  ];
}

/** A word-format constant as 32-bit halves (hi only matters for 64-bit lanes). */
interface Word {
  readonly hi: number;
  readonly lo: number;
}

/** Pushes the splat of a constant word. */
function splat(l: Lanes, w: Word): number[] {
  if (l.width !== 64) return [...i32(w.lo | 0), ...l.splatI32];
  // (u64(hi) << 32) | u64(lo)
  return [
    ...i32(w.hi | 0),
    ...I64_EXTEND_I32_U,
    ...i64Const(32),
    ...I64_SHL,
    ...i32(w.lo | 0),
    ...I64_EXTEND_I32_U,
    ...I64_OR,
    ...simd(18),
  ];
}

interface Format {
  readonly lanes: Lanes;
  readonly mag: Word;
  readonly max: Word;
  readonly sign: Word;
}

const w16 = (x: number): Word => ({ hi: 0, lo: x });
const FORMATS: Readonly<Record<SimdUlpDtype, Format>> = {
  float16: { lanes: LANES[16], mag: w16(0x7fff), max: w16(0x7bff), sign: w16(0x8000) },
  bfloat16: { lanes: LANES[16], mag: w16(0x7fff), max: w16(0x7f7f), sign: w16(0x8000) },
  float32: { lanes: LANES[32], mag: w16(0x7fffffff), max: w16(0x7f7fffff), sign: w16(0x80000000) },
  float64: {
    lanes: LANES[64],
    mag: { hi: 0x7fffffff, lo: 0xffffffff },
    max: { hi: 0x7fefffff, lo: 0xffffffff },
    sign: { hi: 0x80000000, lo: 0 },
  },
};

const minus = (w: Word, k: number): Word => {
  const lo = w.lo - k;
  return lo >= 0 ? { hi: w.hi, lo } : { hi: w.hi - 1, lo: lo + 0x100000000 };
};

/** Byte offset of the output region: a kernel reads [src, end) and writes [src + OUT, end + OUT). */
const OUT = 1 << 20;
/** Bytes per loop iteration: UNROLL vectors of 16 bytes. Kernel lengths are padded to a multiple of it. */
const UNROLL = 4;
const STRIDE = 16 * UNROLL;

/**
 * The loop over [src, end) (end − src a positive multiple of STRIDE): `step` is emitted for each of the UNROLL
 * vectors of an iteration, with that vector's word in local `word`; it must leave the stepped word on the
 * stack, which is stored OUT bytes further on (the output region).
 */
function loopOver(src: number, end: number, step: readonly number[], word: number): number[] {
  const vectors: number[] = [];
  for (let u = 0; u < UNROLL; u++) {
    vectors.push(...get(src), ...get(src), ...vLoad(16 * u), ...set(word), ...step, ...vStore(OUT + 16 * u));
  }
  return [
    ...BLOCK,
    ...get(src),
    ...get(end),
    ...I32_GE_U,
    ...brIf(0),
    ...LOOP,
    ...vectors,
    ...get(src),
    ...i32(STRIDE),
    ...I32_ADD,
    ...set(src),
    ...get(src),
    ...get(end),
    ...I32_LT_U,
    ...brIf(0),
    ...END,
    ...END,
  ];
}

// Parameters of every kernel: 0 src, 1 end (i32 byte addresses; end − src a multiple of STRIDE). The output
// goes to [src + OUT, end + OUT).

/** `plain` kernel of a format and direction: returns 1 when some word was not plain, else 0. */
function plainKernel(f: Format, dir: SimdUlpDirection): number[] {
  const l = f.lanes;
  const WORD = 2,
    ACC = 3,
    MAG = 4,
    LIMIT = 5,
    ONE = 6,
    SIGN = 7;
  // special ⟺ m ≥ max finite ('away': zeros are plain), or m − 1 ≥ max − 1 unsigned (other directions: also m = 0)
  const away = dir === 'away';
  let special: number[];
  if (away)
    special = [...get(WORD), ...get(MAG), ...V_AND, ...get(LIMIT), ...l.geS]; // magnitudes are non-negative
  else if (l.geU !== undefined)
    special = [...get(WORD), ...get(MAG), ...V_AND, ...get(ONE), ...l.sub, ...get(LIMIT), ...l.geU];
  else
    special = [
      ...get(WORD),
      ...get(MAG),
      ...V_AND,
      ...get(ONE),
      ...l.sub,
      ...get(SIGN),
      ...V_XOR,
      ...get(LIMIT),
      ...l.geS,
    ]; // unsigned ≥ via the sign flip
  const sOr1 = [...get(WORD), ...i32(l.width - 1), ...l.shrS, ...get(ONE), ...V_OR];
  const stepped =
    dir === 'away'
      ? [...get(WORD), ...get(ONE), ...l.add]
      : dir === 'toward-zero'
        ? [...get(WORD), ...get(ONE), ...l.sub]
        : dir === 'up'
          ? [...get(WORD), ...sOr1, ...l.add]
          : [...get(WORD), ...sOr1, ...l.sub];
  const limit = away
    ? splat(l, f.max)
    : l.geU !== undefined
      ? splat(l, minus(f.max, 1))
      : splat(l, flipSign(minus(f.max, 1)));
  return func(
    [[6, V128]],
    [
      ...splat(l, f.mag),
      ...set(MAG),
      ...limit,
      ...set(LIMIT),
      ...splat(l, { hi: 0, lo: 1 }),
      ...set(ONE),
      ...splat(l, f.sign),
      ...set(SIGN),
      ...loopOver(0, 1, [...stepped, ...get(ACC), ...special, ...V_OR, ...set(ACC)], WORD),
      ...get(ACC),
      ...V_ANY_TRUE,
    ],
  );
}

const flipSign = (w: Word): Word => ({ hi: (w.hi ^ 0x80000000) >>> 0, lo: w.lo });

/** `general` kernel of a format: params 2..6 are (nX, nA, nB, zX, zA); returns the count of non-finite words. */
function generalKernel(f: Format): number[] {
  const l = f.lanes;
  const [NX, NA, NB, ZX, ZA] = [2, 3, 4, 5, 6];
  const WORD = 7,
    S = 8,
    M = 9,
    NONFIN = 10,
    ACC = 11,
    T = 12;
  const C_MAG = 13,
    C_MAX = 14,
    C_SIGN = 15,
    C_ONE = 16,
    C_ZERO = 17,
    C_NX = 18,
    C_NA = 19,
    C_NB = 20,
    C_ZX = 21,
    C_ZA = 22;
  const step = [
    ...get(WORD),
    ...i32(l.width - 1),
    ...l.shrS,
    ...set(S),
    ...get(WORD),
    ...get(C_MAG),
    ...V_AND,
    ...set(M),
    ...get(M),
    ...get(C_MAX),
    ...l.gtS,
    ...set(NONFIN),
    ...get(NONFIN),
    ...l.count(ACC, T),
    ...get(WORD),
    // δ = bitselect(zero δ, non-zero δ, m == 0) | (m == max), then & ~nonFinite
    ...get(S),
    ...get(C_ZX),
    ...V_XOR,
    ...get(C_ZA),
    ...V_AND,
    ...get(C_SIGN),
    ...V_AND,
    ...get(C_ONE),
    ...V_OR,
    ...get(S),
    ...get(C_NX),
    ...V_XOR,
    ...get(C_NA),
    ...V_AND,
    ...get(C_NB),
    ...V_OR,
    ...get(M),
    ...get(C_ZERO),
    ...l.eq,
    ...V_BITSELECT,
    ...get(M),
    ...get(C_MAX),
    ...l.eq,
    ...V_OR,
    ...get(NONFIN),
    ...V_ANDNOT,
    ...l.add,
  ];
  return func(
    [[16, V128]],
    [
      ...splat(l, f.mag),
      ...set(C_MAG),
      ...splat(l, f.max),
      ...set(C_MAX),
      ...splat(l, f.sign),
      ...set(C_SIGN),
      ...splat(l, { hi: 0, lo: 1 }),
      ...set(C_ONE),
      ...splat(l, { hi: 0, lo: 0 }),
      ...set(C_ZERO),
      ...get(NX),
      ...l.splatI32,
      ...set(C_NX),
      ...get(NA),
      ...l.splatI32,
      ...set(C_NA),
      ...get(NB),
      ...l.splatI32,
      ...set(C_NB),
      ...get(ZX),
      ...l.splatI32,
      ...set(C_ZX),
      ...get(ZA),
      ...l.splatI32,
      ...set(C_ZA),
      ...loopOver(0, 1, step, WORD),
      ...l.total(ACC),
    ],
  );
}

export type SimdUlpDtype = 'float16' | 'bfloat16' | 'float32' | 'float64';
export type SimdUlpDirection = 'up' | 'down' | 'away' | 'toward-zero';
const DTYPES: readonly SimdUlpDtype[] = ['float16', 'bfloat16', 'float32', 'float64'];
const DIRECTIONS: readonly SimdUlpDirection[] = ['up', 'down', 'away', 'toward-zero'];

/** (nX, nA, nB, zX, zA) of the general kernel's δ rule (module comment). */
const GENERAL_PARAMS: Readonly<Record<SimdUlpDirection, readonly [number, number, number, number, number]>> = {
  away: [0, 0, 1, 0, 0],
  'toward-zero': [0, 0, -1, 0, 0],
  up: [0, -1, 1, 0, -1],
  down: [-1, -1, 1, -1, -1],
};

function buildModule(): Uint8Array {
  const funcs: { name: string; type: number; code: number[] }[] = [];
  for (const dtype of DTYPES)
    for (const dir of DIRECTIONS)
      funcs.push({ name: `plain ${dtype} ${dir}`, type: 0, code: plainKernel(FORMATS[dtype], dir) });
  for (const dtype of DTYPES) funcs.push({ name: `general ${dtype}`, type: 1, code: generalKernel(FORMATS[dtype]) });
  const memoryPages = (OUT + CHUNK_BYTES) / PAGE_BYTES;
  return moduleBytes(
    [funcType([I32, I32], [I32]), funcType([I32, I32, I32, I32, I32, I32, I32], [I32])],
    funcs,
    memoryPages,
  );
}

// ------------------------------------------------------------------ the JS side

type PlainKernel = (src: number, end: number) => number;
type GeneralKernel = (src: number, end: number, nX: number, nA: number, nB: number, zX: number, zA: number) => number;

interface Instance {
  readonly memory: WasmMemory;
  readonly plain: Readonly<Record<SimdUlpDtype, Readonly<Record<SimdUlpDirection, PlainKernel>>>>;
  readonly general: Readonly<Record<SimdUlpDtype, GeneralKernel>>;
}

/** Bytes stepped per kernel call; longer leaves go through in chunks. */
const CHUNK_BYTES = OUT;
const PAGE_BYTES = 65536;

let instance: Instance | null | undefined;
let enabled = true;
/** Views of the module's memory, rebuilt when it grows (growing replaces its ArrayBuffer). */
let memBuffer: ArrayBuffer | undefined;
let memU16 = new Uint16Array(0),
  memF32 = new Float32Array(0),
  memF64 = new Float64Array(0);

function load(): Instance | null {
  if (instance !== undefined) return instance;
  const e = instantiate(buildModule);
  if (e === null) return (instance = null);
  const plain = {} as Record<SimdUlpDtype, Record<SimdUlpDirection, PlainKernel>>;
  for (const dtype of DTYPES) {
    plain[dtype] = {} as Record<SimdUlpDirection, PlainKernel>;
    for (const dir of DIRECTIONS) plain[dtype][dir] = e[`plain ${dtype} ${dir}`] as PlainKernel;
  }
  const general = {} as Record<SimdUlpDtype, GeneralKernel>;
  for (const dtype of DTYPES) general[dtype] = e[`general ${dtype}`] as GeneralKernel;
  return (instance = { memory: e.memory as WasmMemory, plain, general });
}

/** Whether the SIMD kernels are in use: unless unavailable here or switched off by `setSimdUlpEnabled`. */
export function simdUlpAvailable(): boolean {
  return enabled && load() !== null;
}

/** Switches the SIMD path on or off (tests compare it with the scalar path); returns the previous setting. */
export function setSimdUlpEnabled(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

function ensureMemory(inst: Instance, bytes: number): void {
  ensureBytes(inst.memory, bytes);
  if (memBuffer !== inst.memory.buffer) {
    memBuffer = inst.memory.buffer;
    memU16 = new Uint16Array(memBuffer);
    memF32 = new Float32Array(memBuffer);
    memF64 = new Float64Array(memBuffer);
  }
}

/** A plain word (1.0) to pad the last vector with: it changes neither the plain check nor the count. */
const PAD: Readonly<Record<SimdUlpDtype, number>> = { float16: 0x3c00, bfloat16: 0x3f80, float32: 1, float64: 1 };

/**
 * Steps the words of `data` (one chunk, at most CHUNK_BYTES) into the output region (element offset
 * OUT / BYTES_PER_ELEMENT of the dtype's memory view) and returns the number of non-finite words.
 */
function stepChunk(
  inst: Instance,
  data: Float32Array | Float64Array | Uint16Array,
  dtype: SimdUlpDtype,
  direction: SimdUlpDirection,
): number {
  const n = data.length;
  const padded = Math.ceil(data.byteLength / STRIDE) * STRIDE;
  const view = data instanceof Float32Array ? memF32 : data instanceof Float64Array ? memF64 : memU16;
  // Same-type typed-array set/slice copy bytes (ECMA-262 §23.2.3.26.1, §23.2.3.27), so NaN payloads are kept.
  view.set(data, 0);
  const padEnd = padded / data.BYTES_PER_ELEMENT;
  if (padEnd > n) view.fill(PAD[dtype], n, padEnd);
  if (inst.plain[dtype][direction](0, padded) === 0) return 0;
  const [nX, nA, nB, zX, zA] = GENERAL_PARAMS[direction];
  return inst.general[dtype](0, padded, nX, nA, nB, zX, zA);
}

/**
 * The stepped copy of `data` (raw words of `dtype`) in a new array of the same type, and the number of
 * non-finite words; undefined when the SIMD path is unavailable or switched off.
 */
export function simdStepUlp<T extends Float32Array | Float64Array | Uint16Array>(
  data: T,
  dtype: SimdUlpDtype,
  direction: SimdUlpDirection,
): { data: T; nonFinite: number } | undefined {
  if (!enabled || !Object.hasOwn(GENERAL_PARAMS, direction)) return undefined;
  const inst = load();
  if (inst === null) return undefined;
  ensureMemory(inst, OUT + CHUNK_BYTES);
  const view = (data instanceof Float32Array ? memF32 : data instanceof Float64Array ? memF64 : memU16) as T;
  const at = OUT / data.BYTES_PER_ELEMENT;
  if (data.byteLength <= CHUNK_BYTES) {
    const nonFinite = stepChunk(inst, data, dtype, direction);
    return { data: view.slice(at, at + data.length) as T, nonFinite };
  }
  const out = data.slice() as T; // the right type and length; every element is overwritten below
  const per = CHUNK_BYTES / data.BYTES_PER_ELEMENT;
  let nonFinite = 0;
  for (let i = 0; i < data.length; i += per) {
    const part = data.subarray(i, Math.min(i + per, data.length)) as T;
    nonFinite += stepChunk(inst, part, dtype, direction);
    out.set(view.subarray(at, at + part.length), i);
  }
  return { data: out, nonFinite };
}
