/**
 * WebAssembly kernels of S_π and T_μ version 2 (permute-v2.ts, resample-v2.ts): the four-lane xoshiro128**
 * generator (PrngX4, src/core/prng.ts) advanced by 128-bit SIMD instructions, the Fisher–Yates swap kernels
 * of wasm-permute.ts fed by it, and for float32 latents the moments, the ziggurat fast path and the
 * rescale-and-round pass of T_μ. Assembled at load time (wasm-writer.ts); where WebAssembly SIMD is
 * unavailable the v2 operators run their plain-JS reference, which gives the same bits
 * (test/interventions/v2.test.ts).
 *
 * Sums follow version 2's order, which SIMD can keep: four partial sums over the indices ≡ 0, 1, 2, 3 (mod 4),
 * each left to right from +0, combined as (s0 + s1) + (s2 + s3) — one f64x2 accumulator holds (s0, s1),
 * another (s2, s3).
 *
 * Memory: [0, 64) the four lanes' state (vectors s0, s1, s2, s3: word w of lane k at 16w + 4k), [64, 2112)
 * the ziggurat tables kn and wn (float64), from WORK on the per-call arrays.
 *
 * Cost (bench/interventions.ts, 4096-element float32 latent, one busy 2-core machine, CPU µs): copy-out slice
 * ≈ 1.5, draws (fill) ≈ 2.1, Fisher–Yates swaps ≈ 5, T_μ's sums ≈ 0.7 each × 4, fused draws + ziggurat fast
 * path ≈ 8.7 (wasm SIMD has no gather: kn/wn are loaded lane by lane), write ≈ 2.1, and the ≈ 2.8% of draws
 * that need the general ziggurat ≈ 8 in JS (exactly specified exp/log, parent-Prng uniforms).
 */
import { PrngX4, type Prng } from '../core/prng.js';
import { ZIG_KN, ZIG_WN } from './normal-v2.js';
import { shuffleKernel } from './wasm-permute.js';
import {
  BLOCK,
  br,
  brIf,
  END,
  ensureBytes,
  func,
  funcType,
  get,
  i32,
  I32,
  I32_ADD,
  I32_EQZ,
  I32_GE_U,
  I32_SHL,
  I32_SHR_U,
  I32_SUB,
  instantiate,
  LOOP,
  moduleBytes,
  set,
  simd,
  tee,
  uleb,
  V128,
  vLoad,
  vStore,
  type WasmMemory,
} from './wasm-writer.js';

const F64 = 0x7c;
const STATE = 0;
const KN = 64;
const WN = KN + 128 * 8;
const WORK = 4096;
/** Draws per S_π refill (a multiple of 4). */
const CHUNK = 4096;
/** Largest leaf handled here (elements): bounds up to 2^21 keep the JS rejection step exact in doubles. */
export const X4_MAX_ELEMENTS = 2 ** 21;
const TWO32 = 4294967296;

// Scalar opcodes not in wasm-writer.
const I32_STORE = (align = 2, offset = 0): number[] => [0x36, align, ...uleb(offset)];
const F64_ADD = [0xa0], F64_NEG = [0x9a];

// SIMD opcodes (WebAssembly SIMD proposal, final opcode numbers).
const I32X4_SPLAT = simd(0x11), F64X2_SPLAT = simd(0x14), F64X2_LANE = (k: number): number[] => simd(0x21, k);
const V_AND = simd(0x4e), V_OR = simd(0x50), V_XOR = simd(0x51);
const I32X4_ALL_TRUE = simd(0xa3), I32X4_SHL = simd(0xab), I32X4_SHR_U = simd(0xad), I32X4_MUL = simd(0xb5);
const F64X2_EQ = simd(0x47), F64X2_ADD = simd(0xf0), F64X2_SUB = simd(0xf1), F64X2_MUL = simd(0xf2);
const F64X2_PMIN = simd(0xf6), F64X2_PMAX = simd(0xf7);
const F32X4_DEMOTE = simd(0x5e), F64X2_PROMOTE_LOW = simd(0x5f);
const I32X4_SHR_S = simd(0xac), I32X4_LANE = (k: number): number[] => simd(0x1b, k), I64X2_LANE = (k: number): number[] => simd(0x1d, k);
const F64X2_ABS = simd(0xec), F64X2_LT = simd(0x49), F64X2_CONVERT_LOW_I32X4_S = simd(0xfe);
/** v128.load64_lane with memarg (align 2^3, offset) and lane index. */
const load64Lane = (offset: number, lane: number): number[] => simd(0x57, 3, ...uleb(offset), lane);
const IF = [0x04, 0x40];
const I64_EQZ = [0x50];
const shuffle = (lanes: readonly number[]): number[] => simd(0x0d, ...lanes);
const HIGH_HALF = shuffle([8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]);
const LOW_HALVES = shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);

/** fill(state, out, blocks): writes `blocks` lane-interleaved blocks of four outputs; state read and written back. */
function fillKernel(): number[] {
  const ST = 0, OUT = 1, END_P = 2; // params (blocks becomes the end pointer)
  const S0 = 3, S1 = 4, S2 = 5, S3 = 6, M = 7, T = 8, FIVE = 9, NINE = 10; // v128 locals
  const rotl = (v: number, r: number): number[] => [...get(v), ...i32(r), ...I32X4_SHL, ...get(v), ...i32(32 - r), ...I32X4_SHR_U, ...V_OR];
  const xorInto = (a: number, b: number): number[] => [...get(a), ...get(b), ...V_XOR, ...set(a)];
  return func(
    [[8, V128]],
    [
      ...get(ST), ...vLoad(0), ...set(S0),
      ...get(ST), ...vLoad(16), ...set(S1),
      ...get(ST), ...vLoad(32), ...set(S2),
      ...get(ST), ...vLoad(48), ...set(S3),
      ...i32(5), ...I32X4_SPLAT, ...set(FIVE),
      ...i32(9), ...I32X4_SPLAT, ...set(NINE),
      ...get(OUT), ...get(END_P), ...i32(4), ...I32_SHL, ...I32_ADD, ...set(END_P),
      ...BLOCK, ...LOOP,
      ...get(OUT), ...get(END_P), ...I32_GE_U, ...brIf(1),
      // out = rotl(s1 · 5, 7) · 9
      ...get(OUT),
      ...get(S1), ...get(FIVE), ...I32X4_MUL, ...set(M),
      ...rotl(M, 7), ...get(NINE), ...I32X4_MUL,
      ...vStore(0),
      ...get(S1), ...i32(9), ...I32X4_SHL, ...set(T),
      ...xorInto(S2, S0),
      ...xorInto(S3, S1),
      ...xorInto(S1, S2),
      ...xorInto(S0, S3),
      ...xorInto(S2, T),
      ...rotl(S3, 11), ...set(S3),
      ...get(OUT), ...i32(16), ...I32_ADD, ...set(OUT),
      ...br(0),
      ...END, ...END,
      ...get(ST), ...get(S0), ...vStore(0),
      ...get(ST), ...get(S1), ...vStore(16),
      ...get(ST), ...get(S2), ...vStore(32),
      ...get(ST), ...get(S3), ...vStore(48),
    ],
  );
}

/**
 * Four-partial sum (see the module comment) over n elements at p (n a multiple of 4): float32 elements
 * (`f32`, promoted exactly) or float64; with `centred`, of (v − c)² for the f64 parameter c instead of v.
 */
function sumKernel(f32: boolean, centred: boolean): number[] {
  const P = 0, END_P = 1, C = 2; // params: p, n (→ end), [c]
  const base = centred ? 3 : 2;
  const A = base, B = base + 1, RAW = base + 2, D = base + 3, CV = base + 4; // v128 locals
  const term = (load: number[]): number[] => (centred ? [...load, ...get(CV), ...F64X2_SUB, ...tee(D), ...get(D), ...F64X2_MUL] : load);
  const lo = f32 ? [...get(P), ...vLoad(0), ...tee(RAW), ...F64X2_PROMOTE_LOW] : [...get(P), ...vLoad(0)];
  const hi = f32 ? [...get(RAW), ...get(RAW), ...HIGH_HALF, ...F64X2_PROMOTE_LOW] : [...get(P), ...vLoad(16)];
  return func(
    [[5, V128]],
    [
      ...(centred ? [...get(C), ...F64X2_SPLAT, ...set(CV)] : []),
      ...get(P), ...get(END_P), ...i32(f32 ? 2 : 3), ...I32_SHL, ...I32_ADD, ...set(END_P),
      ...BLOCK, ...LOOP,
      ...get(P), ...get(END_P), ...I32_GE_U, ...brIf(1),
      ...term(lo), ...get(A), ...F64X2_ADD, ...set(A),
      ...term(hi), ...get(B), ...F64X2_ADD, ...set(B),
      ...get(P), ...i32(f32 ? 16 : 32), ...I32_ADD, ...set(P),
      ...br(0),
      ...END, ...END,
      ...get(A), ...F64X2_LANE(0), ...get(A), ...F64X2_LANE(1), ...F64_ADD,
      ...get(B), ...F64X2_LANE(0), ...get(B), ...F64X2_LANE(1), ...F64_ADD,
      ...F64_ADD,
    ],
  );
}

/**
 * zigx4(state, n, z, slow) → count: the four lanes' next n/4 blocks (n a multiple of 4) turned straight into
 * normals, without storing the draws: per block, layer offsets and abscissae for four draws at once, kn and wn
 * gathered lane by lane (v128.load64_lane), |hz| < kn and hz·wn two at a time. z[k] is the fast-path value of
 * output k; an output that fails the test is appended to the slow list as the pair (k, u) — in increasing k —
 * and its z[k] is left for the caller to overwrite. The state is written back.
 */
function zigX4Kernel(): number[] {
  const ST = 0, END_P = 1, Z = 2, SLOW = 3; // params
  const K = 4, SLOW0 = 5, A = 6; // i32 locals
  const S0 = 7, S1 = 8, S2 = 9, S3 = 10, M = 11, T = 12, FIVE = 13, NINE = 14, U = 15, IZ8 = 16, HZ = 17;
  const H01 = 18, H23 = 19, KN01 = 20, KN23 = 21, WN01 = 22, WN23 = 23, OK01 = 24, OK23 = 25, C127 = 26; // v128 locals
  const rotl = (v: number, r: number): number[] => [...get(v), ...i32(r), ...I32X4_SHL, ...get(v), ...i32(32 - r), ...I32X4_SHR_U, ...V_OR];
  const xorInto = (a: number, b: number): number[] => [...get(a), ...get(b), ...V_XOR, ...set(a)];
  const gather = (lane: number): number[] => {
    const kn = lane < 2 ? KN01 : KN23, wn = lane < 2 ? WN01 : WN23;
    return [
      ...get(IZ8), ...I32X4_LANE(lane), ...tee(A), ...get(kn), ...load64Lane(KN, lane % 2), ...set(kn),
      ...get(A), ...get(wn), ...load64Lane(WN, lane % 2), ...set(wn),
    ];
  };
  const slowLane = (lane: number): number[] => [
    ...get(lane < 2 ? OK01 : OK23), ...I64X2_LANE(lane % 2), ...I64_EQZ,
    ...IF,
    ...get(SLOW), ...get(K), ...i32(lane), ...I32_ADD, ...I32_STORE(2, 0),
    ...get(SLOW), ...get(U), ...I32X4_LANE(lane), ...I32_STORE(2, 4),
    ...get(SLOW), ...i32(8), ...I32_ADD, ...set(SLOW),
    ...END,
  ];
  return func(
    [[3, I32], [20, V128]],
    [
      ...get(ST), ...vLoad(0), ...set(S0),
      ...get(ST), ...vLoad(16), ...set(S1),
      ...get(ST), ...vLoad(32), ...set(S2),
      ...get(ST), ...vLoad(48), ...set(S3),
      ...i32(5), ...I32X4_SPLAT, ...set(FIVE),
      ...i32(9), ...I32X4_SPLAT, ...set(NINE),
      ...i32(127), ...I32X4_SPLAT, ...set(C127),
      ...get(SLOW), ...set(SLOW0),
      ...get(Z), ...get(END_P), ...i32(3), ...I32_SHL, ...I32_ADD, ...set(END_P),
      ...BLOCK, ...LOOP,
      ...get(Z), ...get(END_P), ...I32_GE_U, ...brIf(1),
      // u = rotl(s1 · 5, 7) · 9, then the xoshiro128** step (as fillKernel)
      ...get(S1), ...get(FIVE), ...I32X4_MUL, ...set(M),
      ...rotl(M, 7), ...get(NINE), ...I32X4_MUL, ...set(U),
      ...get(S1), ...i32(9), ...I32X4_SHL, ...set(T),
      ...xorInto(S2, S0),
      ...xorInto(S3, S1),
      ...xorInto(S1, S2),
      ...xorInto(S0, S3),
      ...xorInto(S2, T),
      ...rotl(S3, 11), ...set(S3),
      // iz·8 and hz = (u as int32) >> 7, as doubles in two pairs
      ...get(U), ...get(C127), ...V_AND, ...i32(3), ...I32X4_SHL, ...set(IZ8),
      ...get(U), ...i32(7), ...I32X4_SHR_S, ...tee(HZ), ...F64X2_CONVERT_LOW_I32X4_S, ...set(H01),
      ...get(HZ), ...get(HZ), ...HIGH_HALF, ...F64X2_CONVERT_LOW_I32X4_S, ...set(H23),
      ...gather(0), ...gather(1), ...gather(2), ...gather(3),
      ...get(H01), ...F64X2_ABS, ...get(KN01), ...F64X2_LT, ...set(OK01),
      ...get(H23), ...F64X2_ABS, ...get(KN23), ...F64X2_LT, ...set(OK23),
      ...get(Z), ...get(H01), ...get(WN01), ...F64X2_MUL, ...vStore(0),
      ...get(Z), ...get(H23), ...get(WN23), ...F64X2_MUL, ...vStore(16),
      ...get(OK01), ...get(OK23), ...V_AND, ...I32X4_ALL_TRUE, ...I32_EQZ,
      ...IF, ...slowLane(0), ...slowLane(1), ...slowLane(2), ...slowLane(3), ...END,
      ...get(Z), ...i32(32), ...I32_ADD, ...set(Z),
      ...get(K), ...i32(4), ...I32_ADD, ...set(K),
      ...br(0),
      ...END, ...END,
      ...get(ST), ...get(S0), ...vStore(0),
      ...get(ST), ...get(S1), ...vStore(16),
      ...get(ST), ...get(S2), ...vStore(32),
      ...get(ST), ...get(S3), ...vStore(48),
      ...get(SLOW), ...get(SLOW0), ...I32_SUB, ...i32(3), ...I32_SHR_U,
    ],
  );
}

/**
 * write32(z, n, out, mean, zm, scale, max) → 1 if some value is NaN (then the caller rewrites the leaf in JS),
 * else 0: out[k] = float32(clamp(mean + (z[k] − zm)·scale, ±max)), n a multiple of 4.
 */
function writeKernel(): number[] {
  const Z = 0, END_P = 1, OUT = 2, MEAN = 3, ZM = 4, SC = 5, MAX = 6; // params
  const VMEAN = 7, VZM = 8, VSC = 9, VMAX = 10, VNMAX = 11, OK = 12, X0 = 13, X1 = 14; // v128 locals
  const value = (offset: number, x: number): number[] => [
    ...get(VMEAN), ...get(Z), ...vLoad(offset), ...get(VZM), ...F64X2_SUB, ...get(VSC), ...F64X2_MUL, ...F64X2_ADD,
    ...get(VMAX), ...F64X2_PMIN, ...get(VNMAX), ...F64X2_PMAX, ...tee(x),
    ...get(x), ...F64X2_EQ, ...get(OK), ...V_AND, ...set(OK),
  ];
  return func(
    [[8, V128]],
    [
      ...get(MEAN), ...F64X2_SPLAT, ...set(VMEAN),
      ...get(ZM), ...F64X2_SPLAT, ...set(VZM),
      ...get(SC), ...F64X2_SPLAT, ...set(VSC),
      ...get(MAX), ...F64X2_SPLAT, ...set(VMAX),
      ...get(MAX), ...F64_NEG, ...F64X2_SPLAT, ...set(VNMAX),
      ...i32(-1), ...I32X4_SPLAT, ...set(OK),
      ...get(Z), ...get(END_P), ...i32(3), ...I32_SHL, ...I32_ADD, ...set(END_P),
      ...BLOCK, ...LOOP,
      ...get(Z), ...get(END_P), ...I32_GE_U, ...brIf(1),
      ...value(0, X0),
      ...value(16, X1),
      ...get(OUT), ...get(X0), ...F32X4_DEMOTE, ...get(X1), ...F32X4_DEMOTE, ...LOW_HALVES, ...vStore(0),
      ...get(Z), ...i32(32), ...I32_ADD, ...set(Z),
      ...get(OUT), ...i32(16), ...I32_ADD, ...set(OUT),
      ...br(0),
      ...END, ...END,
      ...get(OK), ...I32X4_ALL_TRUE, ...I32_EQZ,
    ],
  );
}

type Fill = (state: number, out: number, blocks: number) => void;
type Sum = (p: number, n: number) => number;
type SumC = (p: number, n: number, c: number) => number;
type Kernel = (data: number, draws: number, count: number, top: number) => number;
interface X4Instance {
  readonly memory: WasmMemory;
  readonly fill: Fill;
  readonly shuffle: Readonly<Record<2 | 4 | 8, Kernel>>;
  readonly sum32: Sum;
  readonly ss32: SumC;
  readonly sum64: Sum;
  readonly ss64: SumC;
  readonly zigx4: (state: number, n: number, z: number, slow: number) => number;
  readonly write32: (z: number, n: number, out: number, mean: number, zm: number, scale: number, max: number) => number;
}

let instance: X4Instance | null | undefined;
let enabled = true;

function load(): X4Instance | null {
  if (instance !== undefined) return instance;
  const e = instantiate(() =>
    moduleBytes(
      [
        funcType([I32, I32, I32], []),
        funcType([I32, I32, I32, I32], [I32]),
        funcType([I32, I32], [F64]),
        funcType([I32, I32, F64], [F64]),
        funcType([I32, I32, I32, F64, F64, F64, F64], [I32]),
      ],
      [
        { name: 'fill', type: 0, code: fillKernel() },
        { name: 'w2', type: 1, code: shuffleKernel(2) },
        { name: 'w4', type: 1, code: shuffleKernel(4) },
        { name: 'w8', type: 1, code: shuffleKernel(8) },
        { name: 'sum32', type: 2, code: sumKernel(true, false) },
        { name: 'ss32', type: 3, code: sumKernel(true, true) },
        { name: 'sum64', type: 2, code: sumKernel(false, false) },
        { name: 'ss64', type: 3, code: sumKernel(false, true) },
        { name: 'zigx4', type: 1, code: zigX4Kernel() },
        { name: 'write32', type: 4, code: writeKernel() },
      ],
      1,
    ),
  );
  if (e === null) return (instance = null);
  const memory = e.memory as WasmMemory;
  new Float64Array(memory.buffer, KN, 128).set(ZIG_KN);
  new Float64Array(memory.buffer, WN, 128).set(ZIG_WN);
  return (instance = {
    memory,
    fill: e.fill as Fill,
    shuffle: { 2: e.w2 as Kernel, 4: e.w4 as Kernel, 8: e.w8 as Kernel },
    sum32: e.sum32 as Sum,
    ss32: e.ss32 as SumC,
    sum64: e.sum64 as Sum,
    ss64: e.ss64 as SumC,
    zigx4: e.zigx4 as X4Instance['zigx4'],
    write32: e.write32 as X4Instance['write32'],
  });
}

/** Switches the WebAssembly path of the v2 operators on or off (tests compare it with the JS reference). */
export function setWasmX4Enabled(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

/** Whether the v2 kernels are in use. */
export function wasmX4Available(): boolean {
  return enabled && load() !== null;
}

/** Memory views, rebuilt after growth. */
let views: { buffer: ArrayBuffer; u32: Uint32Array; i32: Int32Array; u16: Uint16Array; f32: Float32Array; f64: Float64Array } | undefined;
function mem(inst: X4Instance, bytes: number): NonNullable<typeof views> {
  ensureBytes(inst.memory, bytes);
  const buffer = inst.memory.buffer;
  if (views === undefined || views.buffer !== buffer) {
    views = { buffer, u32: new Uint32Array(buffer), i32: new Int32Array(buffer), u16: new Uint16Array(buffer), f32: new Float32Array(buffer), f64: new Float64Array(buffer) };
  }
  return views;
}

const align16 = (b: number): number => (b + 15) & ~15;


/**
 * S_π v2's shuffle of a copy of `data` on the WebAssembly path (undefined where it does not apply): Fisher–Yates
 * i = n−1 … 1, j = Lemire(i + 1) from x4's stream in order, a rejected draw followed by the next one — exactly
 * permute-v2.ts's reference, whose PrngX4 (seeded from `prng`'s next 16 draws) lives here in the module's memory.
 * Where the path does not apply, returns undefined having drawn nothing.
 */
export function wasmPermuteV2<T extends Uint16Array | Float32Array | Float64Array>(data: T, prng: Prng): T | undefined {
  const n = data.length;
  if (!enabled || n > X4_MAX_ELEMENTS) return undefined;
  const inst = load();
  if (inst === null) return undefined;
  const width = data.BYTES_PER_ELEMENT as 2 | 4 | 8;
  const DRAWS = WORK, DATA = WORK + CHUNK * 4;
  const v = mem(inst, DATA + n * width);
  const view = (data instanceof Uint16Array ? v.u16 : data instanceof Float32Array ? v.f32 : v.f64) as T;
  const at = DATA / width;
  // Same-type typed-array set/slice copy bytes (ECMA-262 §23.2.3.26.1, §23.2.3.27): NaN payloads are kept.
  view.set(data, at);
  PrngX4.seedState(prng, v.i32, STATE / 4);
  const draws = v.u32;
  const words = v.u16;
  const kernel = inst.shuffle[width];
  const half = width / 2;
  const d0 = DRAWS / 4;
  let avail = 0, p = 0;
  let i = n - 1;
  while (i > 0) {
    if (p === avail) {
      inst.fill(STATE, DRAWS, CHUNK / 4);
      avail = CHUNK;
      p = 0;
    }
    const used = kernel(DATA, DRAWS + 4 * p, avail - p, i);
    p += used;
    i -= used;
    if (i === 0 || p === avail) continue;
    // The kernel stopped at a draw Lemire's method may reject: resolve it exactly (permute-v2.ts's `bounded`).
    const bound = i + 1;
    let m = (draws[d0 + p++] as number) * bound;
    let l = m >>> 0;
    const t = (TWO32 - bound) % bound;
    while (l < t) {
      if (p === avail) {
        inst.fill(STATE, DRAWS, CHUNK / 4);
        p = 0;
      }
      m = (draws[d0 + p++] as number) * bound;
      l = m >>> 0;
    }
    const j = (m - l) / TWO32;
    for (let k = 0; k < half; k++) {
      const x = DATA / 2 + i * half + k, y = DATA / 2 + j * half + k;
      const w = words[x] as number;
      words[x] = words[y] as number;
      words[y] = w;
    }
    i -= 1;
  }
  return view.slice(at, at + n) as T;
}

/** What T_μ v2's float32 fast path needs from resample-v2.ts: the slow ziggurat and the JS rewrite. */
export interface ResampleHooks {
  /** The slow-path value for draw u (extra uniforms from the parent Prng, in call order). */
  slow(u: number): number;
  /** Rewrites out[0..n) from z exactly as the reference does (called when a value came out NaN: it keeps values[k]). */
  rewrite(out: Float32Array, values: Float32Array, z: Float64Array, mean: number, zm: number, scale: number): void;
}

export type Resample32Result =
  | { readonly kind: 'not-applicable' }
  | { readonly kind: 'copy' }
  | { readonly kind: 'resampled'; readonly data: Float32Array };

/**
 * T_μ v2 of an all-finite float32 leaf with n a multiple of 4 (n ≥ 4) on the WebAssembly path. 'not-applicable'
 * (WebAssembly off, a non-finite element, n not a multiple of 4, too large) draws nothing; 'copy' is the
 * reference's "no spread" case (SD 0; the leaf's 16 parent draws are taken, as the reference does). Same
 * steps and sums as resample-v2.ts's reference; the leaf's PrngX4 state lives in the module's memory.
 */
export function wasmResample32V2(data: Float32Array, prng: Prng, max: number, hooks: ResampleHooks): Resample32Result {
  const n = data.length;
  if (!enabled || n % 4 !== 0 || n === 0 || n > X4_MAX_ELEMENTS) return { kind: 'not-applicable' };
  const inst = load();
  if (inst === null) return { kind: 'not-applicable' };
  const DATA = WORK;
  const Z = align16(DATA + 4 * n);
  const SLOW = Z + 8 * n; // (k, u) pairs
  const OUT = align16(SLOW + 8 * n);
  const v = mem(inst, OUT + 4 * n);
  v.f32.set(data, DATA / 4);
  // float32 values and n ≤ 2^21 cannot overflow a float64 sum: a non-finite sum means a non-finite element.
  const sum = inst.sum32(DATA, n);
  if (!Number.isFinite(sum)) return { kind: 'not-applicable' };
  const mean = sum / n;
  const sd = Math.sqrt(inst.ss32(DATA, n, mean) / n);
  PrngX4.seedState(prng, v.i32, STATE / 4); // the reference seeds first; nothing before this point draws
  if (!(sd > 0)) return { kind: 'copy' };
  const slow = inst.zigx4(STATE, n, Z, SLOW);
  const z = v.f64;
  const pairs = v.u32;
  for (let s = 0; s < slow; s++) {
    const k = pairs[SLOW / 4 + 2 * s] as number;
    z[Z / 8 + k] = hooks.slow(pairs[SLOW / 4 + 2 * s + 1] as number);
  }
  const zm = inst.sum64(Z, n) / n;
  const zsd = Math.sqrt(inst.ss64(Z, n, zm) / n);
  const scale = zsd > 0 ? sd / zsd : 0;
  if (inst.write32(Z, n, OUT, mean, zm, scale, max) !== 0) {
    hooks.rewrite(v.f32.subarray(OUT / 4, OUT / 4 + n), data, z.subarray(Z / 8, Z / 8 + n), mean, zm, scale);
  }
  return { kind: 'resampled', data: v.f32.slice(OUT / 4, OUT / 4 + n) };
}

