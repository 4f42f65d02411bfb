import { tensorFrom } from '../../src/core/tensor.js';
import type { FloatDtype, FloatTensor } from '../../src/core/tensor.js';
import { PAYLOAD_FIELDS } from '../../src/banks/record.js';
import type { Payload, RecordKeys } from '../../src/banks/record.js';
import type { WriteCandidate } from '../../src/banks/structured-bank.js';

export function t(values: readonly number[], dtype: FloatDtype = 'float32'): FloatTensor {
  return tensorFrom(dtype, values);
}

/** A one-hot-ish vector: 1 at i, `rest` elsewhere. */
export function basis(dim: number, i: number, rest = 0): number[] {
  return Array.from({ length: dim }, (_, j) => (j === i ? 1 : rest));
}

export function keys(
  cog: readonly number[],
  per: readonly number[],
  sig: readonly number[],
  dtype: FloatDtype = 'float32',
): RecordKeys {
  return { cognitiveKey: t(cog, dtype), perceptualKey: t(per, dtype), stateSignature: t(sig, dtype) };
}

/** A payload whose every field holds `[tag, fieldIndex]` so fields can be told apart. */
export function payload(tag: number, dtype: FloatDtype = 'float32'): Payload {
  const p: Partial<Record<(typeof PAYLOAD_FIELDS)[number], FloatTensor>> = {};
  PAYLOAD_FIELDS.forEach((f, i) => {
    p[f] = t([tag, i], dtype);
  });
  return p as Payload;
}

export function candidate(k: RecordKeys, tag: number, sourceEpisode = 'ep1'): WriteCandidate {
  return { keys: k, payload: payload(tag), sourceEpisode };
}
