import { endianness } from 'node:os';
import { Packr } from 'msgpackr';
import { bytesPerElement, elementCount, tensorBytes } from '../core/index.js';
import type { FloatDtype, FloatTensor } from '../core/index.js';
import { assertTensor, bankError } from './validate.js';

/**
 * Byte-exact (de)serialisation of tensors and bank snapshots with msgpackr.
 *
 * A tensor is encoded as the map { dtype, shape, bytes } where `bytes` is a msgpack `bin` holding the
 * element storage in little-endian order: float16/bfloat16 keep their raw bit patterns, so NaN
 * payloads, signalling bits and -0 survive a round trip exactly. Objects are written as plain maps
 * (no msgpackr record extension) with keys in a fixed order, so equal banks give equal bytes.
 */

export interface EncodedTensor {
  readonly dtype: FloatDtype;
  readonly shape: readonly number[];
  readonly bytes: Uint8Array;
}

if (endianness() !== 'LE') {
  // Typed arrays use platform order; snapshots are defined as little-endian.
  throw new Error('IMEP bank snapshots require a little-endian platform');
}

const packr = new Packr({ useRecords: false, mapsAsObjects: true, useFloat32: 0, encodeUndefinedAsNil: false });

export function packSnapshot(value: unknown): Uint8Array {
  return new Uint8Array(packr.pack(value));
}

export function unpackSnapshot(bytes: Uint8Array, what: string): unknown {
  try {
    return packr.unpack(bytes);
  } catch (cause) {
    throw bankError(
      `${what}: snapshot bytes are not valid msgpack (${cause instanceof Error ? cause.message : String(cause)})`,
    );
  }
}

export function encodeTensor(t: FloatTensor): EncodedTensor {
  return { dtype: t.dtype, shape: [...t.shape], bytes: tensorBytes(t).slice() };
}

export function decodeTensor(value: unknown, field: string): FloatTensor {
  if (typeof value !== 'object' || value === null) throw bankError(`${field}: not an encoded tensor`, field);
  const { dtype, shape, bytes } = value as { dtype?: unknown; shape?: unknown; bytes?: unknown };
  if (!(bytes instanceof Uint8Array)) throw bankError(`${field}: bytes missing`, field);
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && (d as number) >= 0)) {
    throw bankError(`${field}: bad shape`, field);
  }
  if (dtype !== 'float32' && dtype !== 'float64' && dtype !== 'float16' && dtype !== 'bfloat16') {
    throw bankError(`${field}: unknown dtype ${String(dtype)}`, field);
  }
  const n = elementCount(shape as number[]);
  if (bytes.length !== n * bytesPerElement(dtype)) {
    throw bankError(`${field}: ${bytes.length} bytes do not hold ${n} ${dtype} values`, field);
  }
  const buffer = new ArrayBuffer(bytes.length);
  new Uint8Array(buffer).set(bytes);
  const dims = [...(shape as number[])];
  let t: FloatTensor;
  if (dtype === 'float32') t = { dtype, shape: dims, data: new Float32Array(buffer) };
  else if (dtype === 'float64') t = { dtype, shape: dims, data: new Float64Array(buffer) };
  else t = { dtype, shape: dims, data: new Uint16Array(buffer) };
  assertTensor(t, field);
  return t;
}

/** Reads a plain object field of an unpacked snapshot, or throws naming it. */
export function objectAt(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bankError(`${field}: expected a map`, field);
  return value as Record<string, unknown>;
}

export function arrayAt(value: unknown, field: string): readonly unknown[] {
  if (!Array.isArray(value)) throw bankError(`${field}: expected a list`, field);
  return value;
}

/** Checks the { format, version } header of a snapshot. */
export function checkHeader(root: Record<string, unknown>, format: string, version: number): void {
  if (root['format'] !== format)
    throw bankError(`snapshot: format is ${String(root['format'])}, expected ${format}`, 'format');
  if (root['version'] !== version)
    throw bankError(
      `snapshot: ${format} version ${String(root['version'])} is not supported (expected ${version})`,
      'version',
    );
}
