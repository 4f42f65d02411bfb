/**
 * S / T at read time (src/interventions/read-swap.ts): the point is the episode's first decision query; from it on,
 * items written before it carry the donor episode's payload of the same (bank, timestep, slot), identity kept;
 * items written at or after it are the recipient's own; nothing runs unsubstituted (E_DONOR_SHORT).
 */
import { describe, expect, it } from 'vitest';
import type { ReadContext, RetrievedItem } from '../../src/banks/record.js';
import { isImepError } from '../../src/core/errors.js';
import { tensorFrom, toFloat64 } from '../../src/core/tensor.js';
import { interventionHook } from '../../src/interventions/condition.js';
import {
  alignByRank,
  PrePointCapture,
  prePointKey,
  readSwapHook,
  type PrePointItems,
} from '../../src/interventions/read-swap.js';

const item = (timestep: number, value: number, slot = timestep): RetrievedItem => ({
  identity: { slot, scope: 'r', sourceEpisode: 'e', timestep, version: 0 },
  leaves: { feature: tensorFrom('float32', [value, value + 0.5]) },
});
const ctx = (queryIndex: number, decisionStep: boolean, episode = 'e1', bank = 'perceptual'): ReadContext => ({
  bank,
  scope: 'r',
  episode,
  queryIndex,
  decisionStep,
  candidateCount: 0,
});
const values = (items: readonly RetrievedItem[]): number[] =>
  items.map((it) => toFloat64(it.leaves['feature'] as never)[0] as number);

/** A donor episode whose reads before its point (query 4) returned timesteps 1..3 with values 100 + t. */
function donorItems(): PrePointItems {
  const cap = new PrePointCapture();
  const hook = cap.wrap((items) => items);
  hook([item(1, 101)], ctx(2, false, 'd1'));
  hook([item(1, 101), item(2, 102)], ctx(3, false, 'd1'));
  hook([item(1, 101), item(2, 102), item(3, 103)], ctx(4, true, 'd1'));
  // after its point: a record written at query 4 is not pre-point, and is not captured
  hook([item(3, 103), item(4, 104)], ctx(5, true, 'd1'));
  return cap.of('d1');
}

describe('read-time donor swap', () => {
  it('captures exactly the items written before the donor’s first decision query', () => {
    const d = donorItems();
    expect([...d.keys()].sort()).toEqual([1, 2, 3].map((t) => prePointKey('perceptual', item(t, 0))).sort());
  });

  it('passes reads before the point unchanged; from the first decision query on, swaps pre-point items only', () => {
    const d = donorItems();
    const counters = { reads: 0, substitutedReads: 0 };
    const hook = readSwapHook({ recipient: 'r', donor: 'd', donorOf: (ep) => (ep === 'e1' ? d : undefined), counters });
    const early = [item(1, 1), item(2, 2)];
    expect(hook(early, ctx(3, false))).toBe(early);
    const atPoint = hook([item(1, 1), item(2, 2), item(3, 3)], ctx(4, true));
    expect(values(atPoint)).toEqual([101, 102, 103]);
    expect(atPoint.map((i) => i.identity)).toEqual([item(1, 1), item(2, 2), item(3, 3)].map((i) => i.identity));
    // a later read, even one not labelled a decision, is after the point; timestep 4 is the recipient's own
    const later = hook([item(2, 2), item(4, 4)], ctx(5, false));
    expect(values(later)).toEqual([102, 4]);
    expect(counters).toEqual({ reads: 2, substitutedReads: 2 });
    // the donor's tensors are copied: the reader may not alias the capture
    expect(atPoint[0]?.leaves['feature']).not.toBe(d.get(prePointKey('perceptual', item(1, 0)))?.['feature']);
  });

  it('fails closed: a pre-point item the donor never showed, leaves of another layout, an unpaired episode', () => {
    const d = donorItems();
    const hook = readSwapHook({ recipient: 'r', donor: 'd', donorOf: (ep) => (ep === 'e1' ? d : undefined) });
    const code = (f: () => unknown): string | null => {
      try {
        f();
        return null;
      } catch (e) {
        return isImepError(e) ? e.code : 'other';
      }
    };
    expect(code(() => hook([item(1, 1, 9)], ctx(4, true)))).toBe('E_DONOR_SHORT');
    const wide: RetrievedItem = {
      identity: item(2, 0).identity,
      leaves: { feature: tensorFrom('float32', [1, 2, 3]) },
    };
    expect(code(() => hook([wide], ctx(5, true)))).toBe('E_DONOR_SHORT');
    expect(code(() => hook([item(1, 1)], ctx(4, true, 'e2')))).toBe('E_DONOR_SHORT');
    expect(code(() => hook([item(1, 1)], ctx(4, true, 'e1', 'cognitive')))).toBe('E_DONOR_SHORT');
  });

  it('alignByRank pairs each bank’s pre-point records by (timestep, slot) rank, and is short when the donor holds fewer', () => {
    const d = donorItems(); // perceptual records at timesteps 1, 2, 3
    const cap = new PrePointCapture();
    const read = cap.wrap((items) => items);
    read([item(7, 0), item(1, 0)], ctx(8, true, 'r1'));
    const aligned = alignByRank(cap.of('r1'), d);
    expect(aligned.kind).toBe('aligned');
    const got = aligned.kind === 'aligned' ? aligned.items : new Map();
    // the recipient's first record (t = 1) gets the donor's first (t = 1), its second (t = 7) the donor's second (t = 2)
    expect(values([{ ...item(1, 0), leaves: got.get(prePointKey('perceptual', item(1, 0))) }])).toEqual([101]);
    expect(values([{ ...item(7, 0), leaves: got.get(prePointKey('perceptual', item(7, 0))) }])).toEqual([102]);
    read([item(2, 0), item(3, 0), item(4, 0)], ctx(9, true, 'r2'));
    read([item(5, 0)], ctx(10, true, 'r2'));
    expect(alignByRank(cap.of('r2'), d)).toEqual({
      kind: 'short',
      bank: 'perceptual',
      recipientCount: 4,
      donorCount: 3,
    });
    read([item(1, 0)], ctx(2, true, 'r3', 'cognitive'));
    expect(alignByRank(cap.of('r3'), d)).toEqual({
      kind: 'short',
      bank: 'cognitive',
      recipientCount: 1,
      donorCount: 0,
    });
    expect(alignByRank(new Map(), d)).toEqual({ kind: 'aligned', items: new Map() });
  });

  it('the condition factory: S at read records its donor and counts substituted reads; it refuses its own scope as donor', () => {
    const d = donorItems();
    const h = interventionHook(
      { kind: 'T', seed: 5, installation: 'read' },
      { scope: 'r', point: 'every-read', donorReads: { scope: 'd', itemsOf: () => d } },
    );
    h.hook([item(1, 1)], ctx(4, true));
    const b = h.bookkeeping();
    expect([b.condition, b.donor, b.seed, b.substitutedReads, b.reads]).toEqual(['T', 'd', 5, 1, 1]);
    expect(() =>
      interventionHook(
        { kind: 'S', seed: 5, installation: 'read' },
        { scope: 'r', point: 'p', donorReads: { scope: 'r', itemsOf: () => d } },
      ),
    ).toThrow(/own donor/);
    expect(() => interventionHook({ kind: 'S', seed: 5, installation: 'read' }, { scope: 'r', point: 'p' })).toThrow(
      /donor/,
    );
  });
});
