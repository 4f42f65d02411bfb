/**
 * Text-memory records from chain episodes.
 *
 * Every write and distractor episode i of chain c writes one record into that chain's TextMemory:
 *   id `<c>/e<i>`, chainId c, episode `e<i>`, fact { object, drawer: <drawer name> },
 *   revision = how many earlier episodes of c wrote the same object, written at memory time i,
 * and carries an event feature (embeddings.ts) keyed by the record id. Records are plain immutable data
 * (`ChainRecordSet`); each decision condition builds its own TextMemory from them (`chainMemory`), so
 * conditions never share mutable state.
 *
 * Memory sets (which records a condition's memory holds; records are appended in episode order and the
 * excluded ones revoked with TextMemory tombstones, so they stay in the log but are never read):
 *  - 'log': every record.
 *  - 'latest-write': for each object only its latest revision (the stipulated latest-write set: chosen by
 *    episode order, never by the fact).
 *  - 'stale': the latest-write set, except that the query object's latest write is removed and its
 *    previous revision kept — the memory holds an outdated fact for rewritten chains, and nothing about
 *    the query object for chains written once.
 */
import { TextMemory, type TextRecordInput } from '../banks/index.js';
import { EventEmbedder } from './embeddings.js';
import type { Chain, ChainManifest } from './manifest-schema.js';

export interface ChainEvent {
  readonly record: TextRecordInput & { readonly fact: { readonly object: string; readonly drawer: string } };
  readonly episodeIndex: number;
  readonly role: 'write' | 'distractor';
  /** float32 event embedding, `features.dim` long. */
  readonly feature: Float32Array;
}

export interface ChainRecordSet {
  readonly dim: number;
  /** chain id → its events in episode order. */
  readonly byChain: ReadonlyMap<string, readonly ChainEvent[]>;
}

export type MemorySet = 'log' | 'latest-write' | 'stale';

/** Builds the records of every write/distractor episode of the manifest. */
export function buildChainRecords(manifest: ChainManifest): ChainRecordSet {
  const embedder = new EventEmbedder(manifest.features);
  const byChain = new Map<string, readonly ChainEvent[]>();
  for (const chain of manifest.chains) {
    const revisions = new Map<string, number>();
    const events: ChainEvent[] = [];
    chain.episodes.forEach((e, i) => {
      if (e.role === 'query') return;
      const drawer = chain.drawers[e.drawer] as string;
      const revision = revisions.get(e.object) ?? 0;
      revisions.set(e.object, revision + 1);
      events.push(
        Object.freeze({
          record: Object.freeze({
            id: `${chain.id}/e${i}`,
            chainId: chain.id,
            episode: `e${i}`,
            fact: Object.freeze({ object: e.object, drawer }),
            revision,
          }),
          episodeIndex: i,
          role: e.role,
          feature: embedder.feature(chain.id, i, e.object, drawer),
        }),
      );
    });
    byChain.set(chain.id, Object.freeze(events));
  }
  return Object.freeze({ dim: manifest.features.dim, byChain });
}

/** The events of one chain (empty when the record set has none for it). */
export function chainEvents(records: ChainRecordSet, chainId: string): readonly ChainEvent[] {
  return records.byChain.get(chainId) ?? [];
}

/** Ids of the records each object's latest revision lives in (object → record id). */
function latestByObject(events: readonly ChainEvent[]): Map<string, ChainEvent> {
  const latest = new Map<string, ChainEvent>();
  for (const ev of events) {
    const prev = latest.get(ev.record.fact.object);
    if (prev === undefined || ev.record.revision >= prev.record.revision) latest.set(ev.record.fact.object, ev);
  }
  return latest;
}

/** Whether an event belongs to a memory set (given the chain's query object). */
export function inMemorySet(
  events: readonly ChainEvent[],
  set: MemorySet,
  queryObject: string,
): (ev: ChainEvent) => boolean {
  if (set === 'log') return () => true;
  const latest = latestByObject(events);
  if (set === 'latest-write') return (ev) => latest.get(ev.record.fact.object) === ev;
  // stale: the query object's revisions below its latest; other objects as in the latest-write set.
  const queryLatest = latest.get(queryObject);
  const previous = events
    .filter((ev) => ev.record.fact.object === queryObject && ev !== queryLatest)
    .reduce<ChainEvent | undefined>(
      (best, ev) => (best === undefined || ev.record.revision >= best.record.revision ? ev : best),
      undefined,
    );
  return (ev) => (ev.record.fact.object === queryObject ? ev === previous : latest.get(ev.record.fact.object) === ev);
}

/** A fresh TextMemory holding a chain's records, with those outside `set` revoked. */
export function chainMemory(chain: Chain, events: readonly ChainEvent[], set: MemorySet): TextMemory {
  const memory = new TextMemory({ bank: `chain:${chain.id}` });
  const keep = inMemorySet(events, set, chain.finalFact.object);
  for (const ev of events) {
    if (ev.episodeIndex > memory.now()) memory.advanceClock(ev.episodeIndex - memory.now());
    memory.append(ev.record);
  }
  for (const ev of events) if (!keep(ev)) memory.revoke(ev.record.id);
  if (chain.episodes.length - 1 > memory.now()) memory.advanceClock(chain.episodes.length - 1 - memory.now());
  return memory;
}

/** Feature lookup by record id for one chain. */
export function featureIndex(events: readonly ChainEvent[]): ReadonlyMap<string, Float32Array> {
  return new Map(events.map((ev) => [ev.record.id, ev.feature]));
}
