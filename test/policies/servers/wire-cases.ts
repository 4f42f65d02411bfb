/**
 * The values of test/policies/servers/fixtures/msgpack_numpy_golden.py's `cases()`, built on IMEP's side (the
 * golden test compares the bytes both sides write for them), and small NdArray helpers of the server tests.
 */
import type { NdArray } from '../../../src/runtime/index.js';
import type { WireMap, WireValue } from '../../../src/policies/servers/index.js';

export const nd = (dtype: string, shape: readonly number[], data: NdArray['data']): NdArray => ({ dtype, shape, data });
export const f32 = (shape: readonly number[], values: readonly number[]): NdArray =>
  nd('float32', shape, Float32Array.from(values));

export function goldenCases(): Record<string, WireValue> {
  return {
    f32: f32(
      [2, 3],
      [0, 1, 2, 3, 4, 5].map((i) => i * 0.5 - 1.25),
    ),
    u8: nd('uint8', [4], Uint8Array.from([0, 1, 254, 255])),
    i64: nd('int64', [2], BigInt64Array.from([-1n, 2n ** 40n])),
    b1: nd('bool', [3], Uint8Array.from([1, 0, 1])),
    f64_0d: nd('float64', [], Float64Array.from([3.25])),
    f16: nd('float16', [2], Uint16Array.from([0x3e00, 0xc000])),
    empty: nd('float32', [0, 7], new Float32Array(0)),
    ints: {
      i8: nd('int8', [2], Int8Array.from([-128, 127])),
      i16: nd('int16', [2], Int16Array.from([-300, 300])),
      u16: nd('uint16', [1], Uint16Array.from([65535])),
      i32: nd('int32', [2, 2], Int32Array.from([1, -2, 3, -4])),
      u32: nd('uint32', [1], Uint32Array.from([4000000000])),
      u64: nd('uint64', [1], BigUint64Array.from([2n ** 63n + 5n])),
    },
    obs: {
      'observation/state': f32([3], [0.1, -0.2, 0.3]),
      prompt: 'pick up the cup',
      n: 3,
      x: 0.25,
      flags: [true, null, 'a'],
      image: nd(
        'uint8',
        [2, 2, 3],
        Uint8Array.from({ length: 12 }, (_, i) => i),
      ),
    },
  };
}

/** The element bytes of an NdArray (for exact comparisons). */
export function bytesOf(a: NdArray): Buffer {
  return Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength);
}

/** Asserts `v` is an NdArray and returns it. */
export function asNd(v: WireValue | undefined): NdArray {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || !('dtype' in v) || !ArrayBuffer.isView(v['data']))
    throw new Error(`not an ndarray: ${JSON.stringify(v)}`);
  return v as unknown as NdArray;
}

/** A plain comparable form: arrays as { dtype, shape, hex }. */
export function comparable(v: WireValue): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(comparable);
  if ('dtype' in v && ArrayBuffer.isView((v as { data?: unknown }).data)) {
    const a = v as unknown as NdArray;
    return { dtype: a.dtype, shape: [...a.shape], hex: bytesOf(a).toString('hex') };
  }
  return Object.fromEntries(Object.entries(v as WireMap).map(([k, x]) => [k, comparable(x)]));
}
