/**
 * Conversion between in-memory values and what travels in a bridge message.
 *
 * Outbound (`toWire`): NdArray-shaped objects and bare typed arrays become extension 17 arrays,
 * `undefined` map entries are dropped (array slots become nil), anything else that msgpack cannot
 * carry faithfully (Map, Date, functions, symbols) is refused.
 *
 * Inbound (`fromWire`): openpi / msgpack-numpy array maps become ndarrays, 64-bit integers within
 * 2^53 become numbers, maps with binary keys (Python `b"key"`) get their keys as UTF-8 strings,
 * and every value that is not a plain msgpack value or an ndarray is refused.
 */
import {
  NdArrayCodecError,
  WireNdArray,
  dtypeOfTypedArray,
  fromNumpyMap,
  isDtype,
  type NdData,
} from './ndarray-codec.js';

/** A value as decoded from a bridge message. */
export type WireValue =
  | WireNdArray
  | Uint8Array
  | number
  | string
  | boolean
  | null
  | readonly WireValue[]
  | { readonly [k: string]: WireValue };

/** Thrown by the walks; the envelope layer reports it as E_BAD_MESSAGE (inbound) or a refused encode. */
export class WireValueError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path || '(root)'}: ${message}`);
    this.name = 'WireValueError';
  }
}

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function join(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
}

/** Outbound conversion (a new tree; typed-array data is not copied). Throws WireValueError. */
export function toWire(value: unknown, path = ''): unknown {
  switch (typeof value) {
    case 'number':
    case 'string':
    case 'boolean':
      return value;
    case 'bigint':
      if (value >= -(2n ** 63n) && value < 2n ** 64n) return value;
      throw new WireValueError(path, 'integer outside the 64-bit range');
    case 'undefined':
      return null;
    case 'object':
      break;
    default:
      throw new WireValueError(path, `cannot send a ${typeof value}`);
  }
  if (value === null) return null;
  if (value instanceof WireNdArray) return value;
  if (ArrayBuffer.isView(value)) {
    if (value instanceof DataView) throw new WireValueError(path, 'cannot send a DataView');
    const data = value as NdData;
    return new WireNdArray(dtypeOfTypedArray(data), [data.length], data);
  }
  if (Array.isArray(value)) return value.map((v, i) => toWire(v, join(path, i)));
  if (!isPlainObject(value)) throw new WireValueError(path, `cannot send a ${value.constructor.name}`);
  const o = value as { dtype?: unknown; shape?: unknown; data?: unknown };
  if (isDtype(o.dtype) && Array.isArray(o.shape) && ArrayBuffer.isView(o.data)) {
    if (o.data instanceof DataView) throw new WireValueError(path, 'ndarray data is a DataView');
    try {
      return new WireNdArray(o.dtype, o.shape as number[], o.data as NdData);
    } catch (e) {
      throw new WireValueError(path, e instanceof Error ? e.message : String(e));
    }
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    out[k] = toWire(v, join(path, k));
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function mapKey(k: unknown, path: string): string {
  if (typeof k === 'string') return k;
  if (typeof k === 'number' || typeof k === 'bigint') return String(k);
  if (k instanceof Uint8Array) {
    try {
      return utf8.decode(k);
    } catch {
      throw new WireValueError(path, 'binary map key is not UTF-8');
    }
  }
  throw new WireValueError(path, 'map key is not a string');
}

/** Inbound conversion of a freshly decoded tree (objects and arrays are rewritten in place). */
export function fromWire(value: unknown, path = ''): WireValue {
  switch (typeof value) {
    case 'number':
    case 'string':
    case 'boolean':
      return value;
    case 'bigint':
      if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
      throw new WireValueError(path, 'integer beyond ±(2^53−1) (send it as an int64 ndarray)');
    case 'object':
      break;
    default:
      throw new WireValueError(path, `unexpected ${typeof value} (an unsupported msgpack extension?)`);
  }
  if (value === null) return null;
  if (value instanceof WireNdArray) return value;
  if (value instanceof Uint8Array && !(value instanceof Uint8ClampedArray)) return value;
  if (Array.isArray(value)) {
    const arr = value as unknown[];
    for (let i = 0; i < arr.length; i++) arr[i] = fromWire(arr[i], join(path, i));
    return arr as WireValue[];
  }
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value as Map<unknown, unknown>) {
      const key = mapKey(k, path);
      if (key === '__proto__') throw new WireValueError(path, 'map key "__proto__" is not allowed');
      out[key] = v;
    }
    return fromWire(out, path);
  }
  if (!isPlainObject(value)) throw new WireValueError(path, 'unsupported msgpack extension value');
  let numpy: ReturnType<typeof fromNumpyMap>;
  try {
    numpy = fromNumpyMap(value);
  } catch (e) {
    if (e instanceof NdArrayCodecError) throw new WireValueError(path, e.message);
    throw e;
  }
  if (numpy !== undefined) return fromWire(numpy, path);
  for (const k of Object.keys(value)) value[k] = fromWire(value[k], join(path, k));
  return value as { [k: string]: WireValue };
}
