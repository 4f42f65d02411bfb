/**
 * The protocol's seeds: how many, which (in registered order: bands in order, each ascending; or the
 * list as written), and overlap checks against other registered campaigns, which honour the
 * protocol's `reuse` declarations.
 */
import { ImepError } from '../core/index.js';
import type { Protocol, Seeds } from './schema.js';

/** The number of seeds the protocol registers. */
export function seedCount(seeds: Seeds): number {
  if (seeds.list) return seeds.list.length;
  return (seeds.bands ?? []).reduce((sum, b) => sum + Math.max(0, b.end - b.start + 1), 0);
}

/** The first `count` seeds in registered order (fewer when the protocol has fewer). */
export function firstSeeds(seeds: Seeds, count: number): number[] {
  const out: number[] = [];
  if (seeds.list) return seeds.list.slice(0, count);
  for (const b of seeds.bands ?? []) {
    for (let s = b.start; s <= b.end && out.length < count; s++) out.push(s);
    if (out.length >= count) break;
  }
  return out;
}

/** Inclusive ranges covering the registered seeds (a list becomes one range per run of consecutive seeds). */
export function seedRanges(seeds: Seeds): Array<{ start: number; end: number }> {
  if (seeds.bands) return seeds.bands.map((b) => ({ start: b.start, end: b.end }));
  const sorted = [...(seeds.list ?? [])].sort((a, b) => a - b);
  const out: Array<{ start: number; end: number }> = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last.end + 1) last.end = Math.max(last.end, s);
    else out.push({ start: s, end: s });
  }
  return out;
}

/**
 * Pairs of overlapping bands by sort and sweep (O(n log n)): each band that overlaps one listed before it in
 * start order is reported once, against the band reaching furthest so far, and named at the later of the two
 * in file order. At most bands.length − 1 pairs; none when the bands are disjoint.
 */
export function overlappingBands(
  bands: ReadonlyArray<{ readonly start: number; readonly end: number }>,
): Array<{ at: number; other: number }> {
  const order = bands.map((_, i) => i).sort((a, b) => bands[a]!.start - bands[b]!.start || a - b);
  const out: Array<{ at: number; other: number }> = [];
  let reach = -1; // the index of the band with the largest end among those swept
  for (const i of order) {
    const b = bands[i]!;
    if (b.start > b.end) continue; // an inverted band is reported on its own
    if (reach >= 0 && b.start <= bands[reach]!.end)
      out.push(i > reach ? { at: i, other: reach } : { at: reach, other: i });
    if (reach < 0 || b.end > bands[reach]!.end) reach = i;
  }
  return out.sort((x, y) => x.at - y.at || x.other - y.other);
}

export interface RegisteredSeeds {
  /** The other campaign's id (matched against `seeds.reuse[].campaign`). */
  readonly campaign: string;
  readonly seeds: Seeds;
}

/**
 * Throws E_SEED_OVERLAP naming the first campaign whose seeds intersect this protocol's and which the
 * protocol does not declare under `seeds.reuse`.
 */
export function assertNoSeedOverlap(protocol: Protocol, registry: readonly RegisteredSeeds[], file?: string): void {
  const declared = new Set((protocol.seeds.reuse ?? []).map((r) => r.campaign));
  const mine = seedRanges(protocol.seeds);
  for (const other of registry) {
    if (other.campaign === protocol.id || declared.has(other.campaign)) continue;
    for (const a of mine) {
      for (const b of seedRanges(other.seeds)) {
        const lo = Math.max(a.start, b.start);
        const hi = Math.min(a.end, b.end);
        if (lo <= hi) {
          throw new ImepError(
            'E_SEED_OVERLAP',
            `seeds ${lo}–${hi} are already registered by campaign "${other.campaign}"`,
            {
              ...(file === undefined ? {} : { file }),
              field: 'seeds',
              hint: `choose a disjoint band, or declare the overlap under seeds.reuse: [{ campaign: ${other.campaign}, reason: … }]`,
            },
          );
        }
      }
    }
  }
}
