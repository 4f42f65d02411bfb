/**
 * The full-memory decision path, in three separately callable stages, and the fallback decision.
 *
 * 1. Presence gate: read the chain's memory (TextMemory.readAll through its read hook, at the query
 *    episode, as a decision step) and keep the valid records whose `object` is the query object. None →
 *    the gate declines and the chain gets the fallback decision.
 * 2. Two-stage retrieval: stage 1 is that object filter; stage 2 takes the latest valid revision among
 *    the survivors (highest revision, then latest writtenAt, then latest log position — TextMemory's
 *    resolve order).
 * 3. Nearest-centroid readout on the selected record's event feature: squared Euclidean distance (float64)
 *    to each of the chain's K drawer centroids (leave-one-chain-out, centroids.ts); the choice is the
 *    nearest drawer's position. Ties go to the lowest position — a physical order, not a name, so the
 *    readout is label-equivariant. Drawers without a centroid are skipped; if none has one, the fallback.
 *
 * Fallback (no memory, declined gate): 'uniform' (the default) draws the drawer position uniformly with
 * Prng(seed).fork(`fallback/<chain id>`).nextInt(K), so it is seeded, per chain, and independent of
 * every other chain and condition; 'fixed' always answers position 0. Both have chance accuracy 1/K on
 * balanced facts. No language model is called anywhere on this path.
 */
import type { TextMemory, TextRecord } from '../banks/index.js';
import { Prng, type Seed } from '../core/index.js';
import type { Chain } from './manifest-schema.js';

export type FallbackMode = 'uniform' | 'fixed';
export const FALLBACK_MODES: readonly FallbackMode[] = ['uniform', 'fixed'];

export interface Selection {
  readonly gate: 'present' | 'declined';
  /** Records of the query object that passed stage 1. */
  readonly candidates: number;
  /** The stage-2 record (null when the gate declined). */
  readonly record: TextRecord | null;
}

/** Presence gate and two-stage retrieval over a chain's memory. */
export function selectDecidingRecord(memory: TextMemory, chain: Chain): Selection {
  const queryIndex = chain.episodes.length - 1;
  const object = chain.finalFact.object;
  const all = memory.readAll({ chainId: chain.id, episode: `e${queryIndex}`, decisionStep: true });
  let best: TextRecord | null = null;
  let candidates = 0;
  for (const r of all) {
    if (r.fact['object'] !== object) continue;
    candidates++;
    // readAll is in log order, so ">=" keeps the latest position among equal (revision, writtenAt).
    if (best === null || r.revision > best.revision || (r.revision === best.revision && r.writtenAt >= best.writtenAt))
      best = r;
  }
  return { gate: best === null ? 'declined' : 'present', candidates, record: best };
}

export interface NearestCentroid {
  /** Drawer position, or null when no drawer has a centroid. */
  readonly choice: number | null;
  readonly distances: readonly (number | null)[];
}

export function nearestCentroid(feature: Float32Array, centroids: readonly (Float64Array | null)[]): NearestCentroid {
  let choice: number | null = null;
  let best = Infinity;
  const distances = centroids.map((c, k) => {
    if (c === null) return null;
    let d = 0;
    for (let i = 0; i < c.length; i++) {
      const diff = (feature[i] as number) - (c[i] as number);
      d += diff * diff;
    }
    if (d < best) {
      best = d;
      choice = k;
    }
    return d;
  });
  return { choice, distances };
}

export function fallbackChoice(chain: Chain, seed: Seed, mode: FallbackMode): number {
  return mode === 'fixed' ? 0 : new Prng(seed).fork(`fallback/${chain.id}`).nextInt(chain.K);
}

/** Drawer position of a record's drawer field in the chain (−1 if the chain has no such drawer). */
export function drawerPosition(chain: Chain, drawerName: string): number {
  return chain.drawers.indexOf(drawerName);
}
