/**
 * Consistent renaming of object and drawer identifiers (the labels of a chain manifest and its
 * records), for the label-equivariance audit (update-sufficiency paper §6: same-length random
 * renamings, references rewritten consistently, everything else unchanged).
 *
 * A renaming maps every identifier to a distinct random string of the same length over [a-z0-9]
 * (seeded; redrawn on collision). It rewrites episode objects, facts' objects, drawer names, and the
 * records' `object` / `drawer` fields. Chain ids, record ids, revisions, episode order, drawer positions,
 * seeds and the event features are unchanged (features are carried over, not re-derived). The renamed
 * manifest's query frame hashes no longer describe simulator objects; it is for readouts only.
 */
import { ImepError, Prng } from '../core/index.js';
import type { ChainManifest } from './manifest-schema.js';
import type { ChainEvent, ChainRecordSet } from './records.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Every object and drawer identifier of a manifest, sorted. */
export function identifiersOf(manifest: ChainManifest): string[] {
  const ids = new Set<string>();
  for (const c of manifest.chains) {
    for (const d of c.drawers) ids.add(d);
    for (const e of c.episodes) ids.add(e.object);
  }
  return [...ids].sort();
}

/** A bijective same-length renaming of `identifiers`, drawn from `prng`. */
export function randomRenaming(identifiers: readonly string[], prng: Prng): ReadonlyMap<string, string> {
  const map = new Map<string, string>();
  const used = new Set<string>();
  for (const id of identifiers) {
    if (map.has(id)) continue;
    const capacity = ALPHABET.length ** id.length;
    let name = '';
    for (let attempt = 0; ; attempt++) {
      if (attempt > 1000 || used.size >= capacity) {
        throw new ImepError('E_USAGE', `cannot rename ${id}: too many identifiers of length ${id.length}`, {
          field: 'identifiers',
        });
      }
      name = '';
      for (let i = 0; i < id.length; i++) name += ALPHABET[prng.nextInt(ALPHABET.length)];
      if (!used.has(name)) break;
    }
    used.add(name);
    map.set(id, name);
  }
  return map;
}

function renamer(map: ReadonlyMap<string, string>): (id: string) => string {
  return (id) => {
    const r = map.get(id);
    if (r === undefined) throw new ImepError('E_INTERNAL', `renaming has no image for identifier ${id}`);
    return r;
  };
}

export function renameManifest(manifest: ChainManifest, map: ReadonlyMap<string, string>): ChainManifest {
  const rn = renamer(map);
  return {
    ...manifest,
    chains: manifest.chains.map((c) => ({
      ...c,
      drawers: c.drawers.map(rn),
      episodes: c.episodes.map((e) => ({ ...e, object: rn(e.object) })),
      initialFact: { ...c.initialFact, object: rn(c.initialFact.object) },
      finalFact: { ...c.finalFact, object: rn(c.finalFact.object) },
    })),
  };
}

export function renameRecords(records: ChainRecordSet, map: ReadonlyMap<string, string>): ChainRecordSet {
  const rn = renamer(map);
  const byChain = new Map<string, readonly ChainEvent[]>();
  for (const [id, events] of records.byChain) {
    byChain.set(
      id,
      events.map((ev) => ({
        ...ev,
        record: { ...ev.record, fact: { object: rn(ev.record.fact.object), drawer: rn(ev.record.fact.drawer) } },
      })),
    );
  }
  return { dim: records.dim, byChain };
}
