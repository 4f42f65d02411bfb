/** Test helpers: record builders and a minimal in-test bank implementing InstallTarget. */
import {
  identityReadHook,
  PAYLOAD_FIELDS,
  type BankRecord,
  type Payload,
  type PayloadField,
  type ReadContext,
  type ReadHook,
  type RecordKeys,
  type RetrievedItem,
} from '../../src/banks/record.js';
import { Prng } from '../../src/core/prng.js';
import { tensorFrom, tensorsBitEqual, type FloatDtype, type FloatTensor } from '../../src/core/tensor.js';
import type { BankWriteEvent, InstallTarget } from '../../src/interventions/install-target.js';

export function randomTensor(prng: Prng, dtype: FloatDtype, shape: readonly number[]): FloatTensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = prng.nextNormal();
  return tensorFrom(dtype, v, shape);
}

export function makePayload(prng: Prng, dtype: FloatDtype = 'float32', shape: readonly number[] = [2, 3]): Payload {
  const out = {} as Record<PayloadField, FloatTensor>;
  for (const f of PAYLOAD_FIELDS) out[f] = randomTensor(prng, dtype, shape);
  return out;
}

export function makeKeys(prng: Prng): RecordKeys {
  return {
    cognitiveKey: randomTensor(prng, 'float32', [4]),
    perceptualKey: randomTensor(prng, 'float32', [4]),
    stateSignature: randomTensor(prng, 'float32', [3]),
  };
}

export function makeRecord(
  prng: Prng,
  scope: string,
  slot: number,
  timestep: number,
  options: { version?: number; dtype?: FloatDtype; shape?: readonly number[]; episode?: string } = {},
): BankRecord {
  return {
    slot,
    scope,
    sourceEpisode: options.episode ?? `${scope}/attempt-1`,
    timestep,
    version: options.version ?? 0,
    keys: makeKeys(prng),
    payload: makePayload(prng, options.dtype, options.shape),
  };
}

export function keysBitEqual(a: RecordKeys, b: RecordKeys): boolean {
  return (
    tensorsBitEqual(a.cognitiveKey, b.cognitiveKey) &&
    tensorsBitEqual(a.perceptualKey, b.perceptualKey) &&
    tensorsBitEqual(a.stateSignature, b.stateSignature)
  );
}

export function identityEqual(a: BankRecord, b: BankRecord): boolean {
  return (
    a.slot === b.slot &&
    a.scope === b.scope &&
    a.sourceEpisode === b.sourceEpisode &&
    a.timestep === b.timestep &&
    a.version === b.version
  );
}

export function toItem(r: BankRecord): RetrievedItem {
  return {
    identity: {
      slot: r.slot,
      scope: r.scope,
      sourceEpisode: r.sourceEpisode,
      timestep: r.timestep,
      version: r.version,
    },
    leaves: { ...r.payload },
  };
}

/** A minimal slot bank: per-scope records and query clock, one read hook, write events. */
export class FakeBank implements InstallTarget {
  readonly name: string;
  replaceCalls = 0;
  private readonly store = new Map<string, { records: Map<number, BankRecord>; clock: number }>();
  private hook: ReadHook = identityReadHook;
  private readonly listeners: ((e: BankWriteEvent) => void)[] = [];

  constructor(name = 'pcmb') {
    this.name = name;
  }

  private scope(scope: string): { records: Map<number, BankRecord>; clock: number } {
    let s = this.store.get(scope);
    if (!s) this.store.set(scope, (s = { records: new Map(), clock: 0 }));
    return s;
  }

  /** Loads records without events (attempt-1 state). */
  load(records: readonly BankRecord[]): void {
    for (const r of records) this.scope(r.scope).records.set(r.slot, r);
  }

  records(scope: string): readonly BankRecord[] {
    return [...this.scope(scope).records.values()].sort((a, b) => a.slot - b.slot);
  }

  replaceRecords(scope: string, records: readonly BankRecord[]): void {
    this.replaceCalls++;
    const s = this.scope(scope);
    if (records.length !== s.records.size) throw new Error('replaceRecords: count differs');
    for (const r of records) {
      const old = s.records.get(r.slot);
      if (!old || !identityEqual(old, r) || !keysBitEqual(old.keys, r.keys))
        throw new Error(`replaceRecords: slot ${r.slot} identity/keys differ`);
    }
    for (const r of records) s.records.set(r.slot, r);
  }

  clearScope(scope: string, options: { keepClock: boolean }): void {
    const s = this.scope(scope);
    s.records.clear();
    if (!options.keepClock) s.clock = 0;
  }

  clock(scope: string): number {
    return this.scope(scope).clock;
  }

  setReadHook(hook: ReadHook): void {
    this.hook = hook;
  }

  onWrite(listener: (e: BankWriteEvent) => void): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** One query: selects the given slots that exist, passes them through the hook, advances the clock. */
  query(scope: string, episode: string, slots: readonly number[], decisionStep = true): readonly RetrievedItem[] {
    const s = this.scope(scope);
    const items = slots.flatMap((slot) => {
      const r = s.records.get(slot);
      return r ? [toItem(r)] : [];
    });
    const ctx: ReadContext = {
      bank: this.name,
      scope,
      episode,
      queryIndex: s.clock,
      decisionStep,
      candidateCount: s.records.size,
    };
    const out = this.hook(items, ctx);
    s.clock++;
    return out;
  }

  private emit(kind: BankWriteEvent['kind'], scope: string, slot: number): void {
    const e: BankWriteEvent = { kind, scope, slot, queryIndex: this.scope(scope).clock };
    for (const l of this.listeners) l(e);
  }

  insert(record: BankRecord): void {
    this.scope(record.scope).records.set(record.slot, { ...record, timestep: this.clock(record.scope) });
    this.emit('insert', record.scope, record.slot);
  }

  /** Merge: slot kept, timestep ← clock, version + 1, cognitive/perceptual values and state signature overwritten. */
  merge(scope: string, slot: number, prng: Prng): void {
    const s = this.scope(scope);
    const r = s.records.get(slot);
    if (!r) throw new Error(`merge: no slot ${slot}`);
    const fresh = makeRecord(prng, scope, slot, s.clock);
    s.records.set(slot, {
      ...r,
      timestep: s.clock,
      version: r.version + 1,
      keys: { ...r.keys, stateSignature: fresh.keys.stateSignature },
      payload: {
        ...r.payload,
        cognitiveValue: fresh.payload.cognitiveValue,
        perceptualValue: fresh.payload.perceptualValue,
      },
    });
    this.emit('merge', scope, slot);
  }

  evict(scope: string, slot: number): void {
    this.scope(scope).records.delete(slot);
    this.emit('evict', scope, slot);
  }
}
