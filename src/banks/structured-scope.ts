import { cloneTensor } from '../core/index.js';
import type { FloatTensor } from '../core/index.js';
import type { BankRecord, Payload, RecordIdentity, RecordKeys } from './record.js';
import { PAYLOAD_FIELDS } from './record.js';
import { dot64 } from './cosine.js';
import type { PreparedKeys, SelectorCandidate } from './selector.js';
import { bankError } from './validate.js';

/**
 * The state of one scope of the structured bank: its query clock and its slots. Pure bookkeeping;
 * the write rules (merge target, insert slot, eviction victim) are the functions at the bottom.
 */

/** A stored record with its cached key unit vectors. Records are frozen and never written in place. */
export interface StoredRecord {
  readonly record: BankRecord;
  readonly candidate: SelectorCandidate;
}

export class ScopeState {
  clock: number;
  private readonly slots: (StoredRecord | undefined)[];
  private ordered: StoredRecord[] | null = null;
  private candidateList: SelectorCandidate[] | null = null;

  constructor(
    readonly scope: string,
    readonly capacity: number,
    clock = 0,
  ) {
    this.clock = clock;
    this.slots = new Array<StoredRecord | undefined>(capacity).fill(undefined);
  }

  /** Stored records in slot order (cached until the next change). */
  stored(): readonly StoredRecord[] {
    if (this.ordered === null) this.ordered = this.slots.filter((s): s is StoredRecord => s !== undefined);
    return this.ordered;
  }

  /** Selector candidates in slot order (cached until the next change). */
  candidates(): readonly SelectorCandidate[] {
    if (this.candidateList === null) this.candidateList = this.stored().map((s) => s.candidate);
    return this.candidateList;
  }

  get size(): number {
    return this.stored().length;
  }

  at(slot: number): StoredRecord | undefined {
    return this.slots[slot];
  }

  put(slot: number, record: BankRecord, prepared: PreparedKeys): void {
    if (!(slot >= 0 && slot < this.capacity))
      throw bankError(`scope ${this.scope}: slot ${slot} outside capacity ${this.capacity}`, 'slot');
    this.slots[slot] = { record, candidate: { slot, timestep: record.timestep, prepared } };
    this.ordered = null;
    this.candidateList = null;
  }

  clearRecords(): void {
    this.slots.fill(undefined);
    this.ordered = null;
    this.candidateList = null;
  }

  /** Element counts of the keys stored in this scope (from its first record), or null when empty. */
  keyDims(): { cognitive: number; perceptual: number; signature: number } | null {
    const first = this.stored()[0];
    if (first === undefined) return null;
    const p = first.candidate.prepared;
    return { cognitive: p.cognitive.length, perceptual: p.perceptual.length, signature: p.signature.length };
  }

  lowestFreeSlot(): number | undefined {
    for (let s = 0; s < this.capacity; s++) if (this.slots[s] === undefined) return s;
    return undefined;
  }
}

/**
 * Merge target rule: the stored record whose state signature is most similar to the candidate's,
 * provided that similarity is ≥ `threshold`; equal similarities go to the earlier (timestep, slot).
 * Only the state-signature key is read.
 */
export function findMergeTarget(
  state: ScopeState,
  signature: Float64Array,
  threshold: number,
): StoredRecord | undefined {
  let best: StoredRecord | undefined;
  let bestSim = -Infinity;
  for (const s of state.stored()) {
    const sim = dot64(signature, s.candidate.prepared.signature);
    if (!(sim >= threshold)) continue;
    if (best === undefined || sim > bestSim || (sim === bestSim && earlier(s.record, best.record))) {
      best = s;
      bestSim = sim;
    }
  }
  return best;
}

/**
 * Eviction rule (bank full, no merge): the record with the oldest timestep; equal timesteps go to the
 * lowest slot. The new record is inserted into the victim's slot.
 */
export function findEvictionVictim(state: ScopeState): StoredRecord | undefined {
  let victim: StoredRecord | undefined;
  for (const s of state.stored()) if (victim === undefined || earlier(s.record, victim.record)) victim = s;
  return victim;
}

function earlier(a: RecordIdentity, b: RecordIdentity): boolean {
  return a.timestep < b.timestep || (a.timestep === b.timestep && a.slot < b.slot);
}

/** A frozen copy of a payload (new buffers, fields in canonical order). */
export function copyPayload(p: Payload): Payload {
  const out: Partial<Record<(typeof PAYLOAD_FIELDS)[number], FloatTensor>> = {};
  for (const f of PAYLOAD_FIELDS) out[f] = cloneTensor(p[f]);
  return Object.freeze(out as Payload);
}

export function copyKeys(k: RecordKeys): RecordKeys {
  return Object.freeze({
    cognitiveKey: cloneTensor(k.cognitiveKey),
    perceptualKey: cloneTensor(k.perceptualKey),
    stateSignature: cloneTensor(k.stateSignature),
  });
}

/** A deep copy of a record (new tensor buffers); the bank hands these out instead of its own. */
export function copyRecord(r: BankRecord): BankRecord {
  return Object.freeze({
    slot: r.slot,
    scope: r.scope,
    sourceEpisode: r.sourceEpisode,
    timestep: r.timestep,
    version: r.version,
    keys: copyKeys(r.keys),
    payload: copyPayload(r.payload),
  });
}

export function identityOf(r: RecordIdentity): RecordIdentity {
  return Object.freeze({
    slot: r.slot,
    scope: r.scope,
    sourceEpisode: r.sourceEpisode,
    timestep: r.timestep,
    version: r.version,
  });
}

/**
 * Copies of many payloads' tensors backed by one fresh ArrayBuffer (one allocation per read instead
 * of one per tensor). Each copy is its own, non-overlapping view; leaves come in PAYLOAD_FIELDS order.
 */
export function copyPayloadsPacked(payloads: readonly Payload[]): Readonly<Record<string, FloatTensor>>[] {
  let total = 0;
  for (const p of payloads) for (const f of PAYLOAD_FIELDS) total += align8(p[f].data.byteLength);
  const buffer = new ArrayBuffer(total);
  const bytes = new Uint8Array(buffer);
  let offset = 0;
  return payloads.map((p) => {
    const out: Record<string, FloatTensor> = {};
    for (const f of PAYLOAD_FIELDS) {
      const t = p[f];
      const src = t.data;
      bytes.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), offset);
      const n = src.length;
      const shape = [...t.shape];
      if (t.dtype === 'float32') out[f] = { dtype: t.dtype, shape, data: new Float32Array(buffer, offset, n) };
      else if (t.dtype === 'float64') out[f] = { dtype: t.dtype, shape, data: new Float64Array(buffer, offset, n) };
      else out[f] = { dtype: t.dtype, shape, data: new Uint16Array(buffer, offset, n) };
      offset += align8(src.byteLength);
    }
    return out;
  });
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
