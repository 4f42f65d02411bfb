/**
 * Top-k ranking of episode-bank entries by canonical cosine similarity to a unit query (see episode-bank.ts and
 * cosine.ts): similarity descending, then timestep ascending, then index ascending.
 */
import { dot64, dot64At } from './cosine.js';

/**
 * Entry indices of the k best entries for unit query q, best first, in exactly the order of sorting all
 * entries by (similarity descending, timestep ascending, index ascending) and keeping the first k — the
 * ranking rule of `query`. That key is a strict total order (indices are distinct) as long as no
 * similarity is NaN, so its first k elements are unique and an insertion selection finds the same ones
 * without sorting (or allocating per entry). Similarities of canonical unit vectors are finite; should
 * one ever be NaN, the full sort runs instead, so the result never depends on which path ran.
 */
export function topK(
  entries: readonly { readonly timestep: number; readonly unit: Float64Array }[],
  q: Float64Array,
  k: number,
): number[] {
  const n = entries.length;
  const m = Math.min(k, n);
  const idx = new Array<number>(m);
  const sims = new Float64Array(m);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const e = entries[i] as { readonly timestep: number; readonly unit: Float64Array };
    const sim = dot64(q, e.unit);
    if (sim !== sim) return sortedTopK(entries, q, k);
    // Walk up from the end while the new entry ranks before the selected one (it comes later in index order,
    // so on equal similarity and timestep it ranks after).
    let pos = count;
    while (pos > 0) {
      const s = sims[pos - 1] as number;
      if (sim > s || (sim === s && e.timestep < (entries[idx[pos - 1] as number] as { timestep: number }).timestep))
        pos--;
      else break;
    }
    count = placeAt(idx, sims, count, m, pos, i, sim);
  }
  return idx; // count = m: the first m entries are always placed
}

/**
 * `topK` over n entries stored back to back: unit vector of entry i at units[i·d … i·d + d) (d = q.length), its
 * timestep at times[i]. The same selection, comparisons and similarities (dot64At is dot64), so the same indices.
 */
export function topKPacked(units: Float64Array, times: Float64Array, n: number, q: Float64Array, k: number): number[] {
  const m = Math.min(k, n);
  const idx = new Array<number>(m);
  const count = topKPackedInto(units, times, n, q, k, idx, new Float64Array(m));
  if (count < 0) return sortedPacked(units, times, n, q, k);
  return idx;
}

/**
 * `topKPacked` into caller-owned lists (no allocation): the selected indices, best first, go to idx[0 … count) and
 * their similarities to sims (both must hold min(k, n) values); returns count = min(k, n), or −1 when a similarity
 * is NaN (then the caller must rank by the full sort, `topKPacked` does).
 */
export function topKPackedInto(
  units: Float64Array,
  times: Float64Array,
  n: number,
  q: Float64Array,
  k: number,
  idx: number[],
  sims: Float64Array,
): number {
  const d = q.length;
  const m = Math.min(k, n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const sim = dot64At(q, units, i * d);
    if (sim !== sim) return -1;
    const t = times[i] as number;
    // Walk up from the end while entry i ranks before the selected one (it comes later in index order, so on equal
    // similarity and timestep it ranks after).
    let pos = count;
    while (pos > 0) {
      const s = sims[pos - 1] as number;
      if (sim > s || (sim === s && t < (times[idx[pos - 1] as number] as number))) pos--;
      else break;
    }
    count = placeAt(idx, sims, count, m, pos, i, sim);
  }
  return count;
}

/** The full-sort ranking of packed entries (the NaN path of topKPacked). */
export function sortedPacked(
  units: Float64Array,
  times: Float64Array,
  n: number,
  q: Float64Array,
  k: number,
): number[] {
  const d = q.length;
  const entries: { timestep: number; unit: Float64Array }[] = [];
  for (let j = 0; j < n; j++) entries.push({ timestep: times[j] as number, unit: units.slice(j * d, (j + 1) * d) });
  return sortedTopK(entries, q, k);
}

/** The reference ranking: sort every entry by the key of `topK`, keep the first k. */
export function sortedTopK(
  entries: readonly { readonly timestep: number; readonly unit: Float64Array }[],
  q: Float64Array,
  k: number,
): number[] {
  return entries
    .map((e, index) => ({ index, e, sim: dot64(q, e.unit) }))
    .sort((a, b) => (a.sim !== b.sim ? b.sim - a.sim : a.e.timestep - b.e.timestep || a.index - b.index))
    .slice(0, k)
    .map((r) => r.index);
}

/**
 * Puts entry i (similarity sim) at rank pos of the best lists idx/sims (count of at most m filled), shifting the lower
 * ranks down and dropping the last when full; nothing when pos ≥ m. Returns the new count.
 */
function placeAt(
  idx: number[],
  sims: Float64Array,
  count: number,
  m: number,
  pos: number,
  i: number,
  sim: number,
): number {
  if (pos >= m) return count;
  const filled = count < m ? count + 1 : m;
  for (let j = filled - 1; j > pos; j--) {
    idx[j] = idx[j - 1] as number;
    sims[j] = sims[j - 1] as number;
  }
  idx[pos] = i;
  sims[pos] = sim;
  return filled;
}
