/**
 * msgpack-numpy as the policy servers IMEP speaks to write it, in their two dialects (msgpackr underneath):
 *
 *   openpi    openpi_client/msgpack_numpy.py: an array is a map with BYTES keys
 *             { b"__ndarray__": True, b"data": <bin>, b"dtype": dtype.str, b"shape": [..] }, a numpy scalar
 *             { b"__npgeneric__": True, b"data": <its .item()>, b"dtype": dtype.str }.
 *   vla-eval  vla_eval/protocol/numpy_codec.py + image_codec.py: str keys
 *             { "__ndarray__": True, "data": <bin>, "dtype": dtype.str, "shape": [..] }, images
 *             { "__image__": True, "format": "raw" | "png" | "jpeg", "data", "dtype" (raw), "shape" }; numpy
 *             scalars travel as plain numbers.
 *
 * IMEP always SENDS raw arrays in the dialect's exact spelling (same bytes as the Python packers: the golden tests
 * compare them). It READS either spelling of the array map in both dialects (a server that sends the other one is
 * still understood); a png / jpeg image is refused in one line (decoding it would need an image library).
 * dtypes travel as numpy's `dtype.str` (`<f4`, `|u1`, `|b1`, …) both ways; little-endian only (a big-endian array is
 * refused). Decoded arrays own a copy of their bytes (aligned, independent of the frame). A numpy scalar decodes to a
 * 0-d NdArray of its dtype; a bare msgpack bin (Python bytes) outside an array map decodes to a uint8 [n] NdArray.
 * Errors are MsgpackNumpyError naming the path of the value (the sessions add the endpoint).
 */
import { Packr, Unpackr } from 'msgpackr';
import { DTYPES, WireNdArray, isDtype, ndarrayBytes, type Dtype, type NdData } from '../../bridges/index.js';
import type { NdArray } from '../../runtime/index.js';
import type { WireMap, WireValue } from './session.js';

export type NumpyDialect = 'openpi' | 'vla-eval';

/** A frame or value that is not msgpack-numpy as the dialect writes it; `path` is where (e.g. `reply.actions`). */
export class MsgpackNumpyError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'MsgpackNumpyError';
  }
}

const NUMPY_OF: Readonly<Record<Dtype, string | undefined>> = {
  uint8: '|u1',
  int8: '|i1',
  uint16: '<u2',
  int16: '<i2',
  uint32: '<u4',
  int32: '<i4',
  float16: '<f2',
  bfloat16: undefined,
  float32: '<f4',
  float64: '<f8',
  int64: '<i8',
  uint64: '<u8',
  bool: '|b1',
};

const DTYPE_OF: ReadonlyMap<string, Dtype> = new Map(
  (Object.keys(NUMPY_OF) as Dtype[]).flatMap((d) => {
    const s = NUMPY_OF[d];
    return s === undefined ? [] : [[s, d] as const];
  }),
);

/** numpy's `dtype.str` of an IMEP dtype (`float32` → `<f4`); bfloat16 has none. */
export function numpyDtypeStr(dtype: Dtype, path = 'array'): string {
  const s = NUMPY_OF[dtype];
  if (s === undefined) throw new MsgpackNumpyError(path, `dtype ${dtype} has no numpy dtype; send float32 instead`);
  return s;
}

/** The IMEP dtype of a numpy `dtype.str` (`<f4` → float32); big-endian and other kinds are refused. */
export function dtypeOfNumpyStr(str: string, path = 'array'): Dtype {
  const m = /^([<>|=])([biuf])(\d+)$/.exec(str);
  if (m !== null) {
    const [, order, kind, size] = m as unknown as [string, string, string, string];
    // one-byte types have no byte order: numpy writes '|', any other mark means the same type
    const key = size === '1' ? `|${kind}1` : `${order}${kind}${size}`;
    const d = DTYPE_OF.get(key);
    if (d !== undefined) return d;
    if (order === '>')
      throw new MsgpackNumpyError(path, `big-endian numpy dtype "${str}": IMEP reads little-endian arrays only`);
  }
  throw new MsgpackNumpyError(
    path,
    `numpy dtype "${str}" is not one IMEP reads (little-endian bool, int8-64, uint8-64, float16/32/64)`,
  );
}

const packr = new Packr({ useRecords: false, variableMapSize: true, encodeUndefinedAsNil: false });
// int64AsType 'auto' (in msgpackr's unpack.js, not in its typings): integers within 2^53 as numbers, beyond as bigint
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: false, int64AsType: 'auto' as 'bigint' });

const KEY = (s: string): Buffer => Buffer.from(s, 'latin1');

function isNdArrayLike(v: object): v is NdArray {
  return 'dtype' in v && 'shape' in v && 'data' in v && ArrayBuffer.isView((v as { data: unknown }).data);
}

/** The msgpack-ready form of a value: arrays become the dialect's map; everything else is checked plain data. */
function toPackable(v: WireValue | undefined, dialect: NumpyDialect, path: string): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return v;
  if (v === undefined) throw new MsgpackNumpyError(path, 'undefined has no msgpack form; leave the key out');
  if (Array.isArray(v)) return (v as readonly WireValue[]).map((x, i) => toPackable(x, dialect, `${path}[${i}]`));
  if (typeof v !== 'object') throw new MsgpackNumpyError(path, `a ${typeof v} has no msgpack form`);
  if (ArrayBuffer.isView(v)) throw new MsgpackNumpyError(path, 'a bare typed array: wrap it as { dtype, shape, data }');
  if (isNdArrayLike(v)) return arrayMap(v, dialect, path);
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null)
    throw new MsgpackNumpyError(path, 'only plain objects, arrays and ndarrays travel');
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, WireValue>)) {
    if (x === undefined) continue;
    out[k] = toPackable(x, dialect, `${path}.${k}`);
  }
  return out;
}

function arrayMap(a: NdArray, dialect: NumpyDialect, path: string): unknown {
  if (!isDtype(a.dtype)) throw new MsgpackNumpyError(path, `unknown dtype "${a.dtype}"`);
  let w: WireNdArray;
  try {
    w = new WireNdArray(a.dtype, [...a.shape], a.data);
  } catch (e) {
    throw new MsgpackNumpyError(path, (e as Error).message);
  }
  const dtype = numpyDtypeStr(w.dtype, path);
  const bytes = ndarrayBytes(w);
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const shape = [...w.shape];
  if (dialect === 'vla-eval') return { __ndarray__: true, data, dtype, shape };
  return new Map<Buffer, unknown>([
    [KEY('__ndarray__'), true],
    [KEY('data'), data],
    [KEY('dtype'), dtype],
    [KEY('shape'), shape],
  ]);
}

/** Packs a value in the dialect (what the Python packer of that server would write for the same data). */
export function packWire(value: WireValue, dialect: NumpyDialect, path = 'message'): Uint8Array {
  return packr.pack(toPackable(value, dialect, path));
}

/** Unpacks one frame; throws MsgpackNumpyError when it is not msgpack or holds what IMEP does not read. */
export function unpackWire(frame: Uint8Array, path = 'frame'): WireValue {
  let raw: unknown;
  try {
    raw = unpackr.unpack(frame);
  } catch (e) {
    throw new MsgpackNumpyError(path, `not msgpack (${frame.byteLength} bytes): ${firstLine((e as Error).message)}`);
  }
  return fromUnpacked(raw, path);
}

/** Unpacks a frame that must be a map (a reply, a metadata frame). */
export function unpackWireMap(frame: Uint8Array, path = 'frame'): WireMap {
  const v = unpackWire(frame, path);
  if (!isWireMap(v)) throw new MsgpackNumpyError(path, `expected a msgpack map, got ${kindOf(v)}`);
  return v;
}

export function isWireMap(v: WireValue): v is WireMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isNdArrayLike(v);
}

export function kindOf(v: WireValue): string {
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return isNdArrayLike(v) ? 'an ndarray' : 'a map';
  return `a ${typeof v}`;
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? '';
}

function ownCopy(b: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(b.byteLength);
  new Uint8Array(out).set(b);
  return out;
}

function fromUnpacked(v: unknown, path: string): WireValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') throw new MsgpackNumpyError(path, `integer ${v} is beyond 2^53`);
  if (v instanceof Uint8Array) return new WireNdArray('uint8', [v.byteLength], new Uint8Array(ownCopy(v)));
  if (Array.isArray(v)) return v.map((x, i) => fromUnpacked(x, `${path}[${i}]`));
  if (v instanceof Map) {
    const entries = new Map<string, unknown>();
    for (const [k, x] of v as Map<unknown, unknown>) {
      let key: string;
      if (typeof k === 'string') key = k;
      else if (k instanceof Uint8Array) key = Buffer.from(k).toString('utf8');
      else if (typeof k === 'number' || typeof k === 'boolean' || k === null) key = String(k);
      else throw new MsgpackNumpyError(path, 'a map key that is not a string, bytes or number');
      if (entries.has(key)) throw new MsgpackNumpyError(path, `key "${key}" appears twice (as str and bytes)`);
      entries.set(key, x);
    }
    const special = fromMarkedMap(entries, path);
    if (special !== undefined) return special;
    const out: Record<string, WireValue> = {};
    for (const [k, x] of entries) {
      Object.defineProperty(out, k, {
        value: fromUnpacked(x, `${path}.${k}`),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  throw new MsgpackNumpyError(path, `a msgpack extension or type IMEP does not read (${typeof v})`);
}

function isTrue(x: unknown): boolean {
  return x === true;
}

/** The array / scalar / image maps of both dialects; undefined for any other map. */
function fromMarkedMap(m: ReadonlyMap<string, unknown>, path: string): WireNdArray | undefined {
  if (isTrue(m.get('__ndarray__'))) {
    return arrayFrom(m.get('data'), m.get('dtype'), m.get('shape'), path);
  }
  if (isTrue(m.get('__image__'))) {
    const fmt = m.get('format');
    if (fmt !== 'raw')
      throw new MsgpackNumpyError(
        path,
        `image in format "${String(fmt)}": IMEP reads raw images only (start the server with the raw image format)`,
      );
    return arrayFrom(m.get('data'), m.get('dtype'), m.get('shape'), path);
  }
  if (isTrue(m.get('__npgeneric__'))) {
    const dtypeStr = m.get('dtype');
    if (typeof dtypeStr !== 'string') throw new MsgpackNumpyError(path, 'numpy scalar map without a dtype string');
    return scalarFrom(dtypeOfNumpyStr(dtypeStr, path), m.get('data'), path);
  }
  return undefined;
}

function arrayFrom(data: unknown, dtypeStr: unknown, shape: unknown, path: string): WireNdArray {
  if (!(data instanceof Uint8Array)) throw new MsgpackNumpyError(path, 'array map without binary "data"');
  if (typeof dtypeStr !== 'string') throw new MsgpackNumpyError(path, 'array map without a "dtype" string');
  const dtype = dtypeOfNumpyStr(dtypeStr, path);
  if (
    !Array.isArray(shape) ||
    !shape.every((d): d is number => typeof d === 'number' && Number.isInteger(d) && d >= 0 && d <= 0xffffffff)
  )
    throw new MsgpackNumpyError(path, 'array map without an integer "shape"');
  const count = shape.reduce((a: number, b: number) => a * b, 1);
  const { ctor, size } = DTYPES[dtype];
  if (count * size !== data.byteLength)
    throw new MsgpackNumpyError(
      path,
      `array [${shape.join(',')}] ${dtypeStr} needs ${count * size} bytes, "data" has ${data.byteLength}`,
    );
  return new WireNdArray(dtype, [...shape], new ctor(ownCopy(data), 0, count) as NdData);
}

function scalarFrom(dtype: Dtype, v: unknown, path: string): WireNdArray {
  const bad = (): MsgpackNumpyError =>
    new MsgpackNumpyError(path, `numpy scalar of dtype ${dtype} with data ${String(v)}`);
  const { ctor } = DTYPES[dtype];
  if (dtype === 'bool') {
    if (typeof v !== 'boolean') throw bad();
    return new WireNdArray(dtype, [], new Uint8Array([v ? 1 : 0]));
  }
  if (dtype === 'int64' || dtype === 'uint64') {
    if (typeof v !== 'number' && typeof v !== 'bigint') throw bad();
    if (typeof v === 'number' && !Number.isInteger(v)) throw bad();
    const big = BigInt(v);
    return new WireNdArray(dtype, [], dtype === 'int64' ? new BigInt64Array([big]) : new BigUint64Array([big]));
  }
  if (typeof v !== 'number') throw bad();
  if (dtype === 'float16') return new WireNdArray(dtype, [], new Uint16Array([float16Bits(v)]));
  if (dtype !== 'float32' && dtype !== 'float64' && !Number.isInteger(v)) throw bad();
  return new WireNdArray(dtype, [], new (ctor as Float64ArrayConstructor)([v]) as NdData);
}

/** IEEE half-precision bits of `x`, rounded to nearest even (as numpy converts a float to float16). */
export function float16Bits(x: number): number {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  if (Number.isNaN(x)) return 0x7e00;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00; // beyond the largest half (65504) after rounding: infinity
  if (a < 2 ** -14) return sign | roundHalfEven(a / 2 ** -24); // subnormal (1024 rounds up into the first normal)
  let e = Math.floor(Math.log2(a));
  if (a / 2 ** e < 1) e -= 1;
  else if (a / 2 ** e >= 2) e += 1;
  let m = roundHalfEven((a / 2 ** e - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e += 1;
  }
  return sign | ((e + 15) << 10) | m;
}

function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}
