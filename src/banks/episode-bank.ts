import { cloneTensor, sameShape } from '../core/index.js';
import type { FloatTensor } from '../core/index.js';
import type { ReadContext, ReadHook, RecordIdentity, RetrievedItem } from './record.js';
import { identityReadHook } from './record.js';
import { unitVector } from './cosine.js';
import { sortedPacked, topKPackedInto } from './top-k.js';
import { CONSOLIDATION_MODES, averageFeatures, mostSimilarAdjacentPair } from './token-merge.js';
import type { ConsolidationMode } from './token-merge.js';
import {
  arrayAt,
  checkHeader,
  decodeTensor,
  encodeTensor,
  objectAt,
  packSnapshot,
  unpackSnapshot,
} from './tensor-codec.js';
import { TensorChecker, assertNonNegativeInteger, assertPositiveInteger, assertString, bankError } from './validate.js';

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

/** An entry. Mutable only so that reset can hand it back to the pool (see `pool`) and write can fill it again. */
interface Stored {
  timestep: number;
  readonly feature: FloatTensor;
  readonly unit: Float64Array;
  /** The frozen identity last handed out for this entry, made when it sat at `identityIndex` (or null). */
  identity: RecordIdentity | null;
  identityIndex: number;
}

const PLACEHOLDER_IDENTITY: RecordIdentity = Object.freeze({
  slot: 0,
  scope: '',
  sourceEpisode: '',
  timestep: 0,
  version: 0,
});
const PLACEHOLDER_FEATURE: FloatTensor = Object.freeze({
  dtype: 'float32',
  shape: Object.freeze([0]),
  data: new Float32Array(0),
}) as FloatTensor;

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
  /**
   * Entries of past episodes, handed back by reset: write refills one of the same dtype and shape instead of
   * allocating a feature, a unit vector and an entry (which would live for the episode and so reach the old
   * generation of the heap). An entry's arrays never leave the bank except as `leafViews` leaves, which the caller
   * has read before its next call into the bank (reset included), so a pooled entry is no one else's.
   */
  private pool: Stored[] = [];
  /** `leafViews` reads: reused item lists (by length) and items, refilled by each query (same contract). */
  private readonly viewLists: RetrievedItem[][] = [];
  private readonly viewItems: { identity: RecordIdentity; leaves: { feature: FloatTensor } }[] = [];
  /** The query's ranking (topKPackedInto's lists, grown to k when a query asks for more). */
  private rankedIdx: number[] = [];
  private rankedSims = new Float64Array(0);
  private readonly writeCheck: TensorChecker = new TensorChecker();
  private readonly queryCheck: TensorChecker = new TensorChecker();

  constructor(config: EpisodeBankConfig = {}) {
    const bank = config.bank ?? 'perceptual';
    const capacity = config.capacity ?? 16;
    const consolidation = config.consolidation ?? 'token-merge';
    const k = config.k ?? 4;
    assertString(bank, 'bank');
    assertPositiveInteger(capacity, 'capacity');
    assertPositiveInteger(k, 'k');
    if (!(CONSOLIDATION_MODES as readonly string[]).includes(consolidation)) {
      throw bankError(
        `consolidation must be one of ${CONSOLIDATION_MODES.join(', ')}, got ${String(consolidation)}`,
        'consolidation',
      );
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
    // At most capacity + 1 pooled entries: as many as one episode can hold (one write past capacity consolidates).
    for (const e of this.entryList) {
      if (this.pool.length > this.config.capacity) break;
      this.pool.push(e);
    }
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
    this.writeCheck.check(feature, 'feature');
    const last = this.entryList[this.entryList.length - 1];
    if (last !== undefined) {
      if (timestep < last.timestep)
        throw bankError(`write: timestep ${timestep} is before the last entry's ${last.timestep}`, 'timestep');
      checkSameKind(last.feature, feature, 'feature');
    }
    const stored = this.fromPool(timestep, feature) ?? this.newStored(timestep, cloneTensor(feature));
    const unit = stored.unit;
    this.entryList.push(stored);
    if (
      this.packedOk &&
      this.packedCount === this.entryList.length - 1 &&
      (this.packedCount === 0 || this.packedDim === unit.length)
    )
      this.appendPacked(timestep, unit);
    else this.packedOk = false;
    const consolidation = this.entryList.length > this.config.capacity ? this.consolidate() : null;
    return { size: this.entryList.length, consolidation };
  }

  query(feature: FloatTensor, opts: EpisodeQueryOptions = {}): EpisodeQueryResult {
    const episode = this.requireEpisode('query');
    this.queryCheck.check(feature, 'feature');
    const k = opts.k ?? this.config.k;
    assertPositiveInteger(k, 'k');
    const first = this.entryList[0];
    if (first !== undefined && first.feature.data.length !== feature.data.length) {
      throw bankError(
        `query: feature has ${feature.data.length} elements, entries have ${first.feature.data.length}`,
        'feature',
      );
    }
    this.queries += 1;
    const q = unitVector(feature, this.queryUnit(feature.data.length));
    this.syncPacked();
    if (this.rankedSims.length < k) {
      this.rankedSims = new Float64Array(k);
      this.rankedIdx = new Array<number>(k).fill(0);
    }
    let ranked = this.rankedIdx;
    let count = topKPackedInto(this.packedUnits, this.packedTimes, this.packedCount, q, k, ranked, this.rankedSims);
    if (count < 0) {
      ranked = sortedPacked(this.packedUnits, this.packedTimes, this.packedCount, q, k);
      count = ranked.length;
    }
    const views = opts.leafViews === true && this.hook === identityReadHook;
    const items: RetrievedItem[] = views ? this.viewList(count) : new Array<RetrievedItem>(count);
    for (let j = 0; j < count; j++) {
      const index = ranked[j] as number;
      const e = this.entryList[index] as Stored;
      // An entry's identity changes only when consolidation moves it to another index (the episode is fixed
      // between resets, the timestep for the entry's life), so the frozen object is made once per index.
      let identity = e.identity;
      if (identity === null || e.identityIndex !== index) {
        identity = Object.freeze({
          slot: index,
          scope: episode,
          sourceEpisode: episode,
          timestep: e.timestep,
          version: 0,
        });
        e.identity = identity;
        e.identityIndex = index;
      }
      if (views) {
        const item = items[j] as { identity: RecordIdentity; leaves: { feature: FloatTensor } };
        item.identity = identity;
        item.leaves.feature = e.feature;
      } else items[j] = { identity, leaves: { feature: cloneTensor(e.feature) } };
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
    if (entries.length > bank.config.capacity)
      throw bankError(`snapshot: ${entries.length} entries exceed capacity ${bank.config.capacity}`, 'entries');
    if (episode === null && (entries.length > 0 || queryCount > 0))
      throw bankError('snapshot: entries or queries without an episode', 'episode');
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
        if (timestep < prev.timestep)
          throw bankError(`snapshot: entries[${i}].timestep decreases`, `entries[${i}].timestep`);
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
    list.splice(pair.index, 2, {
      timestep: a.timestep,
      feature,
      unit: unitVector(feature),
      identity: null,
      identityIndex: -1,
    });
    return { kind: 'token-merge', index: pair.index, timestep: a.timestep, similarity: pair.similarity };
  }

  /** A pooled entry refilled with (timestep, a copy of feature), or undefined when none of its dtype and shape is free. */
  private fromPool(timestep: number, feature: FloatTensor): Stored | undefined {
    const e = this.pool.pop();
    if (e === undefined) return undefined;
    if (e.feature.dtype !== feature.dtype || !sameShape(e.feature.shape, feature.shape)) {
      this.pool = []; // another kind of feature from now on: the pool's entries cannot serve it
      return undefined;
    }
    (e.feature.data as Float32Array).set(feature.data as Float32Array); // same dtype: the bits as they are
    unitVector(e.feature, e.unit);
    e.timestep = timestep;
    e.identity = null;
    e.identityIndex = -1;
    return e;
  }

  private newStored(timestep: number, feature: FloatTensor): Stored {
    return { timestep, feature, unit: unitVector(feature), identity: null, identityIndex: -1 };
  }

  /** The reused list of n view items (see viewLists). */
  private viewList(n: number): RetrievedItem[] {
    let list = this.viewLists[n];
    if (list === undefined) {
      while (this.viewItems.length < n)
        this.viewItems.push({ identity: PLACEHOLDER_IDENTITY, leaves: { feature: PLACEHOLDER_FEATURE } });
      this.viewLists[n] = list = this.viewItems.slice(0, n);
    }
    return list;
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
    if (this.episodeId === null)
      throw bankError(`${what}: call reset(episode) before using the ${this.config.bank} bank`, 'episode');
    return this.episodeId;
  }
}

function checkSameKind(have: FloatTensor, got: FloatTensor, field: string): void {
  if (have.dtype !== got.dtype || !sameShape(have.shape, got.shape)) {
    throw bankError(
      `${field}: ${got.dtype}[${got.shape.join(',')}] differs from the bank's ${have.dtype}[${have.shape.join(',')}]`,
      field,
    );
  }
}
