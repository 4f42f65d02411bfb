/**
 * WebAssembly kernels of S_π version 3 (permute-v3.ts): Fisher–Yates fed by the four-lane xoshiro128**
 * generator (PrngX4, src/core/prng.ts) with two bounded indices per 32-bit draw, all in one kernel — the draws
 * are generated in registers, turned into index pairs four at a time by 32×32→64-bit SIMD products, and used
 * straight away by the swaps (no draw buffer). Assembled at load time (wasm-writer.ts); where WebAssembly SIMD
 * is unavailable permute-v3.ts runs its plain-JS reference, which gives the same bits
 * (test/interventions/v3.test.ts).
 *
 * Memory: [0, 64) the generator's state (vectors s0 … s3: word w of lane k at 16w + 4k), [64, 80) one block of
 * outputs for the scalar path, from DATA the leaf being shuffled in place.
 *
 * Where the time goes (4096-element float32 latent, CPU µs on the 2-core development machine under load; the
 * plain copy of the same latent, `slice`, ≈ 1.3–2.2): the swaps alone, from precomputed indices, ≈ 2.3–2.5
 * (two loads and two stores per step; unrolling or grouping the sequential stores did not help); the draws and
 * index pairs alone ≈ 2.0; fused here ≈ 4.0 — they mostly add up, the loop being bound by instruction
 * throughput (generator ≈ 22, index pairs ≈ 20, lane extraction 16, swaps ≈ 40 µops per 8 steps), not by the
 * stores. The copy into the module's memory ≈ 0.15.
 */
import { PrngX4, type Prng } from '../core/prng.js';
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
  I32_LT_U,
  I32_SHL,
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
  i64Store,
  instantiate,
  LOOP,
  moduleBytes,
  RETURN,
  set,
  simd,
  tee,
  V128,
  vLoad,
  vStore,
  type WasmMemory,
} from './wasm-writer.js';

const STATE = 0;
const SCRATCH = 64;
const DATA = 4096;
/** Largest leaf handled here (elements); bigger ones take the JS reference. */
export const V3_MAX_ELEMENTS = 2 ** 21;
/** Fisher–Yates steps i ≥ 2 with i ≤ PAIR_MAX_I are taken two per draw (bound product (i + 1)·i < 2^26). */
export const PAIR_MAX_I = 8191;

// Scalar opcodes not in wasm-writer.
const I32_MUL = [0x6c], I32_REM_U = [0x70], I32_GE_U = [0x4f], I32_GT_U = [0x4b];
const IF = [0x04, 0x40], IF_I32 = [0x04, I32], ELSE = [0x05];

// SIMD opcodes (WebAssembly SIMD, final opcode numbers).
const I32X4_SPLAT = simd(0x11), I32X4_LANE = (k: number): number[] => simd(0x1b, k);
const V_OR = simd(0x50), V_XOR = simd(0x51);
const I32X4_MIN_U = simd(0xb7), I32X4_EQ = simd(0x37), I32X4_ALL_TRUE = simd(0xa3), I32X4_SHL = simd(0xab), I32X4_SHR_U = simd(0xad), I32X4_MUL = simd(0xb5), I32X4_SUB = simd(0xb1);
const I64X2_EXTMUL_LOW_U = simd(0xde), I64X2_EXTMUL_HIGH_U = simd(0xdf);
const vConst = (words: readonly number[]): number[] => simd(0x0c, ...words.flatMap((w) => [w & 255, (w >>> 8) & 255, (w >>> 16) & 255, (w >>> 24) & 255]));
const shuffle = (lanes: readonly number[]): number[] => simd(0x0d, ...lanes);
/** High / low 32-bit words of two i64x2 vectors, as one i32x4 (lanes 0, 1 from the first). */
const HIGH_WORDS = shuffle([4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]);
const LOW_WORDS = shuffle([0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]);

/** The xoshiro128** step on v128 locals s0 … s3 (lane-wise), leaving the block's outputs in `out`. */
function x4Step(s0: number, s1: number, s2: number, s3: number, m: number, t: number, five: number, nine: number, out: number): number[] {
  const rotl = (v: number, r: number): number[] => [...get(v), ...i32(r), ...I32X4_SHL, ...get(v), ...i32(32 - r), ...I32X4_SHR_U, ...V_OR];
  const xorInto = (a: number, b: number): number[] => [...get(a), ...get(b), ...V_XOR, ...set(a)];
  return [
    ...get(s1), ...get(five), ...I32X4_MUL, ...set(m),
    ...rotl(m, 7), ...get(nine), ...I32X4_MUL, ...set(out),
    ...get(s1), ...i32(9), ...I32X4_SHL, ...set(t),
    ...xorInto(s2, s0),
    ...xorInto(s3, s1),
    ...xorInto(s1, s2),
    ...xorInto(s0, s3),
    ...xorInto(s2, t),
    ...rotl(s3, 11), ...set(s3),
  ];
}

/** Element swap at byte offsets (locals) a and b, relative to DATA; `t` a scratch local of the element type. */
function swapAt(width: 2 | 4 | 8, a: number, b: number, t: number): number[] {
  if (width === 8) return [...get(a), ...i64Load(3, DATA), ...set(t), ...get(a), ...get(b), ...i64Load(3, DATA), ...i64Store(3, DATA), ...get(b), ...get(t), ...i64Store(3, DATA)];
  if (width === 4) return [...get(a), ...i32Load(2, DATA), ...set(t), ...get(a), ...get(b), ...i32Load(2, DATA), ...i32Store(2, DATA), ...get(b), ...get(t), ...i32Store(2, DATA)];
  return [...get(a), ...i32Load16U(1, DATA), ...set(t), ...get(a), ...get(b), ...i32Load16U(1, DATA), ...i32Store16(1, DATA), ...get(b), ...get(t), ...i32Store16(1, DATA)];
}

/**
 * step(u, i) → the next i: one use of draw u at Fisher–Yates position i ≥ 1 (permute-v3.ts's `step`). A pair
 * step (2 ≤ i ≤ PAIR_MAX_I) swaps a[i]↔a[j1], a[i−1]↔a[j2] and returns i − 2; a single step swaps a[i]↔a[j] and
 * returns i − 1; a rejected draw swaps nothing and returns i.
 */
function stepKernel(width: 2 | 4 | 8): number[] {
  const U = 0, I = 1; // params
  const B1 = 2, B = 3, L = 4, J1 = 5, J2 = 6, A = 7, C = 8; // i32 locals
  const M = 9, L1 = 10; // i64 locals
  const T = 11; // element scratch
  const sh = width === 2 ? 1 : width === 4 ? 2 : 3;
  const scale = (v: number): number[] => [...get(v), ...i32(sh), ...I32_SHL];
  const rejectIfBelow = (bound: number): number[] => [
    // l < bound: Lemire's exact test, reject when l < 2^32 mod bound
    ...get(L), ...get(bound), ...I32_LT_U,
    ...IF,
    ...get(L), ...i32(0), ...get(bound), ...I32_SUB, ...get(bound), ...I32_REM_U, ...I32_LT_U,
    ...IF, ...get(I), ...RETURN, ...END,
    ...END,
  ];
  return func(
    [[7, I32], [2, I64], [1, width === 8 ? I64 : I32]],
    [
      ...get(I), ...i32(2), ...I32_GE_U,
      ...get(I), ...i32(PAIR_MAX_I + 1), ...I32_LT_U,
      ...[0x71], // i32.and
      ...IF_I32,
      // pair: m1 = u·(i + 1), j1 = m1 >> 32, l1 = m1 mod 2^32; m2 = l1·i, j2 = m2 >> 32, l = m2 mod 2^32
      ...get(I), ...i32(1), ...I32_ADD, ...tee(B1),
      ...get(I), ...I32_MUL, ...set(B),
      ...get(U), ...I64_EXTEND_I32_U, ...get(B1), ...I64_EXTEND_I32_U, ...I64_MUL, ...tee(M),
      ...i64Const(32), ...I64_SHR_U, ...I32_WRAP_I64, ...set(J1),
      ...get(M), ...I32_WRAP_I64, ...I64_EXTEND_I32_U, ...get(I), ...I64_EXTEND_I32_U, ...I64_MUL, ...tee(L1),
      ...i64Const(32), ...I64_SHR_U, ...I32_WRAP_I64, ...set(J2),
      ...get(L1), ...I32_WRAP_I64, ...set(L),
      ...rejectIfBelow(B),
      ...scale(I), ...set(A), ...scale(J1), ...set(C), ...swapAt(width, A, C, T),
      ...get(A), ...i32(width), ...I32_SUB, ...set(A), ...scale(J2), ...set(C), ...swapAt(width, A, C, T),
      ...get(I), ...i32(2), ...I32_SUB,
      ...ELSE,
      // single: m = u·(i + 1), j = m >> 32, l = m mod 2^32
      ...get(I), ...i32(1), ...I32_ADD, ...set(B1),
      ...get(U), ...I64_EXTEND_I32_U, ...get(B1), ...I64_EXTEND_I32_U, ...I64_MUL, ...tee(M),
      ...i64Const(32), ...I64_SHR_U, ...I32_WRAP_I64, ...set(J1),
      ...get(M), ...I32_WRAP_I64, ...set(L),
      ...rejectIfBelow(B1),
      ...scale(I), ...set(A), ...scale(J1), ...set(C), ...swapAt(width, A, C, T),
      ...get(I), ...i32(1), ...I32_SUB,
      ...END,
    ],
  );
}

/**
 * shuffle(i) for the leaf at DATA with top position i = n − 1: the whole of S_π v3's Fisher–Yates, the state at
 * STATE (read and written back). Fast loop while 8 ≤ i ≤ PAIR_MAX_I: one block of four draws per iteration gives
 * four pair steps (eight swaps) when every draw passes the quick acceptance test l ≥ (i + 1)·i; a block with a
 * draw that fails it, and every block outside that range, goes through `step` draw by draw in order — the same
 * sequence of uses as the reference, so the same permutation.
 */
function shuffleKernel(width: 2 | 4 | 8, stepIndex: number): number[] {
  const I = 0; // param
  const A = 1, C = 2, K = 3; // i32 locals
  const S0 = 4, S1 = 5, S2 = 6, S3 = 7, M = 8, T = 9, FIVE = 10, NINE = 11, UV = 12, VB1 = 13, VB2 = 14, P0 = 15, L1 = 16, JA = 17, JB = 18, EIGHT = 19; // v128
  const E = 20; // element scratch
  const sh = width === 2 ? 1 : width === 4 ? 2 : 3;
  const CALL = (f: number): number[] => [0x10, f];
  const lane = (v: number, k: number, into: number): number[] => [...get(v), ...I32X4_LANE(k), ...set(into)];
  const fastSwaps: number[] = [];
  for (let k = 0; k < 4; k++) {
    fastSwaps.push(...lane(JA, k, C), ...swapAt(width, A, C, E), ...get(A), ...i32(width), ...I32_SUB, ...set(A));
    fastSwaps.push(...lane(JB, k, C), ...swapAt(width, A, C, E), ...get(A), ...i32(width), ...I32_SUB, ...set(A));
  }
  const GEN = x4Step(S0, S1, S2, S3, M, T, FIVE, NINE, UV);
  return func(
    [[3, I32], [16, V128], [1, width === 8 ? I64 : I32]],
    [
      ...i32(STATE), ...vLoad(0), ...set(S0),
      ...i32(STATE), ...vLoad(16), ...set(S1),
      ...i32(STATE), ...vLoad(32), ...set(S2),
      ...i32(STATE), ...vLoad(48), ...set(S3),
      ...i32(5), ...I32X4_SPLAT, ...set(FIVE),
      ...i32(9), ...I32X4_SPLAT, ...set(NINE),
      ...i32(8), ...I32X4_SPLAT, ...set(EIGHT),
      ...BLOCK, // $done
      ...LOOP, // $outer: one block of draws per pass
      ...BLOCK, // $scalar: leaving it = the block in UV goes draw by draw through `step`
      ...BLOCK, // $fresh: leaving it = draw a block first
      ...get(I), ...i32(8), ...I32_LT_U, ...brIf(0),
      ...get(I), ...i32(PAIR_MAX_I), ...I32_GT_U, ...brIf(0),
      // bounds of the next four pairs: (i + 1, i − 1, i − 3, i − 5) and (i, i − 2, i − 4, i − 6)
      ...get(I), ...I32X4_SPLAT, ...vConst([-1, 1, 3, 5]), ...I32X4_SUB, ...set(VB1),
      ...get(I), ...I32X4_SPLAT, ...vConst([0, 2, 4, 6]), ...I32X4_SUB, ...set(VB2),
      ...get(I), ...i32(sh), ...I32_SHL, ...set(A),
      ...LOOP, // $fast
      ...GEN,
      // (j1, l1) = u·b1 split in words; (j2, l2) = l1·b2 split in words, four draws at once
      ...get(UV), ...get(VB1), ...I64X2_EXTMUL_LOW_U, ...tee(P0),
      ...get(UV), ...get(VB1), ...I64X2_EXTMUL_HIGH_U, ...tee(T),
      ...LOW_WORDS, ...set(L1),
      ...get(P0), ...get(T), ...HIGH_WORDS, ...i32(sh), ...I32X4_SHL, ...set(JA),
      ...get(L1), ...get(VB2), ...I64X2_EXTMUL_LOW_U, ...tee(P0),
      ...get(L1), ...get(VB2), ...I64X2_EXTMUL_HIGH_U, ...tee(T),
      ...HIGH_WORDS, ...i32(sh), ...I32X4_SHL, ...set(JB),
      // quick acceptance: every l2 ≥ (i + 1)·i (then Lemire's test passes); else → $scalar with this block
      ...get(VB1), ...get(VB2), ...I32X4_MUL, ...tee(M), ...get(P0), ...get(T), ...LOW_WORDS, ...I32X4_MIN_U, ...get(M), ...I32X4_EQ, ...I32X4_ALL_TRUE,
      ...I32_EQZ, ...brIf(2),
      ...fastSwaps,
      ...get(VB1), ...get(EIGHT), ...I32X4_SUB, ...set(VB1),
      ...get(VB2), ...get(EIGHT), ...I32X4_SUB, ...set(VB2),
      ...get(I), ...i32(8), ...I32_SUB, ...tee(I),
      ...i32(8), ...I32_LT_U, ...brIf(3), // → $outer
      ...br(0),
      ...END, // $fast
      ...END, // $fresh
      ...get(I), ...I32_EQZ, ...brIf(2), // → $done
      ...GEN,
      ...END, // $scalar
      ...i32(SCRATCH), ...get(UV), ...vStore(0),
      ...i32(0), ...set(K),
      ...BLOCK, ...LOOP,
      ...get(I), ...I32_EQZ, ...brIf(1),
      ...get(K), ...i32(16), ...I32_GE_U, ...brIf(1),
      ...get(K), ...i32Load(2, SCRATCH), ...get(I), ...CALL(stepIndex), ...set(I),
      ...get(K), ...i32(4), ...I32_ADD, ...set(K),
      ...br(0),
      ...END, ...END,
      ...br(0), // → $outer
      ...END, // $outer
      ...END, // $done
      ...i32(STATE), ...get(S0), ...vStore(0),
      ...i32(STATE), ...get(S1), ...vStore(16),
      ...i32(STATE), ...get(S2), ...vStore(32),
      ...i32(STATE), ...get(S3), ...vStore(48),
    ],
  );
}

type Shuffle = (top: number) => void;
interface V3Instance {
  readonly memory: WasmMemory;
  readonly shuffle: Readonly<Record<2 | 4 | 8, Shuffle>>;
}

let instance: V3Instance | null | undefined;
let enabled = true;

function load(): V3Instance | null {
  if (instance !== undefined) return instance;
  // Function indices: 0–2 step (widths 2, 4, 8), 3–5 shuffle (calling 0–2).
  const e = instantiate(() =>
    moduleBytes(
      [funcType([I32, I32], [I32]), funcType([I32], [])],
      [
        { name: 'step2', type: 0, code: stepKernel(2) },
        { name: 'step4', type: 0, code: stepKernel(4) },
        { name: 'step8', type: 0, code: stepKernel(8) },
        { name: 'shuffle2', type: 1, code: shuffleKernel(2, 0) },
        { name: 'shuffle4', type: 1, code: shuffleKernel(4, 1) },
        { name: 'shuffle8', type: 1, code: shuffleKernel(8, 2) },
      ],
      1,
    ),
  );
  if (e === null) return (instance = null);
  return (instance = {
    memory: e.memory as WasmMemory,
    shuffle: { 2: e.shuffle2 as Shuffle, 4: e.shuffle4 as Shuffle, 8: e.shuffle8 as Shuffle },
  });
}

/** Switches the WebAssembly path of the v3 operators on or off (tests compare it with the JS reference). */
export function setWasmV3Enabled(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

/** Whether the v3 kernels are in use. */
export function wasmV3Available(): boolean {
  return enabled && load() !== null;
}

/** Memory views, rebuilt after growth. */
let views: { buffer: ArrayBuffer; i32: Int32Array; u16: Uint16Array; f32: Float32Array; f64: Float64Array } | undefined;
function mem(inst: V3Instance, bytes: number): NonNullable<typeof views> {
  ensureBytes(inst.memory, bytes);
  const buffer = inst.memory.buffer;
  if (views === undefined || views.buffer !== buffer) {
    views = { buffer, i32: new Int32Array(buffer), u16: new Uint16Array(buffer), f32: new Float32Array(buffer), f64: new Float64Array(buffer) };
  }
  return views;
}

/**
 * S_π v3's shuffled copy of `data` on the WebAssembly path, or undefined (having drawn nothing) where it does
 * not apply. The generator is seeded from `prng` exactly as permute-v3.ts's reference seeds its PrngX4.
 */
export function wasmPermuteV3<T extends Uint16Array | Float32Array | Float64Array>(data: T, prng: Prng): T | undefined {
  const n = data.length;
  if (!enabled || n > V3_MAX_ELEMENTS) return undefined;
  const inst = load();
  if (inst === null) return undefined;
  const width = data.BYTES_PER_ELEMENT as 2 | 4 | 8;
  const v = mem(inst, DATA + n * width);
  const view = (data instanceof Uint16Array ? v.u16 : data instanceof Float32Array ? v.f32 : v.f64) as T;
  const at = DATA / width;
  // Same-type typed-array set/slice copy bytes (ECMA-262 §23.2.3.26.1, §23.2.3.27): NaN payloads are kept.
  view.set(data, at);
  PrngX4.seedState(prng, v.i32, STATE / 4);
  if (n > 1) inst.shuffle[width](n - 1);
  return view.slice(at, at + n) as T;
}
