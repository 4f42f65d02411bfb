/**
 * The ChainBench decision conditions. Each is a pure function (manifest, records, seed) → one decision
 * per chain (manifest order), with no language-model call:
 *
 *  - full-memory (A): the chain's latest-write memory set → presence gate → two-stage retrieval →
 *    leave-one-chain-out nearest-centroid readout on the selected record's feature (readout.ts);
 *    a declined gate gets the fallback.
 *  - no-memory (N): the fallback decision (seeded uniform over the K drawers by default; 'fixed' = 0).
 *  - initial-fact: ignores updates — the first write of the query object in the chain's record log
 *    (lowest revision, then earliest) and its drawer field; no readout, no retrieval path. No such
 *    record → fallback.
 *  - shuffled-records: the full-memory path on records whose payload (drawer field together with its
 *    event feature) is permuted across chains: within each K group, the payloads of every record of every
 *    chain's latest-write set are shuffled by Prng(seed).fork(`shuffle/K=<K>`); object, chain, episode
 *    and revision stay in place.
 *  - stale-records: the full-memory path on the stale memory set (the query object's latest write
 *    removed, its previous revision kept). Defined on rewritten chains only (on a chain written once it
 *    would just be the declined gate); other chains get no decision.
 *  - oracle (O): the final fact.
 *
 * Centroids always come from the curated record set, whatever the condition.
 */
import { Prng, type Seed } from '../core/index.js';
import { LooCentroids } from './centroids.js';
import type { Chain, ChainManifest } from './manifest-schema.js';
import {
  chainEvents,
  chainMemory,
  inMemorySet,
  type ChainEvent,
  type ChainRecordSet,
  type MemorySet,
} from './records.js';
import { drawerPosition, fallbackChoice, nearestCentroid, selectDecidingRecord, type FallbackMode } from './readout.js';

export type DecisionPath = 'readout' | 'fallback' | 'initial-fact' | 'oracle';

export interface Decision {
  readonly chainId: string;
  /** Drawer position 0..K−1. */
  readonly choice: number;
  readonly path: DecisionPath;
  /** The record the decision read, when it read one. */
  readonly recordId?: string;
}

export type ConditionDecisions = readonly Decision[];
export type ConditionFn = (manifest: ChainManifest, records: ChainRecordSet, seed: Seed) => ConditionDecisions;

export const DECISION_CONDITIONS = [
  'full-memory',
  'no-memory',
  'initial-fact',
  'shuffled-records',
  'stale-records',
  'oracle',
] as const;
export type DecisionCondition = (typeof DECISION_CONDITIONS)[number];

export interface ConditionSpec {
  readonly name: DecisionCondition;
  /** The paper's label. */
  readonly label: string;
  /** 'rewritten': decided on rewritten chains only. */
  readonly cohort: 'all' | 'rewritten';
  readonly decide: ConditionFn;
}

export interface ConditionOptions {
  readonly fallback?: FallbackMode;
}

const centroidCache = new WeakMap<ChainRecordSet, LooCentroids>();

/** The leave-one-chain-out centroids of a (curated) record set, computed once per record set. */
export function centroidsOf(records: ChainRecordSet): LooCentroids {
  let c = centroidCache.get(records);
  if (c === undefined) {
    c = new LooCentroids(records);
    centroidCache.set(records, c);
  }
  return c;
}

/** The full-memory path (gate → two-stage retrieval → nearest centroid) on a chain's events under a memory set. */
export function memoryPathDecision(args: {
  chain: Chain;
  events: readonly ChainEvent[];
  set: MemorySet;
  centroids: LooCentroids;
  seed: Seed;
  fallback: FallbackMode;
}): Decision {
  const { chain, events, set, centroids, seed, fallback } = args;
  const selection = selectDecidingRecord(chainMemory(chain, events, set), chain);
  const fb = (): Decision => ({ chainId: chain.id, choice: fallbackChoice(chain, seed, fallback), path: 'fallback' });
  if (selection.record === null) return fb();
  const id = selection.record.id;
  const feature = events.find((ev) => ev.record.id === id)?.feature;
  if (feature === undefined) return fb();
  const { choice } = nearestCentroid(feature, centroids.forChain(chain.id, chain.drawers));
  return choice === null ? fb() : { chainId: chain.id, choice, path: 'readout', recordId: id };
}

function fullMemory(fallback: FallbackMode): ConditionFn {
  return (manifest, records, seed) => {
    const centroids = centroidsOf(records);
    return manifest.chains.map((chain) =>
      memoryPathDecision({
        chain,
        events: chainEvents(records, chain.id),
        set: 'latest-write',
        centroids,
        seed,
        fallback,
      }),
    );
  };
}

function noMemory(fallback: FallbackMode): ConditionFn {
  return (manifest, _records, seed) =>
    manifest.chains.map((chain) => ({
      chainId: chain.id,
      choice: fallbackChoice(chain, seed, fallback),
      path: 'fallback' as const,
    }));
}

function initialFact(fallback: FallbackMode): ConditionFn {
  return (manifest, records, seed) =>
    manifest.chains.map((chain) => {
      let first: ChainEvent | undefined;
      for (const ev of chainEvents(records, chain.id)) {
        if (ev.record.fact.object !== chain.finalFact.object) continue;
        if (first === undefined || ev.record.revision < first.record.revision) first = ev;
      }
      const pos = first === undefined ? -1 : drawerPosition(chain, first.record.fact.drawer);
      if (first === undefined || pos < 0)
        return { chainId: chain.id, choice: fallbackChoice(chain, seed, fallback), path: 'fallback' as const };
      return { chainId: chain.id, choice: pos, path: 'initial-fact' as const, recordId: first.record.id };
    });
}

/** The record set with payloads (drawer field + feature) of the latest-write sets shuffled across chains per K. */
export function shuffledRecords(manifest: ChainManifest, records: ChainRecordSet, seed: Seed): ChainRecordSet {
  const byChain = new Map<string, ChainEvent[]>();
  for (const chain of manifest.chains) byChain.set(chain.id, [...chainEvents(records, chain.id)]);
  const groups = [...new Set(manifest.chains.map((c) => c.K))].sort((a, b) => a - b);
  for (const K of groups) {
    const slots: { chainId: string; index: number }[] = [];
    for (const chain of manifest.chains) {
      if (chain.K !== K) continue;
      const events = byChain.get(chain.id) as ChainEvent[];
      const keep = inMemorySet(events, 'latest-write', chain.finalFact.object);
      events.forEach((ev, index) => {
        if (keep(ev)) slots.push({ chainId: chain.id, index });
      });
    }
    const payloads = slots.map((s) => {
      const ev = (byChain.get(s.chainId) as ChainEvent[])[s.index] as ChainEvent;
      return { drawer: ev.record.fact.drawer, feature: ev.feature };
    });
    new Prng(seed).fork(`shuffle/K=${K}`).shuffle(payloads);
    slots.forEach((s, j) => {
      const events = byChain.get(s.chainId) as ChainEvent[];
      const ev = events[s.index] as ChainEvent;
      const p = payloads[j] as { drawer: string; feature: Float32Array };
      events[s.index] = {
        ...ev,
        record: { ...ev.record, fact: { object: ev.record.fact.object, drawer: p.drawer } },
        feature: p.feature,
      };
    });
  }
  return { dim: records.dim, byChain };
}

function shuffled(fallback: FallbackMode): ConditionFn {
  return (manifest, records, seed) => {
    const centroids = centroidsOf(records);
    const mixed = shuffledRecords(manifest, records, seed);
    return manifest.chains.map((chain) =>
      memoryPathDecision({
        chain,
        events: chainEvents(mixed, chain.id),
        set: 'latest-write',
        centroids,
        seed,
        fallback,
      }),
    );
  };
}

function stale(fallback: FallbackMode): ConditionFn {
  return (manifest, records, seed) => {
    const centroids = centroidsOf(records);
    return manifest.chains
      .filter((chain) => chain.rewrite)
      .map((chain) =>
        memoryPathDecision({ chain, events: chainEvents(records, chain.id), set: 'stale', centroids, seed, fallback }),
      );
  };
}

const oracle: ConditionFn = (manifest) =>
  manifest.chains.map((chain) => ({ chainId: chain.id, choice: chain.finalFact.drawer, path: 'oracle' as const }));

/** The six conditions, in DECISION_CONDITIONS order. */
export function decisionConditions(opts: ConditionOptions = {}): readonly ConditionSpec[] {
  const fb = opts.fallback ?? 'uniform';
  return [
    { name: 'full-memory', label: 'A', cohort: 'all', decide: fullMemory(fb) },
    { name: 'no-memory', label: 'N', cohort: 'all', decide: noMemory(fb) },
    { name: 'initial-fact', label: 'initial', cohort: 'all', decide: initialFact(fb) },
    { name: 'shuffled-records', label: 'shuffled', cohort: 'all', decide: shuffled(fb) },
    { name: 'stale-records', label: 'stale', cohort: 'rewritten', decide: stale(fb) },
    { name: 'oracle', label: 'O', cohort: 'all', decide: oracle },
  ];
}
