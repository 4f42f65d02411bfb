/**
 * Leave-one-chain-out drawer centroids for the nearest-centroid readout.
 *
 * The centroid of drawer name d for query chain c is the mean event feature of every labeled event
 * (write and distractor records: each states object → drawer) of every OTHER chain whose drawer field
 * is d, taken from the curated record set (never from a condition's modified records, so centroids are
 * identical across conditions). Computed as (Σ over all chains − Σ over chain c) / (n_d − n_d,c) in
 * float64, with the all-chain sums accumulated once in record-set order. A drawer with no event outside
 * chain c has no centroid (null) and cannot be chosen by the readout.
 */
import { createHash } from 'node:crypto';
import type { ChainRecordSet } from './records.js';

export class LooCentroids {
  readonly dim: number;
  private readonly sums = new Map<string, Float64Array>();
  private readonly counts = new Map<string, number>();

  constructor(readonly records: ChainRecordSet) {
    this.dim = records.dim;
    for (const events of records.byChain.values()) {
      for (const ev of events) this.add(this.sums, this.counts, ev.record.fact.drawer, ev.feature);
    }
  }

  private add(sums: Map<string, Float64Array>, counts: Map<string, number>, drawer: string, f: Float32Array): void {
    let s = sums.get(drawer);
    if (s === undefined) {
      s = new Float64Array(this.dim);
      sums.set(drawer, s);
    }
    for (let i = 0; i < this.dim; i++) s[i] = (s[i] as number) + (f[i] as number);
    counts.set(drawer, (counts.get(drawer) ?? 0) + 1);
  }

  /** The centroids of `drawers` (in that order) with chain `chainId`'s events excluded. */
  forChain(chainId: string, drawers: readonly string[]): (Float64Array | null)[] {
    const ownSums = new Map<string, Float64Array>();
    const ownCounts = new Map<string, number>();
    for (const ev of this.records.byChain.get(chainId) ?? [])
      this.add(ownSums, ownCounts, ev.record.fact.drawer, ev.feature);
    return drawers.map((d) => {
      const total = this.sums.get(d);
      const n = (this.counts.get(d) ?? 0) - (ownCounts.get(d) ?? 0);
      if (total === undefined || n <= 0) return null;
      const own = ownSums.get(d);
      const c = new Float64Array(this.dim);
      for (let i = 0; i < this.dim; i++)
        c[i] = ((total[i] as number) - (own === undefined ? 0 : (own[i] as number))) / n;
      return c;
    });
  }
}

/** SHA-256 of the centroid bytes (a null centroid hashes as the marker "null"). */
export function centroidDigest(centroids: readonly (Float64Array | null)[]): string {
  const h = createHash('sha256');
  for (const c of centroids) h.update(c === null ? 'null' : new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
  return h.digest('hex');
}
