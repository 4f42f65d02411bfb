/**
 * Substitution traces. A TraceRecorder wraps a condition's read hook, sees both what the bank selected
 * and what the reader received, listens to the bank's write events, and emits one TraceEntry per read.
 *
 * A selected record is an UNMODIFIED SUBSTITUTED record when
 *   mode 'installed': the read is after the scope's registered point, the record's (slot, timestep,
 *     version) equals that slot's tuple at the first query after the point (q0, snapshotted from the
 *     bank at that read), and the slot has not been stored into (insert/merge) or evicted since the point;
 *   mode 'per-read': the read is after the point and the reader received this record with a changed
 *     content digest (the operator substitutes at every read, so there is no survival to track);
 *   mode 'read-swap' (S/T at read time, read-swap.ts): the read is at or after the episode's first decision
 *     query, the record was written before it, and the reader received the record (same identity) — the donor's
 *     payload, which may equal the recipient's bit for bit (a same-fact donor);
 *   mode 'none' (A, C, N, O): never.
 * Write events are applied in the order the bank emits them; a write between the point and q0 also marks
 * its slot (conservative).
 */
import type { ReadHook, RetrievedItem } from '../banks/index.js';
import { DIGEST_CHARS, itemDigest, readDigest, selectedItemDigest } from './digest.js';
import type { BankWriteEvent, InstallTarget } from './install-target.js';
import { EpisodePoints } from './read-swap.js';

export type SubstitutionMode = 'installed' | 'per-read' | 'read-swap' | 'none';

export interface SelectedRecordTrace {
  readonly slot: number;
  readonly timestep: number;
  readonly version: number;
  /** Digest of the item as the bank selected it. */
  readonly before: string;
  /** Digest of the item the reader received at the same position, or null when it received no such item. */
  readonly after: string | null;
  readonly unmodifiedSubstituted: boolean;
}

export interface TraceEntry {
  readonly bank: string;
  readonly scope: string;
  readonly episode: string;
  readonly queryIndex: number;
  readonly decisionStep: boolean;
  readonly candidateCount: number;
  /** True when the read happened after the scope's registered point. */
  readonly afterPoint: boolean;
  /** What the bank selected (pre-hook), in selection order. */
  readonly selected: readonly SelectedRecordTrace[];
  /** How many items the reader received. */
  readonly returnedCount: number;
  readonly readBefore: string;
  readonly readAfter: string;
}

export interface TraceRecorderOptions {
  readonly mode: SubstitutionMode;
  /** When given, each entry goes here and nothing is kept in memory (e.g. a TraceWriter). */
  readonly sink?: (entry: TraceEntry) => void;
  readonly digestChars?: number;
}

interface ScopeState {
  marked: boolean;
  baseline: Map<number, readonly [number, number]> | null;
  dirty: Set<number>;
}

function sameIdentity(a: RetrievedItem, b: RetrievedItem): boolean {
  return (
    a.identity.slot === b.identity.slot &&
    a.identity.timestep === b.identity.timestep &&
    a.identity.version === b.identity.version
  );
}

export class TraceRecorder {
  private readonly source: Pick<InstallTarget, 'records' | 'onWrite'>;
  private readonly options: TraceRecorderOptions;
  private readonly scopes = new Map<string, ScopeState>();
  private readonly kept: TraceEntry[] = [];
  private readonly chars: number;
  /** 'read-swap': each episode's first decision query. */
  private readonly decisionPoints = new EpisodePoints();

  constructor(source: Pick<InstallTarget, 'records' | 'onWrite'>, options: TraceRecorderOptions) {
    this.source = source;
    this.options = options;
    this.chars = options.digestChars ?? DIGEST_CHARS;
    source.onWrite((e) => this.onWrite(e));
  }

  /** The registered point for `scope` (call it at the same point in every condition). */
  markPoint(scope: string): void {
    this.scopes.set(scope, { marked: true, baseline: null, dirty: new Set() });
  }

  /** Wraps a condition's hook; install the result with `bank.setReadHook`. */
  wrap(hook: ReadHook): ReadHook {
    return (items, ctx) => {
      const out = hook(items, ctx);
      this.record(items, out, ctx);
      return out;
    };
  }

  /** Entries kept in memory (empty when a sink was given). */
  entries(): readonly TraceEntry[] {
    return this.kept;
  }

  private onWrite(e: BankWriteEvent): void {
    const st = this.scopes.get(e.scope);
    if (st?.marked) st.dirty.add(e.slot);
  }

  private record(
    input: readonly RetrievedItem[],
    output: readonly RetrievedItem[],
    ctx: Parameters<ReadHook>[1],
  ): void {
    const st = this.scopes.get(ctx.scope);
    const afterPoint = st?.marked === true;
    if (st && afterPoint && st.baseline === null && this.options.mode === 'installed') {
      st.baseline = new Map(this.source.records(ctx.scope).map((r) => [r.slot, [r.timestep, r.version] as const]));
    }
    const c = this.chars;
    // Plain loops (no callback per item): this runs on every read of every bank.
    const n = input.length;
    const m = output.length;
    const aligned = m === n;
    const before: string[] = [];
    for (let i = 0; i < n; i++) before.push(selectedItemDigest(input[i] as RetrievedItem, c));
    const afterAll: string[] = [];
    for (let i = 0; i < m; i++) {
      const it = output[i] as RetrievedItem;
      afterAll.push(aligned && it === input[i] ? (before[i] as string) : itemDigest(it, c));
    }
    const mode = this.options.mode;
    const swapPoint = mode === 'read-swap' ? this.decisionPoints.at(ctx) : null;
    const selected: SelectedRecordTrace[] = [];
    for (let i = 0; i < n; i++) {
      const it = input[i] as RetrievedItem;
      const o = aligned ? output[i] : undefined;
      const after = o !== undefined && sameIdentity(o, it) ? (afterAll[i] as string) : null;
      const b = before[i] as string;
      let unmodifiedSubstituted = false;
      if (afterPoint && st) {
        if (mode === 'installed') {
          const t = st.baseline?.get(it.identity.slot);
          unmodifiedSubstituted =
            t !== undefined &&
            t[0] === it.identity.timestep &&
            t[1] === it.identity.version &&
            !st.dirty.has(it.identity.slot);
        } else if (mode === 'per-read') {
          unmodifiedSubstituted = after !== null && after !== b;
        } else if (mode === 'read-swap') {
          unmodifiedSubstituted = after !== null && swapPoint !== null && it.identity.timestep < swapPoint;
        }
      }
      selected.push({
        slot: it.identity.slot,
        timestep: it.identity.timestep,
        version: it.identity.version,
        before: b,
        after,
        unmodifiedSubstituted,
      });
    }
    const readBefore = readDigest(before, c);
    // The reader's items digest as the selection's (same strings, same order) on every read a hook passes
    // through unchanged: the read digest is then the same string, so it is hashed once.
    let sameDigests = afterAll.length === before.length;
    for (let i = 0; sameDigests && i < before.length; i++) sameDigests = afterAll[i] === before[i];
    const entry: TraceEntry = {
      bank: ctx.bank,
      scope: ctx.scope,
      episode: ctx.episode,
      queryIndex: ctx.queryIndex,
      decisionStep: ctx.decisionStep,
      candidateCount: ctx.candidateCount,
      afterPoint,
      selected,
      returnedCount: output.length,
      readBefore,
      readAfter: sameDigests ? readBefore : readDigest(afterAll, c),
    };
    if (this.options.sink) this.options.sink(entry);
    else this.kept.push(entry);
  }
}
