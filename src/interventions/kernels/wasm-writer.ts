/**
 * A minimal WebAssembly binary writer and loader for the operators' small compute kernels (simd-ulp.ts,
 * wasm-permute.ts). Kernels are written as instruction sequences in TypeScript and assembled at load time:
 * no build step, no binary files. Opcodes follow the WebAssembly core specification (binary format, §5.4),
 * SIMD included; `WebAssembly.validate` checks every module before use.
 *
 * Loading never throws: where WebAssembly (or its SIMD extension) is unavailable, or on a big-endian platform
 * (wasm memory is little-endian; the operators move typed-array bytes in and out), `instantiate` returns null
 * and callers use their plain-JS loops, which give the same bits.
 */

export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

export const vec = (items: readonly (readonly number[])[]): number[] => [...uleb(items.length), ...items.flat()];
export const section = (id: number, body: readonly number[]): number[] => [id, ...uleb(body.length), ...body];
export const utf8 = (s: string): number[] => [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];

export const I32 = 0x7f,
  I64 = 0x7e,
  V128 = 0x7b;

// Scalar instructions.
export const get = (i: number): number[] => [0x20, ...uleb(i)];
export const set = (i: number): number[] => [0x21, ...uleb(i)];
export const tee = (i: number): number[] => [0x22, ...uleb(i)];
export const i32 = (n: number): number[] => [0x41, ...sleb(n)];
export const BLOCK = [0x02, 0x40],
  LOOP = [0x03, 0x40],
  END = [0x0b],
  RETURN = [0x0f];
export const brIf = (depth: number): number[] => [0x0d, ...uleb(depth)];
export const br = (depth: number): number[] => [0x0c, ...uleb(depth)];
/** Memory access with memarg (log2 alignment, byte offset). */
const mem =
  (code: number) =>
  (align: number, offset = 0): number[] => [code, align, ...uleb(offset)];
export const i32Load = mem(0x28),
  i64Load = mem(0x29),
  i32Store = mem(0x36),
  i64Store = mem(0x37);
export const i32Load16U = mem(0x2f),
  i32Store16 = mem(0x3b),
  i64Load32U = mem(0x35);
export const I32_EQZ = [0x45],
  I32_LT_U = [0x49],
  I32_GE_U = [0x4f],
  I32_GT_S = [0x4a];
export const I32_ADD = [0x6a],
  I32_SUB = [0x6b],
  I32_SHL = [0x74],
  I32_SHR_U = [0x76];
export const I64_ADD = [0x7c],
  I64_MUL = [0x7e],
  I64_SHL = [0x86],
  I64_SHR_U = [0x88],
  I64_OR = [0x84];
export const I64_EXTEND_I32_S = [0xac],
  I64_EXTEND_I32_U = [0xad],
  I32_WRAP_I64 = [0xa7];
export const i64Const = (n: number): number[] => [0x42, ...sleb(n)];

// SIMD instructions: prefix 0xfd, opcode as LEB128, immediates.
export const simd = (code: number, ...imm: number[]): number[] => [0xfd, ...uleb(code), ...imm];
/** v128.load / v128.store with memarg (align 2^4, byte offset). */
export const vLoad = (offset: number): number[] => simd(0x00, 4, ...uleb(offset));
export const vStore = (offset: number): number[] => simd(0x0b, 4, ...uleb(offset));

/** A code-section entry: locals as [count, type] runs, then the body (END appended). */
export function func(locals: readonly (readonly [number, number])[], code: readonly number[]): number[] {
  const b = [...vec(locals.map(([n, t]) => [...uleb(n), t])), ...code, ...END];
  return [...uleb(b.length), ...b];
}

/** A module with one exported memory ("memory", `pages` initially) and the given functions, all exported. */
export function moduleBytes(
  types: readonly (readonly number[])[],
  funcs: readonly { name: string; type: number; code: number[] }[],
  pages: number,
): Uint8Array {
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00, // "\0asm", version 1
    ...section(1, vec(types)),
    ...section(3, vec(funcs.map((f) => uleb(f.type)))),
    ...section(5, vec([[0x00, ...uleb(pages)]])),
    ...section(7, vec([[...utf8('memory'), 0x02, 0], ...funcs.map((f, i) => [...utf8(f.name), 0x00, ...uleb(i)])])),
    ...section(10, vec(funcs.map((f) => f.code))),
  ]);
}

/** A function type: params and results as value types. */
export const funcType = (params: readonly number[], results: readonly number[]): number[] => [
  0x60,
  ...vec(params.map((p) => [p])),
  ...vec(results.map((r) => [r])),
];

/** The part of the WebAssembly JS API used here (the project's TS lib settings do not declare it). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}
declare const WebAssembly: WasmApi | undefined;

export const PAGE = 65536;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The module's exports, or null where it cannot be used (see the module comment). */
export function instantiate(build: () => Uint8Array): Record<string, unknown> | null {
  try {
    if (!LITTLE_ENDIAN || typeof WebAssembly !== 'object' || WebAssembly === undefined) return null;
    const bytes = build();
    if (!WebAssembly.validate(bytes)) return null;
    return new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports;
  } catch {
    return null;
  }
}

/** Grows `memory` to at least `bytes`. */
export function ensureBytes(memory: WasmMemory, bytes: number): void {
  const have = memory.buffer.byteLength;
  if (have < bytes) memory.grow(Math.ceil((bytes - have) / PAGE));
}
