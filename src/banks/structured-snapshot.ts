import type { BankRecord, Payload, RecordKeys } from './record.js';
import { PAYLOAD_FIELDS } from './record.js';
import { arrayAt, decodeTensor, encodeTensor, objectAt } from './tensor-codec.js';
import type { EncodedTensor } from './tensor-codec.js';
import { KEY_FIELDS, assertNonNegativeInteger, assertSelectableKeys, assertString, bankError } from './validate.js';

/**
 * The msgpack layout of structured-bank snapshots (format version 1):
 *
 *   bank  = { format: 'imep-structured-bank', version: 1, config, scopes: [scope…] }   scopes sorted by name
 *   scope = { scope, clock, records: [record…] }                                          records in slot order
 *   record = { slot, sourceEpisode, timestep, version,
 *              keys: { cognitiveKey, perceptualKey, stateSignature },
 *              payload: { the eight PAYLOAD_FIELDS in canonical order } }                 tensors: tensor-codec
 *
 * A single-scope snapshot (donor scopes) is { format: 'imep-structured-scope', version: 1, scope }.
 */

export const BANK_FORMAT = 'imep-structured-bank';
export const SCOPE_FORMAT = 'imep-structured-scope';
export const SNAPSHOT_VERSION = 1;

export interface EncodedScope {
  readonly scope: string;
  readonly clock: number;
  readonly records: readonly Record<string, unknown>[];
}

export interface DecodedScope {
  readonly scope: string;
  readonly clock: number;
  readonly records: readonly BankRecord[];
}

export function encodeScope(scope: string, clock: number, records: readonly BankRecord[]): EncodedScope {
  return {
    scope,
    clock,
    records: records.map((r) => {
      const keys: Record<string, EncodedTensor> = {};
      for (const k of KEY_FIELDS) keys[k] = encodeTensor(r.keys[k]);
      const payload: Record<string, EncodedTensor> = {};
      for (const f of PAYLOAD_FIELDS) payload[f] = encodeTensor(r.payload[f]);
      return { slot: r.slot, sourceEpisode: r.sourceEpisode, timestep: r.timestep, version: r.version, keys, payload };
    }),
  };
}

/** Decodes and validates one scope: slots unique and < capacity, timesteps ≤ clock, keys finite. */
export function decodeScope(value: unknown, field: string, capacity: number): DecodedScope {
  const o = objectAt(value, field);
  const scope = o['scope'];
  assertString(scope, `${field}.scope`);
  const clock = o['clock'];
  assertNonNegativeInteger(clock, `${field}.clock`);
  const seen = new Set<number>();
  const records = arrayAt(o['records'], `${field}.records`).map((rv, i): BankRecord => {
    const at = `${field}.records[${i}]`;
    const r = objectAt(rv, at);
    const { slot, sourceEpisode, timestep, version } = r;
    assertNonNegativeInteger(slot, `${at}.slot`);
    if (slot >= capacity) throw bankError(`${at}.slot: slot ${slot} does not fit capacity ${capacity}`, `${at}.slot`);
    if (seen.has(slot)) throw bankError(`${at}.slot: slot ${slot} appears twice in scope ${scope}`, `${at}.slot`);
    seen.add(slot);
    assertString(sourceEpisode, `${at}.sourceEpisode`);
    assertNonNegativeInteger(timestep, `${at}.timestep`);
    assertNonNegativeInteger(version, `${at}.version`);
    if (timestep > clock)
      throw bankError(`${at}.timestep: ${timestep} is after the scope clock ${clock}`, `${at}.timestep`);
    const ko = objectAt(r['keys'], `${at}.keys`);
    const keys = Object.freeze({
      cognitiveKey: decodeTensor(ko['cognitiveKey'], `${at}.keys.cognitiveKey`),
      perceptualKey: decodeTensor(ko['perceptualKey'], `${at}.keys.perceptualKey`),
      stateSignature: decodeTensor(ko['stateSignature'], `${at}.keys.stateSignature`),
    }) satisfies RecordKeys;
    assertSelectableKeys(keys, `${at}.keys`);
    const po = objectAt(r['payload'], `${at}.payload`);
    const payload: Partial<Record<(typeof PAYLOAD_FIELDS)[number], ReturnType<typeof decodeTensor>>> = {};
    for (const f of PAYLOAD_FIELDS) payload[f] = decodeTensor(po[f], `${at}.payload.${f}`);
    return Object.freeze({
      slot,
      scope,
      sourceEpisode,
      timestep,
      version,
      keys,
      payload: Object.freeze(payload as Payload),
    });
  });
  records.sort((a, b) => a.slot - b.slot);
  return { scope, clock, records };
}
