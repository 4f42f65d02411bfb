import { cloneTensor, tensorsBitEqual } from '../core/index.js';
import type { FloatTensor } from '../core/index.js';
import type { BankRecord, Payload, ReadContext, ReadHook, RecordKeys, RetrievedItem } from './record.js';
import { identityReadHook } from './record.js';
import { prepareKeys, resolveSelectorConfig, selectPrepared } from './selector.js';
import type { PreparedKeys, Selection, SelectorConfig, SelectorWeights } from './selector.js';
import {
  ScopeState,
  copyKeys,
  copyPayloadsPacked,
  copyPayload,
  copyRecord,
  findEvictionVictim,
  findMergeTarget,
  identityOf,
} from './structured-scope.js';
import { BANK_FORMAT, SCOPE_FORMAT, SNAPSHOT_VERSION, decodeScope, encodeScope } from './structured-snapshot.js';
import { arrayAt, checkHeader, objectAt, packSnapshot, unpackSnapshot } from './tensor-codec.js';
import {
  KEY_FIELDS,
  assertFiniteNumber,
  assertPayload,
  assertPositiveInteger,
  assertSelectableKeys,
  assertString,
  bankError,
} from './validate.js';

/**
 * The structured persistent bank (PCMB-style, scope-keyed).
 *
 * Each scope holds up to `capacity` slots and a query clock. The clock starts at 0 ("no query yet");
 * every `query` advances it by one and the query's ReadContext.queryIndex is the advanced value, so the
 * n-th query of a scope has queryIndex n and, right after it, clock(scope) === n. Writes stamp the
 * record's timestep with the current clock (the index of the scope's latest query; 0 before any).
 *
 * Write rules (`write`):
 *  - MERGE when some stored record's state-signature cosine with the candidate's is ≥ mergeThreshold
 *    (the most similar one; equal similarities → earlier (timestep, slot)). The merged record keeps
 *    slot, scope, sourceEpisode, cognitiveKey and perceptualKey and the six payload fields other than
 *    MERGE_OVERWRITTEN_FIELDS, byte for byte; it takes the candidate's cognitiveValue, perceptualValue
 *    and stateSignature key; timestep := current clock; version := version + 1.
 *  - otherwise INSERT into the lowest free slot with version 0 and timestep := current clock.
 *  - when no slot is free, EVICT the record with the oldest timestep (equal timesteps → lowest slot)
 *    and insert into its slot; listeners get the 'evict' event, then the 'insert' event.
 * Only the state signature decides merges; payloads and versions never influence a write decision.
 *
 * The bank never hands out its own tensor buffers except through `selected` (its stored, frozen
 * records: treat their tensors as read-only). Read-hook leaves and `records()` are copies.
 */

/** Keys a merge overwrites (besides the payload fields in MERGE_OVERWRITTEN_FIELDS). */
export const MERGE_OVERWRITTEN_KEYS = ['stateSignature'] as const satisfies readonly (keyof RecordKeys)[];

export const DEFAULT_CAPACITY = 16;
export const DEFAULT_MERGE_THRESHOLD = 0.9;

export interface StructuredBankConfig {
  capacity?: number;
  k?: number;
  gate?: number;
  weights?: SelectorWeights;
  mergeThreshold?: number;
}

export interface ResolvedStructuredBankConfig {
  readonly capacity: number;
  readonly mergeThreshold: number;
  readonly selector: SelectorConfig;
}

export interface StructuredQuery {
  readonly cognitiveKey: FloatTensor;
  readonly perceptualKey: FloatTensor;
  readonly stateSignature: FloatTensor;
}

export interface QueryOptions {
  episode: string;
  /** Defaults to true (every policy query is a decision step unless told otherwise). */
  decisionStep?: boolean;
}

export interface QueryResult {
  /** What the read hook returned. */
  readonly items: readonly RetrievedItem[];
  readonly ctx: ReadContext;
  /** The records the selector chose (before the hook), best first; the bank's own frozen records. */
  readonly selected: readonly BankRecord[];
  /** The selector's verdict: accepted, or why not ('no-candidates' | 'below-gate'), and the scores. */
  readonly selection: Selection;
}

export interface WriteCandidate {
  readonly keys: RecordKeys;
  readonly payload: Payload;
  readonly sourceEpisode: string;
}

export interface WriteEvent {
  readonly kind: 'insert' | 'merge' | 'evict';
  readonly scope: string;
  readonly slot: number;
  /** The scope's clock at the write (the index of its latest query). */
  readonly queryIndex: number;
}

export type WriteListener = (event: WriteEvent) => void;

export const PCMB_BANK_NAME = 'pcmb';

export class StructuredBank {
  readonly config: ResolvedStructuredBankConfig;
  private readonly state = new Map<string, ScopeState>();
  private readonly listeners: WriteListener[] = [];
  private hook: ReadHook = identityReadHook;

  constructor(config: StructuredBankConfig = {}) {
    const capacity = config.capacity ?? DEFAULT_CAPACITY;
    const mergeThreshold = config.mergeThreshold ?? DEFAULT_MERGE_THRESHOLD;
    assertPositiveInteger(capacity, 'capacity');
    assertFiniteNumber(mergeThreshold, 'mergeThreshold');
    const selector = resolveSelectorConfig({ k: config.k, gate: config.gate, weights: config.weights });
    this.config = Object.freeze({ capacity, mergeThreshold, selector });
  }

  /** Installs the read hook (the identity hook by default). */
  setReadHook(hook: ReadHook): void {
    this.hook = hook;
  }

  /** Registers a write listener; returns a function that removes it. */
  onWrite(listener: WriteListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  query(scope: string, q: StructuredQuery, opts: QueryOptions): QueryResult {
    assertString(scope, 'scope');
    assertString(opts.episode, 'episode');
    assertSelectableKeys(q, 'query');
    const st = this.ensure(scope);
    checkDims(st, q, 'query');
    const prepared = prepareKeys(q);
    st.clock += 1;
    const selection = selectPrepared(prepared, st.candidates(), this.config.selector);
    const stored = st.stored();
    const selected = selection.picks.map((p) => (stored[p.index] as { record: BankRecord }).record);
    const leaves = copyPayloadsPacked(selected.map((r) => r.payload));
    const items: RetrievedItem[] = selected.map((r, i) => ({
      identity: identityOf(r),
      leaves: leaves[i] as Readonly<Record<string, FloatTensor>>,
    }));
    const ctx: ReadContext = Object.freeze({
      bank: PCMB_BANK_NAME,
      scope,
      episode: opts.episode,
      queryIndex: st.clock,
      decisionStep: opts.decisionStep ?? true,
      candidateCount: stored.length,
    });
    return { items: this.hook(items, ctx), ctx, selected, selection };
  }

  write(scope: string, candidate: WriteCandidate): WriteEvent {
    assertString(scope, 'scope');
    assertString(candidate.sourceEpisode, 'sourceEpisode');
    assertSelectableKeys(candidate.keys, 'keys');
    assertPayload(candidate.payload, 'payload');
    const st = this.ensure(scope);
    checkDims(st, candidate.keys, 'keys');
    const prepared = prepareKeys(candidate.keys);
    const target = findMergeTarget(st, prepared.signature, this.config.mergeThreshold);
    if (target !== undefined) {
      const old = target.record;
      const keys: RecordKeys = Object.freeze({
        cognitiveKey: old.keys.cognitiveKey,
        perceptualKey: old.keys.perceptualKey,
        stateSignature: cloneTensor(candidate.keys.stateSignature),
      });
      const payload: Payload = Object.freeze({
        ...old.payload,
        cognitiveValue: cloneTensor(candidate.payload.cognitiveValue),
        perceptualValue: cloneTensor(candidate.payload.perceptualValue),
      });
      const merged: BankRecord = Object.freeze({
        ...identityOf(old),
        timestep: st.clock,
        version: old.version + 1,
        keys,
        payload,
      });
      const mergedPrepared: PreparedKeys = {
        cognitive: target.candidate.prepared.cognitive,
        perceptual: target.candidate.prepared.perceptual,
        signature: prepared.signature,
      };
      st.put(old.slot, merged, mergedPrepared);
      return this.emit({ kind: 'merge', scope, slot: old.slot, queryIndex: st.clock });
    }
    let slot = st.lowestFreeSlot();
    if (slot === undefined) {
      const victim = findEvictionVictim(st);
      if (victim === undefined) throw bankError(`scope ${scope}: full bank without an eviction victim`); // capacity ≥ 1
      slot = victim.record.slot;
      this.emit({ kind: 'evict', scope, slot, queryIndex: st.clock });
    }
    const record: BankRecord = Object.freeze({
      slot,
      scope,
      sourceEpisode: candidate.sourceEpisode,
      timestep: st.clock,
      version: 0,
      keys: copyKeys(candidate.keys),
      payload: copyPayload(candidate.payload),
    });
    st.put(slot, record, prepared);
    return this.emit({ kind: 'insert', scope, slot, queryIndex: st.clock });
  }

  /** Deep copies of the scope's records, in slot order (empty for an unknown scope). */
  records(scope: string): readonly BankRecord[] {
    return (this.state.get(scope)?.stored() ?? []).map((s) => copyRecord(s.record));
  }

  /** The scope's query clock (0 for a scope never queried). */
  clock(scope: string): number {
    return this.state.get(scope)?.clock ?? 0;
  }

  /** Scopes with state (records or a clock), sorted by code unit. */
  scopes(): readonly string[] {
    return [...this.state.keys()].sort(compareCodeUnits);
  }

  /**
   * Removes the scope's records. With keepClock the scope's query clock survives (the N "clear"
   * variant: timesteps keep counting); without it the scope is forgotten entirely (clock back to 0).
   */
  clearScope(scope: string, opts: { keepClock: boolean }): void {
    const st = this.state.get(scope);
    if (st === undefined) return;
    if (opts.keepClock) st.clearRecords();
    else this.state.delete(scope);
  }

  /** Forgets every scope (records and clocks). Hook and listeners stay installed. */
  clearAll(): void {
    this.state.clear();
  }

  /**
   * Installation entry point for interventions: replaces the payloads of the scope's records.
   * `records` must match the stored records one for one by slot, with identical identity
   * (slot, scope, sourceEpisode, timestep, version) and byte-identical keys (dtype, shape and bytes);
   * otherwise ImepError('E_BANK_INVALID') naming the slot and the field, and nothing is changed.
   * Payload tensors are copied in; their dtype and shape may differ from the stored ones.
   */
  replaceRecords(scope: string, records: readonly BankRecord[]): void {
    assertString(scope, 'scope');
    const st = this.state.get(scope);
    const stored = st?.stored() ?? [];
    if (records.length !== stored.length) {
      throw bankError(
        `replaceRecords: scope ${scope} holds ${stored.length} records, got ${records.length}`,
        'records',
      );
    }
    const seen = new Set<number>();
    const plan: { slot: number; old: BankRecord; prepared: PreparedKeys; payload: Payload }[] = [];
    for (const r of records) {
      const slot = r.slot;
      const cur = st !== undefined && Number.isInteger(slot) ? st.at(slot) : undefined;
      if (cur === undefined)
        throw bankError(
          `replaceRecords: slot ${String(slot)}: no record at this slot in scope ${scope}`,
          `records[slot=${String(slot)}].slot`,
        );
      if (seen.has(slot)) throw bankError(`replaceRecords: slot ${slot}: given twice`, `records[slot=${slot}].slot`);
      seen.add(slot);
      const old = cur.record;
      for (const f of ['scope', 'sourceEpisode', 'timestep', 'version'] as const) {
        if (r[f] !== old[f]) {
          throw bankError(
            `replaceRecords: slot ${slot}: ${f} differs (bank ${String(old[f])}, given ${String(r[f])})`,
            `records[slot=${slot}].${f}`,
          );
        }
      }
      for (const k of KEY_FIELDS) {
        const given: unknown = r.keys?.[k];
        if (given === undefined || !tensorsBitEqual(given as FloatTensor, old.keys[k])) {
          throw bankError(
            `replaceRecords: slot ${slot}: keys.${k} is not byte-identical to the stored key`,
            `records[slot=${slot}].keys.${k}`,
          );
        }
      }
      assertPayload(r.payload, `records[slot=${slot}].payload`);
      plan.push({ slot, old, prepared: cur.candidate.prepared, payload: r.payload });
    }
    if (st === undefined) return;
    for (const p of plan) st.put(p.slot, Object.freeze({ ...p.old, payload: copyPayload(p.payload) }), p.prepared);
  }

  /** The whole bank (config, every scope's clock and records) as msgpack bytes; see structured-snapshot.ts. */
  snapshot(): Uint8Array {
    const c = this.config;
    return packSnapshot({
      format: BANK_FORMAT,
      version: SNAPSHOT_VERSION,
      config: {
        capacity: c.capacity,
        k: c.selector.k,
        gate: c.selector.gate,
        weights: { cognitive: c.selector.weights.cognitive, perceptual: c.selector.weights.perceptual },
        mergeThreshold: c.mergeThreshold,
      },
      scopes: this.scopes().map((s) => this.encode(s)),
    });
  }

  /**
   * Rebuilds a bank from `snapshot()` bytes. The snapshot's config is used, with any field given in
   * `config` taking precedence. Hook and listeners are not part of a snapshot.
   */
  static restore(bytes: Uint8Array, config: StructuredBankConfig = {}): StructuredBank {
    const root = objectAt(unpackSnapshot(bytes, 'StructuredBank.restore'), 'snapshot');
    checkHeader(root, BANK_FORMAT, SNAPSHOT_VERSION);
    const saved = objectAt(root['config'], 'config') as StructuredBankConfig;
    const bank = new StructuredBank({ ...saved, ...definedOnly(config) });
    const names = new Set<string>();
    arrayAt(root['scopes'], 'scopes').forEach((v, i) => {
      const decoded = decodeScope(v, `scopes[${i}]`, bank.config.capacity);
      if (names.has(decoded.scope))
        throw bankError(`snapshot: scope ${decoded.scope} appears twice`, `scopes[${i}].scope`);
      names.add(decoded.scope);
      bank.install(decoded.scope, decoded.clock, decoded.records, `scopes[${i}]`);
    });
    return bank;
  }

  /** One scope (clock and records) as msgpack bytes, e.g. to keep a donor scope. */
  snapshotScope(scope: string): Uint8Array {
    assertString(scope, 'scope');
    if (!this.state.has(scope)) throw bankError(`snapshotScope: unknown scope ${scope}`, 'scope');
    return packSnapshot({ format: SCOPE_FORMAT, version: SNAPSHOT_VERSION, scope: this.encode(scope) });
  }

  /** Installs a `snapshotScope` snapshot, replacing that scope's records and clock. Returns the scope name. */
  restoreScope(bytes: Uint8Array): string {
    const root = objectAt(unpackSnapshot(bytes, 'restoreScope'), 'snapshot');
    checkHeader(root, SCOPE_FORMAT, SNAPSHOT_VERSION);
    const decoded = decodeScope(root['scope'], 'scope', this.config.capacity);
    this.install(decoded.scope, decoded.clock, decoded.records, 'scope');
    return decoded.scope;
  }

  private encode(scope: string): ReturnType<typeof encodeScope> {
    const st = this.state.get(scope) as ScopeState;
    return encodeScope(
      scope,
      st.clock,
      st.stored().map((s) => s.record),
    );
  }

  private install(scope: string, clock: number, records: readonly BankRecord[], field: string): void {
    const st = new ScopeState(scope, this.config.capacity, clock);
    records.forEach((r, i) => {
      checkDims(st, r.keys, `${field}.records[${i}].keys`);
      st.put(r.slot, r, prepareKeys(r.keys));
    });
    this.state.set(scope, st);
  }

  private ensure(scope: string): ScopeState {
    let st = this.state.get(scope);
    if (st === undefined) {
      st = new ScopeState(scope, this.config.capacity);
      this.state.set(scope, st);
    }
    return st;
  }

  private emit(event: WriteEvent): WriteEvent {
    const e = Object.freeze(event);
    for (const l of [...this.listeners]) l(e);
    return e;
  }
}

function checkDims(st: ScopeState, keys: RecordKeys, field: string): void {
  const dims = st.keyDims();
  if (dims === null) return;
  const pairs = [
    ['cognitiveKey', keys.cognitiveKey.data.length, dims.cognitive],
    ['perceptualKey', keys.perceptualKey.data.length, dims.perceptual],
    ['stateSignature', keys.stateSignature.data.length, dims.signature],
  ] as const;
  for (const [name, got, want] of pairs) {
    if (got !== want)
      throw bankError(
        `scope ${st.scope}: ${field}.${name} has ${got} elements, the scope's keys have ${want}`,
        `${field}.${name}`,
      );
  }
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function definedOnly(c: StructuredBankConfig): StructuredBankConfig {
  const out: StructuredBankConfig = {};
  if (c.capacity !== undefined) out.capacity = c.capacity;
  if (c.k !== undefined) out.k = c.k;
  if (c.gate !== undefined) out.gate = c.gate;
  if (c.weights !== undefined) out.weights = c.weights;
  if (c.mergeThreshold !== undefined) out.mergeThreshold = c.mergeThreshold;
  return out;
}
