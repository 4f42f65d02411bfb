import { FLOAT_DTYPES, elementCount, ImepError } from '../core/index.js';
import type { FloatDtype, FloatTensor } from '../core/index.js';
import { PAYLOAD_FIELDS } from './record.js';
import type { Payload, RecordKeys } from './record.js';

/**
 * Shape checks shared by the banks. Every failure is an ImepError('E_BANK_INVALID') whose `field`
 * names where the bad value sits (e.g. `payload.actionChunk`).
 */

export const KEY_FIELDS = [
  'cognitiveKey',
  'perceptualKey',
  'stateSignature',
] as const satisfies readonly (keyof RecordKeys)[];
export type KeyField = (typeof KEY_FIELDS)[number];

export function bankError(message: string, field?: string): ImepError {
  return new ImepError('E_BANK_INVALID', message, field === undefined ? {} : { field });
}

function storageMatches(dtype: FloatDtype, data: unknown): boolean {
  if (dtype === 'float32') return data instanceof Float32Array;
  if (dtype === 'float64') return data instanceof Float64Array;
  return data instanceof Uint16Array;
}

/** Every element a non-negative integer (a loop, not `every`: the banks check a tensor on each query and write). */
function isShape(shape: readonly unknown[]): boolean {
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    if (!Number.isInteger(d) || (d as number) < 0) return false;
  }
  return true;
}

/** Throws unless `t` is a well-formed FloatTensor (known dtype, matching storage, shape holds the data). */
export function assertTensor(t: unknown, field: string): asserts t is FloatTensor {
  if (typeof t !== 'object' || t === null) throw bankError(`${field}: not a tensor`, field);
  const { dtype, shape, data } = t as { dtype?: unknown; shape?: unknown; data?: unknown };
  if (typeof dtype !== 'string' || !(FLOAT_DTYPES as readonly string[]).includes(dtype)) {
    throw bankError(`${field}: unknown dtype ${String(dtype)}`, field);
  }
  if (!Array.isArray(shape) || !isShape(shape)) {
    throw bankError(`${field}: shape must be a list of non-negative integers`, field);
  }
  if (!storageMatches(dtype as FloatDtype, data))
    throw bankError(`${field}: storage does not match dtype ${dtype}`, field);
  const n = (data as { length: number }).length;
  if (elementCount(shape as number[]) !== n) {
    throw bankError(`${field}: shape [${(shape as number[]).join(',')}] does not hold ${n} values`, field);
  }
}

/**
 * assertTensor for a caller that hands the same tensor object over and over (the memory policy refills one key and
 * one value tensor for every slot): a tensor identical to the last one that passed — same object, same data array of
 * the same length, same dtype, and the same shape array, frozen — passes without the checks, which could not find
 * anything new. Anything else is checked in full.
 */
export class TensorChecker {
  private tensor: object | null = null;
  private data: unknown = null;
  private shape: unknown = null;
  private dtype = '';
  private length = -1;

  check(t: unknown, field: string): asserts t is FloatTensor {
    const x = t as FloatTensor;
    if (
      t !== null &&
      t === this.tensor &&
      x.data === this.data &&
      x.shape === this.shape &&
      x.dtype === this.dtype &&
      x.data.length === this.length
    )
      return;
    assertTensor(t, field);
    if (Object.isFrozen(x.shape)) {
      this.tensor = x;
      this.data = x.data;
      this.shape = x.shape;
      this.dtype = x.dtype;
      this.length = x.data.length;
    } else this.tensor = null;
  }
}

export function assertKeys(keys: unknown, field = 'keys'): asserts keys is RecordKeys {
  if (typeof keys !== 'object' || keys === null) throw bankError(`${field}: missing`, field);
  for (const k of KEY_FIELDS) assertTensor((keys as Record<string, unknown>)[k], `${field}.${k}`);
}

export function assertPayload(payload: unknown, field = 'payload'): asserts payload is Payload {
  if (typeof payload !== 'object' || payload === null) throw bankError(`${field}: missing`, field);
  for (const f of PAYLOAD_FIELDS) assertTensor((payload as Record<string, unknown>)[f], `${field}.${f}`);
}

export function assertNonNegativeInteger(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw bankError(`${field}: must be a non-negative integer, got ${String(value)}`, field);
  }
}

export function assertPositiveInteger(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw bankError(`${field}: must be a positive integer, got ${String(value)}`, field);
  }
}

export function assertFiniteNumber(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw bankError(`${field}: must be a finite number, got ${String(value)}`, field);
}

export function assertString(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string') throw bankError(`${field}: must be a string`, field);
}

/** Throws unless every element of the tensor is finite (no NaN, no ±Infinity). */
export function assertFiniteTensor(t: FloatTensor, field: string): void {
  const d = t.data;
  if (t.dtype === 'float16' || t.dtype === 'bfloat16') {
    const mask = t.dtype === 'float16' ? 0x7c00 : 0x7f80;
    for (let i = 0; i < d.length; i++) {
      if (((d[i] as number) & mask) === mask) throw bankError(`${field}: element ${i} is not finite`, field);
    }
    return;
  }
  for (let i = 0; i < d.length; i++) {
    if (!Number.isFinite(d[i] as number)) throw bankError(`${field}: element ${i} is not finite`, field);
  }
}

/** Keys that selection can use: well-formed and finite. */
export function assertSelectableKeys(keys: unknown, field = 'keys'): asserts keys is RecordKeys {
  assertKeys(keys, field);
  for (const k of KEY_FIELDS) assertFiniteTensor(keys[k], `${field}.${k}`);
}
