/**
 * S and T donor swaps at READ time, for banks that cannot be installed into (episode-local banks, a hosted
 * policy's own bank). The read-time equivalent of the point installation (donor-swap.ts):
 *
 * - The POINT is the episode's first decision query (ReadContext.decisionStep, which the environment's declared
 *   decision step drives). From it on, every retrieved item written BEFORE it (identity.timestep < the point's
 *   query index) receives the payload (every leaf) of the donor episode's item AT THE SAME POSITION: within each
 *   bank, the recipient's pre-point records and the donor's, each ordered by (timestep, slot), are paired by rank —
 *   as the point installation pairs them (donor-swap.ts). The item's identity is kept. Items written at or after
 *   the point are the recipient's own.
 * - Donor payloads come from the donor's reference (A) run of the same attempt, captured by `PrePointCapture`
 *   from what its reads returned before and at its own point.
 * - FAIL CLOSED: a recipient item with no donor counterpart, or whose leaves differ in name, dtype or shape, throws
 *   E_DONOR_SHORT — a unit never runs partly unsubstituted. Up front, `alignByRank` tells the runner to remove a
 *   unit whose donor holds fewer pre-point records in a bank than the recipient's own reference run read.
 */
import type { ReadContext, ReadHook, RetrievedItem } from '../banks/index.js';
import { ImepError, cloneTensor, type FloatTensor } from '../core/index.js';

type Leaves = Readonly<Record<string, FloatTensor>>;

/** Pre-point items of one episode: key (bank, timestep, slot) → leaves. */
export type PrePointItems = ReadonlyMap<string, Leaves>;

export function prePointKey(bank: string, item: RetrievedItem): string {
  return `${bank}\u001f${item.identity.timestep}\u001f${item.identity.slot}`;
}

/** The first decision query of each episode: reads from it on are after the point (the trace's 'read-swap' mode too). */
export class EpisodePoints {
  private readonly first = new Map<string, number>();
  /** The point's query index once the episode reached it (this read included), else null. */
  at(ctx: ReadContext): number | null {
    let q = this.first.get(ctx.episode);
    if (q === undefined && ctx.decisionStep) this.first.set(ctx.episode, (q = ctx.queryIndex));
    return q ?? null;
  }
}

/**
 * Records, per episode, the items its reads returned that were written before its point (reads before the point
 * and at or after it alike: a top-k bank may show a pre-point record only later). Wrap the reference hook with it.
 */
export class PrePointCapture {
  private readonly points = new EpisodePoints();
  private readonly items = new Map<string, Map<string, Leaves>>();

  wrap(inner: ReadHook): ReadHook {
    return (items, ctx) => {
      const out = inner(items, ctx);
      const point = this.points.at(ctx);
      let mine = this.items.get(ctx.episode);
      if (mine === undefined) this.items.set(ctx.episode, (mine = new Map()));
      for (const it of out) {
        if (point !== null && it.identity.timestep >= point) continue;
        const key = prePointKey(ctx.bank, it);
        if (!mine.has(key)) mine.set(key, cloneLeaves(it.leaves));
      }
      return out;
    };
  }

  /** What the episode's reads returned before its point (empty map when it never read). */
  of(episode: string): PrePointItems {
    return this.items.get(episode) ?? new Map();
  }
}

function parseKey(key: string): { bank: string; timestep: number; slot: number } {
  const [bank, t, s] = key.split('\u001f');
  return { bank: bank as string, timestep: Number(t), slot: Number(s) };
}

/**
 * The donor payload for each of the recipient's pre-point records: per bank, both sides ordered by (timestep,
 * slot) and paired by rank (extra donor records unused). A bank where the donor holds fewer records than the
 * recipient is SHORT: the swap cannot run without padding, so the unit is removed (never padded).
 */
export function alignByRank(
  recipient: PrePointItems,
  donor: PrePointItems,
):
  | { readonly kind: 'aligned'; readonly items: PrePointItems }
  | { readonly kind: 'short'; readonly bank: string; readonly recipientCount: number; readonly donorCount: number } {
  const byBank = (m: PrePointItems): Map<string, { key: string; timestep: number; slot: number }[]> => {
    const out = new Map<string, { key: string; timestep: number; slot: number }[]>();
    for (const key of m.keys()) {
      const k = parseKey(key);
      let list = out.get(k.bank);
      if (list === undefined) out.set(k.bank, (list = []));
      list.push({ key, timestep: k.timestep, slot: k.slot });
    }
    for (const list of out.values()) list.sort((a, b) => a.timestep - b.timestep || a.slot - b.slot);
    return out;
  };
  const mine = byBank(recipient);
  const theirs = byBank(donor);
  const items = new Map<string, Leaves>();
  for (const [bank, list] of [...mine].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const other = theirs.get(bank) ?? [];
    if (other.length < list.length)
      return { kind: 'short', bank, recipientCount: list.length, donorCount: other.length };
    list.forEach((r, i) => items.set(r.key, donor.get((other[i] as { key: string }).key) as Leaves));
  }
  return { kind: 'aligned', items };
}

function cloneLeaves(leaves: Leaves): Leaves {
  const out: Record<string, FloatTensor> = {};
  for (const [name, t] of Object.entries(leaves)) out[name] = cloneTensor(t);
  return out;
}

function sameLayout(a: Leaves, b: Leaves): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  return names.every((n) => {
    const x = a[n];
    const y = b[n];
    return (
      x !== undefined &&
      y !== undefined &&
      x.dtype === y.dtype &&
      x.shape.length === y.shape.length &&
      x.shape.every((d, i) => d === y.shape[i])
    );
  });
}

export interface ReadSwapCounters {
  /** Reads at or after the point. */
  reads: number;
  /** Of those, reads with ≥ 1 item substituted. */
  substitutedReads: number;
}

/**
 * The read-time swap hook of one recipient unit. `donorOf(episode)` gives, for a recipient episode, the donor payload
 * of each of its pre-point records keyed by the RECIPIENT's record (`alignByRank` of the same attempt of the donor
 * unit); undefined only for an episode the runner did not pair, which fails closed.
 */
export function readSwapHook(options: {
  readonly recipient: string;
  readonly donor: string;
  readonly donorOf: (episode: string) => PrePointItems | undefined;
  readonly counters?: ReadSwapCounters;
}): ReadHook {
  const { donorOf, counters } = options;
  const points = new EpisodePoints();
  const short = (what: string): never => {
    throw new ImepError(
      'E_DONOR_SHORT',
      `scope ${options.recipient}: ${what} in donor ${options.donor}; the read-time swap failed closed`,
      {
        field: 'donor',
        hint: 'the unit must not run unsubstituted: it is recorded as failed',
      },
    );
  };
  return (items, ctx) => {
    const point = points.at(ctx);
    if (point === null) return items;
    if (counters) counters.reads += 1;
    const donor = donorOf(ctx.episode) ?? short(`episode ${ctx.episode} has no paired episode`);
    let swapped = 0;
    const out = items.map((it): RetrievedItem => {
      if (it.identity.timestep >= point) return it;
      const key = prePointKey(ctx.bank, it);
      const leaves =
        donor.get(key) ??
        short(
          `no record paired with bank ${ctx.bank}'s record at timestep ${it.identity.timestep}, slot ${it.identity.slot}`,
        );
      if (!sameLayout(leaves, it.leaves))
        short(
          `the record at timestep ${it.identity.timestep}, slot ${it.identity.slot} has other leaves (names, dtypes or shapes)`,
        );
      swapped += 1;
      return { identity: it.identity, leaves: cloneLeaves(leaves) };
    });
    if (counters && swapped > 0) counters.substitutedReads += 1;
    return out;
  };
}
