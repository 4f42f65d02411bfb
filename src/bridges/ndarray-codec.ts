/**
 * The bridge's array encoding (PROTOCOL.md, "Arrays"): msgpack extension type 17, and decoding of the
 * openpi / msgpack-numpy map form. Decoded element data is a typed-array view on the received frame
 * when the element bytes are aligned to the item size, and a copy otherwise; float16 / bfloat16 stay
 * raw bits in a Uint16Array with their dtype kept.
 */
import { addExtension } from 'msgpackr';
import { endianness } from 'node:os';
import type { NdArray } from '../runtime/index.js';

/** Element data of an ndarray. */
export type NdData = NdArray['data'];

type NdCtor =
  | Uint8ArrayConstructor
  | Int8ArrayConstructor
  | Uint16ArrayConstructor
  | Int16ArrayConstructor
  | Uint32ArrayConstructor
  | Int32ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor;

interface DtypeInfo {
  readonly code: number;
  readonly size: number;
  readonly ctor: NdCtor;
  /** numpy `dtype.str` spellings accepted in the openpi map form. */
  readonly numpy: readonly string[];
}

/** The dtype table of PROTOCOL.md (code, item size, typed-array storage). */
export const DTYPES = {
  uint8: { code: 1, size: 1, ctor: Uint8Array, numpy: ['|u1'] },
  int8: { code: 2, size: 1, ctor: Int8Array, numpy: ['|i1'] },
  uint16: { code: 3, size: 2, ctor: Uint16Array, numpy: ['<u2'] },
  int16: { code: 4, size: 2, ctor: Int16Array, numpy: ['<i2'] },
  uint32: { code: 5, size: 4, ctor: Uint32Array, numpy: ['<u4'] },
  int32: { code: 6, size: 4, ctor: Int32Array, numpy: ['<i4'] },
  float16: { code: 7, size: 2, ctor: Uint16Array, numpy: ['<f2'] },
  bfloat16: { code: 8, size: 2, ctor: Uint16Array, numpy: [] },
  float32: { code: 9, size: 4, ctor: Float32Array, numpy: ['<f4'] },
  float64: { code: 10, size: 8, ctor: Float64Array, numpy: ['<f8'] },
  int64: { code: 11, size: 8, ctor: BigInt64Array, numpy: ['<i8'] },
  uint64: { code: 12, size: 8, ctor: BigUint64Array, numpy: ['<u8'] },
  bool: { code: 13, size: 1, ctor: Uint8Array, numpy: ['|b1'] },
} as const satisfies Record<string, DtypeInfo>;

export type Dtype = keyof typeof DTYPES;
export const DTYPE_NAMES = Object.keys(DTYPES) as Dtype[];

/** The msgpack extension type of an ndarray. */
export const NDARRAY_EXT_TYPE = 17;
export const NDARRAY_FORMAT_VERSION = 1;
export const MAX_NDIM = 32;

const BY_CODE: ReadonlyMap<number, Dtype> = new Map(DTYPE_NAMES.map((d) => [DTYPES[d].code, d]));
const BY_NUMPY: ReadonlyMap<string, Dtype> = new Map(
  DTYPE_NAMES.flatMap((d) => (DTYPES[d].numpy as readonly string[]).map((s) => [s, d] as const)),
);
const LITTLE_ENDIAN = endianness() === 'LE';

export function isDtype(s: unknown): s is Dtype {
  return typeof s === 'string' && Object.prototype.hasOwnProperty.call(DTYPES, s);
}

/** The dtype a bare typed array is sent as (Uint8Array → uint8, Uint16Array → uint16, …). */
export function dtypeOfTypedArray(data: NdData): Dtype {
  if (data instanceof Uint8Array) return 'uint8';
  if (data instanceof Int8Array) return 'int8';
  if (data instanceof Uint16Array) return 'uint16';
  if (data instanceof Int16Array) return 'int16';
  if (data instanceof Uint32Array) return 'uint32';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof BigInt64Array) return 'int64';
  return 'uint64';
}

/** Thrown by the codec; the envelope layer turns it into E_BAD_MESSAGE (decode) or a refused encode. */
export class NdArrayCodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NdArrayCodecError';
  }
}

const TRUSTED: unique symbol = Symbol('trusted');

/**
 * An ndarray as the codec produces it and as the packer recognises it. Plain `{ dtype, shape, data }`
 * objects are converted to this class by the envelope encoder before packing.
 */
export class WireNdArray implements NdArray {
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  readonly data: NdData;

  /** `trust` (module-private) skips the check: the decoder has already checked that `data` holds prod(shape) items. */
  constructor(dtype: Dtype, shape: readonly number[], data: NdData, trust?: typeof TRUSTED) {
    if (trust !== TRUSTED) checkNdArray(dtype, shape, data);
    this.dtype = dtype;
    this.shape = shape;
    this.data = data;
  }
}

/** Validates dtype/shape/data consistency; throws NdArrayCodecError naming the fault. */
export function checkNdArray(dtype: string, shape: readonly number[], data: NdData): asserts dtype is Dtype {
  if (!isDtype(dtype)) throw new NdArrayCodecError(`unknown dtype "${dtype}"`);
  if (shape.length > MAX_NDIM) throw new NdArrayCodecError(`ndim ${shape.length} exceeds ${MAX_NDIM}`);
  let n = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0 || d > 0xffffffff) throw new NdArrayCodecError(`bad shape [${shape.join(',')}]`);
    n *= d;
  }
  const info = DTYPES[dtype];
  if (!(data instanceof info.ctor))
    throw new NdArrayCodecError(`dtype ${dtype} needs a ${info.ctor.name}, got ${data.constructor.name}`);
  if (data.length !== n)
    throw new NdArrayCodecError(`shape [${shape.join(',')}] holds ${n} elements, data has ${data.length}`);
}

/** Builds an ndarray, validating it (throws NdArrayCodecError). */
export function ndarray(dtype: Dtype, shape: readonly number[], data: NdData): WireNdArray {
  return new WireNdArray(dtype, [...shape], data);
}

/** True for anything shaped like an NdArray with a known dtype and consistent data. */
export function isNdArray(v: unknown): v is NdArray {
  if (v instanceof WireNdArray) return true;
  if (typeof v !== 'object' || v === null) return false;
  const o = v as { dtype?: unknown; shape?: unknown; data?: unknown };
  if (!isDtype(o.dtype) || !Array.isArray(o.shape) || !ArrayBuffer.isView(o.data) || o.data instanceof DataView)
    return false;
  try {
    checkNdArray(o.dtype, o.shape as number[], o.data as NdData);
    return true;
  } catch {
    return false;
  }
}

function requireLittleEndian(): void {
  if (!LITTLE_ENDIAN) throw new NdArrayCodecError('the ndarray codec supports little-endian hosts only');
}

function headerLength(ndim: number): number {
  return 4 + 4 * ndim;
}

/** The extension payload length of an array (header + element bytes). */
export function payloadLength(a: NdArray): number {
  return headerLength(a.shape.length) + a.data.byteLength;
}

/** Writes the extension 17 header (version, dtype, ndim, shape) at `offset`; returns where the data goes. */
function writeNdArrayHeader(a: NdArray, target: Uint8Array, offset: number): number {
  requireLittleEndian();
  checkNdArray(a.dtype, a.shape, a.data);
  const dtype = a.dtype as Dtype;
  target[offset] = NDARRAY_FORMAT_VERSION;
  target[offset + 1] = DTYPES[dtype].code;
  target[offset + 2] = a.shape.length;
  target[offset + 3] = 0;
  let p = offset + 4;
  for (const d of a.shape) {
    target[p] = d & 0xff;
    target[p + 1] = (d >>> 8) & 0xff;
    target[p + 2] = (d >>> 16) & 0xff;
    target[p + 3] = (d >>> 24) & 0xff;
    p += 4;
  }
  return p;
}

/** Writes the extension 17 payload of `a` into `target` at `offset`; returns the end offset. */
export function writeNdArrayPayload(a: NdArray, target: Uint8Array, offset: number): number {
  const p = writeNdArrayHeader(a, target, offset);
  target.set(ndarrayBytes(a), p);
  return p + a.data.byteLength;
}

/** The extension 17 payload of `a` as a fresh buffer. */
export function encodeNdArrayPayload(a: NdArray): Uint8Array {
  const out = new Uint8Array(payloadLength(a));
  writeNdArrayPayload(a, out, 0);
  return out;
}

/** Element data of `dtype` over `bytes`: a view when aligned, a copy otherwise. */
function typedView(dtype: Dtype, bytes: Uint8Array, count: number): NdData {
  const { ctor, size } = DTYPES[dtype];
  if (bytes.byteOffset % size === 0) return new ctor(bytes.buffer as ArrayBuffer, bytes.byteOffset, count);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new ctor(copy.buffer, 0, count);
}

/** Decodes an extension 17 payload (a view on the received frame). Throws NdArrayCodecError. */
export function decodeNdArrayPayload(payload: Uint8Array): WireNdArray {
  requireLittleEndian();
  if (payload.byteLength < 4) throw new NdArrayCodecError('ndarray payload shorter than its 4-byte header');
  const version = payload[0] as number;
  if (version !== NDARRAY_FORMAT_VERSION) throw new NdArrayCodecError(`ndarray format version ${version} (expected 1)`);
  const dtype = BY_CODE.get(payload[1] as number);
  if (dtype === undefined) throw new NdArrayCodecError(`unknown ndarray dtype code ${payload[1]}`);
  const ndim = payload[2] as number;
  if (ndim > MAX_NDIM) throw new NdArrayCodecError(`ndarray ndim ${ndim} exceeds ${MAX_NDIM}`);
  if (payload[3] !== 0) throw new NdArrayCodecError('ndarray reserved byte is not 0');
  const head = headerLength(ndim);
  if (payload.byteLength < head) throw new NdArrayCodecError('ndarray payload shorter than its shape');
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const shape: number[] = [];
  let count = 1;
  for (let i = 0; i < ndim; i++) {
    const d = view.getUint32(4 + 4 * i, true);
    shape.push(d);
    count *= d;
  }
  const bytes = payload.byteLength - head;
  if (count * DTYPES[dtype].size !== bytes) {
    throw new NdArrayCodecError(
      `ndarray [${shape.join(',')}] ${dtype} needs ${count * DTYPES[dtype].size} bytes, payload has ${bytes}`,
    );
  }
  return new WireNdArray(dtype, shape, typedView(dtype, payload.subarray(head), count), TRUSTED);
}

/**
 * The openpi / msgpack-numpy map form: `{ __ndarray__: true, data: bin, dtype: "<f4", shape: [..] }`
 * (openpi's `msgpack_numpy.pack_array`), also `{ __ndarray__: bin, dtype, shape }`; and numpy scalars
 * `{ __npgeneric__: true, data: value, dtype }`. Returns undefined when `m` is not such a map.
 */
export function fromNumpyMap(
  m: Readonly<Record<string, unknown>>,
): WireNdArray | number | boolean | bigint | undefined {
  if ('__npgeneric__' in m && m['__npgeneric__'] === true) {
    const v = m['data'];
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return v;
    throw new NdArrayCodecError('numpy scalar map without a numeric "data"');
  }
  if (!('__ndarray__' in m)) return undefined;
  const marker = m['__ndarray__'];
  const data = marker === true ? m['data'] : marker;
  if (!(data instanceof Uint8Array)) throw new NdArrayCodecError('numpy array map without binary data');
  const dtypeStr = m['dtype'];
  if (typeof dtypeStr !== 'string') throw new NdArrayCodecError('numpy array map without a dtype string');
  const dtype = BY_NUMPY.get(dtypeStr);
  if (dtype === undefined)
    throw new NdArrayCodecError(`numpy dtype "${dtypeStr}" is not supported (little-endian or byte-order-free only)`);
  const shapeRaw = m['shape'];
  if (
    !Array.isArray(shapeRaw) ||
    !shapeRaw.every((d): d is number => typeof d === 'number' && Number.isInteger(d) && d >= 0)
  ) {
    throw new NdArrayCodecError('numpy array map without an integer shape');
  }
  if (shapeRaw.length > MAX_NDIM) throw new NdArrayCodecError(`ndarray ndim ${shapeRaw.length} exceeds ${MAX_NDIM}`);
  const count = shapeRaw.reduce((a, b) => a * b, 1);
  if (count * DTYPES[dtype].size !== data.byteLength) {
    throw new NdArrayCodecError(
      `numpy array [${shapeRaw.join(',')}] ${dtype} needs ${count * DTYPES[dtype].size} bytes, has ${data.byteLength}`,
    );
  }
  requireLittleEndian();
  return new WireNdArray(dtype, [...shapeRaw], typedView(dtype, data, count));
}

/** Byte equality of two arrays (dtype, shape and element bytes). */
export function ndarraysEqual(a: NdArray, b: NdArray): boolean {
  if (a.dtype !== b.dtype || a.shape.length !== b.shape.length) return false;
  for (let i = 0; i < a.shape.length; i++) if (a.shape[i] !== b.shape[i]) return false;
  return Buffer.compare(ndarrayBytes(a), ndarrayBytes(b)) === 0;
}

/** The element bytes of an array, as a view. */
export function ndarrayBytes(a: NdArray): Uint8Array {
  return new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength);
}

type AllocateForWrite = (size: number) => { target: Uint8Array; position: number };

/** msgpack extension header for a payload of `length` bytes (always ext8/16/32, never fixext). */
function extHeaderSize(length: number): number {
  return length < 0x100 ? 3 : length < 0x10000 ? 4 : 6;
}

let registered = false;

/**
 * Registers extension 17 with msgpackr (idempotent; msgpackr's extension table is process-wide).
 * The packer writes the payload straight into its output buffer (one copy of the element bytes).
 */
export function registerNdArrayExtension(): void {
  if (registered) return;
  registered = true;
  addExtension({
    Class: WireNdArray,
    type: NDARRAY_EXT_TYPE,
    pack(value: WireNdArray, allocateForWrite: AllocateForWrite): void {
      const length = payloadLength(value);
      const head = extHeaderSize(length);
      const { target, position } = allocateForWrite(head + length);
      let p = position;
      if (length < 0x100) {
        target[p++] = 0xc7;
        target[p++] = length;
      } else if (length < 0x10000) {
        target[p++] = 0xc8;
        target[p++] = length >>> 8;
        target[p++] = length & 0xff;
      } else {
        target[p++] = 0xc9;
        target[p++] = (length >>> 24) & 0xff;
        target[p++] = (length >>> 16) & 0xff;
        target[p++] = (length >>> 8) & 0xff;
        target[p++] = length & 0xff;
      }
      target[p++] = NDARRAY_EXT_TYPE;
      writeNdArrayPayload(value, target, p);
    },
    unpack(payload: Uint8Array): WireNdArray {
      return decodeNdArrayPayload(payload);
    },
  } as unknown as Parameters<typeof addExtension>[0]);
}

registerNdArrayExtension();
