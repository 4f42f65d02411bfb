import { cloneTensor, sameShape } from '../core/tensor.js';
import type { FloatTensor } from '../core/tensor.js';
import type { ReadContext, ReadHook, RecordIdentity, RetrievedItem } from './record.js';
import { identityReadHook } from './record.js';
import { unitVector } from './cosine.js';
import { topKPacked } from './top-k.js';
import { CONSOLIDATION_MODES, averageFeatures, mostSimilarAdjacentPair } from './token-merge.js';
import type { ConsolidationMode } from './token-merge.js';
import { arrayAt, checkHeader, decodeTensor, encodeTensor, objectAt, packSnapshot, unpackSnapshot } from './tensor-codec.js';
import { assertNonNegativeInteger, assertPositiveInteger, assertString, assertTensor, bankError } from './validate.js';

export { sortedTopK, topK, topKPacked } from './top-k.js';

/**
 * MemoryVLA-style episode-local bank (instantiated twice: "perceptual" and "cognitive").
 *
 * Entries are (timestep, feature) in write order; timesteps never decrease. `reset(episode)` starts an
 * episode with an empty bank. A write that takes the bank past `capacity` consolidates once (see
 * token-merge.ts: merge the most similar adjacent pair keeping the earlier timestep, or FIFO-drop the
 * oldest), the new entry included. All features of a bank share one dtype and shape.
 *
 * `query(feature)` ranks entries by canonical cosine similarity to the feature (ties → earlier timestep,
 * then lower index) and passes the top k through the read hook as RetrievedItems:
 * identity { slot: entry index, scope: episode, sourceEpisode: episode, timestep, version: 0 },
 * leaves { feature: a copy }. Each query advances the bank's query counter; the n-th query since
 * reset has ReadContext.queryIndex n.
 */

export interface EpisodeBankConfig {
  /** ReadContext.bank of this bank's reads, e.g. "perceptual" or "cognitive". */
  bank?: string;
  capacity?: number;
  consolidation?: ConsolidationMode;
  k?: number;
}

export interface ResolvedEpisodeBankConfig {
  readonly bank: string;
  readonly capacity: number;
  readonly consolidation: ConsolidationMode;
  readonly k: number;
}

export interface EpisodeEntry {
  readonly timestep: number;
  readonly feature: FloatTensor;
}

export type EpisodeConsolidation =
  | { readonly kind: 'token-merge'; readonly index: number; readonly timestep: number; readonly similarity: number }
  | { readonly kind: 'fifo'; readonly droppedTimestep: number };

export interface EpisodeWriteResult {
  readonly size: number;
  /** What consolidation did, or null when the bank was not over capacity. */
  readonly consolidation: EpisodeConsolidation | null;
}

export interface EpisodeQueryOptions {
  /** Overrides the configured k for this query. */
  k?: number;
  decisionStep?: boolean;
  /**
   * The caller reads the returned items' leaves before its next call into the bank and never writes them: while
   * the read hook is the identity (no one else sees the items), each leaf is then the stored feature itself instead
   * of a copy. Any other hook always gets copies. Default false.
   */
  leafViews?: boolean;
}

export interface EpisodeQueryResult {
  readonly items: readonly RetrievedItem[];
  readonly ctx: ReadContext;
}

interface Stored {
  readonly timestep: number;
  readonly feature: FloatTensor;
  readonly unit: Float64Array;
  /** The frozen identity last handed out for this entry, made when it sat at `identityIndex` (or null). */
  identity: RecordIdentity | null;
  identityIndex: number;
}

const FORMAT = 'imep-episode-bank';
const VERSION = 1;

export class EpisodeBank {
  readonly config: ResolvedEpisodeBankConfig;
  private entryList: Stored[] = [];
  private episodeId: string | null = null;
  private queries = 0;
  private hook: ReadHook = identityReadHook;
  private scratch: Float64Array | null = null;
  /**
   * The entries' unit vectors back to back (entry i at i·packedDim) and their timesteps: what query scans, one
   * contiguous block instead of a pointer chase per entry (the entries' own arrays are scattered over the heap and
   * mostly out of cache by the next step). A mirror of entryList: appended by write, rebuilt after anything else.
   */
  private packedUnits = new Float64Array(0);
  private packedTimes = new Float64Array(0);
  private packedDim = 0;
  private packedCount = 0;
  private packedOk = true;

  constructor(config: EpisodeBankConfig = {}) {
    const bank = config.bank ?? 'perceptual';
    const capacity = config.capacity ?? 16;
    const consolidation = config.consolidation ?? 'token-merge';
    const k = config.k ?? 4;
    assertString(bank, 'bank');
    assertPositiveInteger(capacity, 'capacity');
    assertPositiveInteger(k, 'k');
    if (!(CONSOLIDATION_MODES as readonly string[]).includes(consolidation)) {
      throw bankError(`consolidation must be one of ${CONSOLIDATION_MODES.join(', ')}, got ${String(consolidation)}`, 'consolidation');
    }
    this.config = Object.freeze({ bank, capacity, consolidation, k });
  }

  setReadHook(hook: ReadHook): void {
    this.hook = hook;
  }

  /** Starts an episode: empties the bank and its query counter. */
  reset(episode: string): void {
    assertString(episode, 'episode');
    this.episodeId = episode;
    this.entryList = [];
    this.queries = 0;
    this.packedCount = 0;
    this.packedOk = true;
  }

  /** The current episode id, or null before the first reset. */
  get episode(): string | null {
    return this.episodeId;
  }

  get size(): number {
    return this.entryList.length;
  }

  /** Queries since the last reset. */
  get queryCount(): number {
    return this.queries;
  }

  /** Copies of the entries in order. */
  entries(): readonly EpisodeEntry[] {
    return this.entryList.map((e) => Object.freeze({ timestep: e.timestep, feature: cloneTensor(e.feature) }));
  }

  write(timestep: number, feature: FloatTensor): EpisodeWriteResult {
    this.requireEpisode('write');
    assertNonNegativeInteger(timestep, 'timestep');
    assertTensor(feature, 'feature');
    const last = this.entryList[this.entryList.length - 1];
    if (last !== undefined) {
      if (timestep < last.timestep) throw bankError(`write: timestep ${timestep} is before the last entry's ${last.timestep}`, 'timestep');
      checkSameKind(last.feature, feature, 'feature');
    }
    const copy = cloneTensor(feature);
    const unit = unitVector(copy);
    this.entryList.push({ timestep, feature: copy, unit, identity: null, identityIndex: -1 });
    if (this.packedOk && this.packedCount === this.entryList.length - 1 && (this.packedCount === 0 || this.packedDim === unit.length)) this.appendPacked(timestep, unit);
    else this.packedOk = false;
    const consolidation = this.entryList.length > this.config.capacity ? this.consolidate() : null;
    return { size: this.entryList.length, consolidation };
  }

  query(feature: FloatTensor, opts: EpisodeQueryOptions = {}): EpisodeQueryResult {
    const episode = this.requireEpisode('query');
    assertTensor(feature, 'feature');
    const k = opts.k ?? this.config.k;
    assertPositiveInteger(k, 'k');
    const first = this.entryList[0];
    if (first !== undefined && first.feature.data.length !== feature.data.length) {
      throw bankError(`query: feature has ${feature.data.length} elements, entries have ${first.feature.data.length}`, 'feature');
    }
    this.queries += 1;
    const q = unitVector(feature, this.queryUnit(feature.data.length));
    this.syncPacked();
    const ranked = topKPacked(this.packedUnits, this.packedTimes, this.packedCount, q, k);
    const views = opts.leafViews === true && this.hook === identityReadHook;
    const items: RetrievedItem[] = new Array<RetrievedItem>(ranked.length);
    for (let j = 0; j < ranked.length; j++) {
      const index = ranked[j] as number;
      const e = this.entryList[index] as Stored;
      // An entry's identity changes only when consolidation moves it to another index (the episode is fixed
      // between resets, the timestep for the entry's life), so the frozen object is made once per index.
      let identity = e.identity;
      if (identity === null || e.identityIndex !== index) {
        identity = Object.freeze({ slot: index, scope: episode, sourceEpisode: episode, timestep: e.timestep, version: 0 });
        e.identity = identity;
        e.identityIndex = index;
      }
      items[j] = { identity, leaves: { feature: views ? e.feature : cloneTensor(e.feature) } };
    }
    const ctx: ReadContext = Object.freeze({
      bank: this.config.bank,
      scope: episode,
      episode,
      queryIndex: this.queries,
      decisionStep: opts.decisionStep ?? true,
      candidateCount: this.entryList.length,
    });
    return { items: this.hook(items, ctx), ctx };
  }

  snapshot(): Uint8Array {
    const c = this.config;
    return packSnapshot({
      format: FORMAT,
      version: VERSION,
      config: { bank: c.bank, capacity: c.capacity, consolidation: c.consolidation, k: c.k },
      episode: this.episodeId,
      queryCount: this.queries,
      entries: this.entryList.map((e) => ({ timestep: e.timestep, feature: encodeTensor(e.feature) })),
    });
  }

  /** Rebuilds a bank from `snapshot()` bytes; fields given in `config` override the saved config. */
  static restore(bytes: Uint8Array, config: EpisodeBankConfig = {}): EpisodeBank {
    const root = objectAt(unpackSnapshot(bytes, 'EpisodeBank.restore'), 'snapshot');
    checkHeader(root, FORMAT, VERSION);
    const saved = objectAt(root['config'], 'config') as EpisodeBankConfig;
    const merged: EpisodeBankConfig = { ...saved };
    for (const key of ['bank', 'capacity', 'consolidation', 'k'] as const) {
      if (config[key] !== undefined) Object.assign(merged, { [key]: config[key] });
    }
    const bank = new EpisodeBank(merged);
    const episode = root['episode'];
    const queryCount = root['queryCount'];
    if (episode !== null) assertString(episode, 'episode');
    assertNonNegativeInteger(queryCount, 'queryCount');
    const entries = arrayAt(root['entries'], 'entries');
    if (entries.length > bank.config.capacity) throw bankError(`snapshot: ${entries.length} entries exceed capacity ${bank.config.capacity}`, 'entries');
    if (episode === null && (entries.length > 0 || queryCount > 0)) throw bankError('snapshot: entries or queries without an episode', 'episode');
    bank.episodeId = episode;
    bank.queries = queryCount;
    bank.packedOk = false;
    let prev: Stored | undefined;
    entries.forEach((v, i) => {
      const o = objectAt(v, `entries[${i}]`);
      const timestep = o['timestep'];
      assertNonNegativeInteger(timestep, `entries[${i}].timestep`);
      const feature = decodeTensor(o['feature'], `entries[${i}].feature`);
      if (prev !== undefined) {
        if (timestep < prev.timestep) throw bankError(`snapshot: entries[${i}].timestep decreases`, `entries[${i}].timestep`);
        checkSameKind(prev.feature, feature, `entries[${i}].feature`);
      }
      prev = { timestep, feature, unit: unitVector(feature), identity: null, identityIndex: -1 };
      bank.entryList.push(prev);
    });
    return bank;
  }

  private consolidate(): EpisodeConsolidation {
    this.packedOk = false;
    const list = this.entryList;
    if (this.config.consolidation === 'fifo') {
      const dropped = list.shift() as Stored;
      return { kind: 'fifo', droppedTimestep: dropped.timestep };
    }
    const pair = mostSimilarAdjacentPair(list.map((e) => e.unit));
    if (pair === undefined) {
      // Only reachable with capacity 0, which the constructor refuses.
      throw bankError('consolidate: fewer than two entries');
    }
    const a = list[pair.index] as Stored;
    const b = list[pair.index + 1] as Stored;
    const feature = averageFeatures(a.feature, b.feature);
    list.splice(pair.index, 2, { timestep: a.timestep, feature, unit: unitVector(feature), identity: null, identityIndex: -1 });
    return { kind: 'token-merge', index: pair.index, timestep: a.timestep, similarity: pair.similarity };
  }

  /** Appends one entry to the packed mirror (growing it by doubling). */
  private appendPacked(timestep: number, unit: Float64Array): void {
    const d = unit.length;
    const i = this.packedCount;
    if (i === 0) this.packedDim = d;
    if ((i + 1) * d > this.packedUnits.length || i + 1 > this.packedTimes.length) {
      const cap = Math.max(16, 2 * (i + 1));
      const units = new Float64Array(cap * d);
      units.set(this.packedUnits.subarray(0, i * d));
      const times = new Float64Array(cap);
      times.set(this.packedTimes.subarray(0, i));
      this.packedUnits = units;
      this.packedTimes = times;
    }
    this.packedUnits.set(unit, i * d);
    this.packedTimes[i] = timestep;
    this.packedCount = i + 1;
  }

  /** Makes the packed mirror equal entryList again after a change other than an append. */
  private syncPacked(): void {
    if (this.packedOk && this.packedCount === this.entryList.length) return;
    this.packedCount = 0;
    this.packedOk = true;
    for (const e of this.entryList) this.appendPacked(e.timestep, e.unit);
  }

  /** Scratch for the query's unit vector (never escapes `query`). */
  private queryUnit(n: number): Float64Array {
    if (this.scratch === null || this.scratch.length !== n) this.scratch = new Float64Array(n);
    return this.scratch;
  }

  private requireEpisode(what: string): string {
    if (this.episodeId === null) throw bankError(`${what}: call reset(episode) before using the ${this.config.bank} bank`, 'episode');
    return this.episodeId;
  }
}

function checkSameKind(have: FloatTensor, got: FloatTensor, field: string): void {
  if (have.dtype !== got.dtype || !sameShape(have.shape, got.shape)) {
    throw bankError(`${field}: ${got.dtype}[${got.shape.join(',')}] differs from the bank's ${have.dtype}[${have.shape.join(',')}]`, field);
  }
}
