import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { tensorFrom, tensorsBitEqual } from '../../src/core/tensor.js';
import type { FloatDtype, FloatTensor } from '../../src/core/tensor.js';
import { EpisodeBank } from '../../src/banks/episode-bank.js';
import type { RetrievedItem } from '../../src/banks/record.js';

/**
 * EpisodeBank reuses the entries of past episodes (reset hands them to a pool, write refills them) and, for
 * `leafViews` reads, its item objects. Reuse must be invisible: a bank that lived through many episodes answers
 * exactly as a fresh bank given the same episode, and nothing a caller was allowed to keep ever changes.
 */

type Op = { kind: 'write'; values: number[] } | { kind: 'query'; values: number[]; k: number; views: boolean };

const feature = (dtype: FloatDtype, values: readonly number[]): FloatTensor =>
  tensorFrom(dtype, values, [values.length]);

function runEpisode(bank: EpisodeBank, episode: string, dtype: FloatDtype, ops: readonly Op[]): unknown[] {
  bank.reset(episode);
  const out: unknown[] = [];
  let t = 0;
  for (const op of ops) {
    if (op.kind === 'write') out.push(bank.write(t++, feature(dtype, op.values)));
    else {
      const { items, ctx } = bank.query(feature(dtype, op.values), { k: op.k, leafViews: op.views });
      // Read the leaves now (the leafViews contract): identity and bytes of each item.
      out.push({ ctx, items: items.map((i) => ({ identity: { ...i.identity }, leaf: cloneLeaf(i) })) });
    }
  }
  out.push(bank.entries(), Array.from(bank.snapshot()));
  return out;
}

function cloneLeaf(i: RetrievedItem): { dtype: string; shape: number[]; bits: number[] } {
  const f = i.leaves['feature']!;
  return {
    dtype: f.dtype,
    shape: [...f.shape],
    bits: Array.from(new Uint8Array(f.data.buffer, f.data.byteOffset, f.data.byteLength)),
  };
}

const finite = fc.double({ min: -1e3, max: 1e3, noNaN: true });

describe('EpisodeBank entry and view reuse', () => {
  it('a bank that lived through earlier episodes answers exactly as a fresh bank (seeded property, dtype changes included)', () => {
    const op = (dim: number): fc.Arbitrary<Op> =>
      fc.oneof(
        fc.record({
          kind: fc.constant('write' as const),
          values: fc.array(finite, { minLength: dim, maxLength: dim }),
        }),
        fc.record({
          kind: fc.constant('query' as const),
          values: fc.array(finite, { minLength: dim, maxLength: dim }),
          k: fc.integer({ min: 1, max: 5 }),
          views: fc.boolean(),
        }),
      );
    const episode = fc
      .record({
        dtype: fc.constantFrom<FloatDtype>('float32', 'float32', 'float16', 'float64'),
        dim: fc.constantFrom(3, 4, 8),
      })
      .chain(({ dtype, dim }) => fc.record({ dtype: fc.constant(dtype), ops: fc.array(op(dim), { maxLength: 14 }) }));
    fc.assert(
      fc.property(
        fc.array(episode, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('token-merge', 'fifo') as fc.Arbitrary<'token-merge' | 'fifo'>,
        (episodes, consolidation) => {
          const lived = new EpisodeBank({ capacity: 5, k: 3, consolidation });
          episodes.forEach((e, n) => {
            const fresh = new EpisodeBank({ capacity: 5, k: 3, consolidation });
            expect(runEpisode(lived, `e${n}`, e.dtype, e.ops)).toEqual(runEpisode(fresh, `e${n}`, e.dtype, e.ops));
          });
        },
      ),
      { seed: 20261203, numRuns: 400 },
    );
  });

  it('copies handed out before a reset keep their bytes while later episodes refill the pooled entries', () => {
    const bank = new EpisodeBank({ capacity: 4, k: 2 });
    bank.reset('a');
    bank.write(0, feature('float32', [1, 2, 3]));
    bank.write(1, feature('float32', [3, 2, 1]));
    const kept = bank.query(feature('float32', [1, 2, 3])).items; // identity hook, no leafViews: copies
    const keptEntries = bank.entries();
    const before = kept.map((i) => Array.from(i.leaves['feature']!.data));
    for (let e = 0; e < 5; e++) {
      bank.reset(`b${e}`);
      for (let t = 0; t < 6; t++) bank.write(t, feature('float32', [t + e, -t, 7]));
    }
    expect(kept.map((i) => Array.from(i.leaves['feature']!.data))).toEqual(before);
    expect(keptEntries.map((x) => Array.from(x.feature.data))).toEqual([
      [1, 2, 3],
      [3, 2, 1],
    ]);
  });

  it('a leafViews read refills the same item objects; a read through another hook gets fresh copies', () => {
    const bank = new EpisodeBank({ capacity: 4, k: 2 });
    bank.reset('a');
    bank.write(0, feature('float32', [1, 0, 0]));
    bank.write(1, feature('float32', [0, 1, 0]));
    const first = bank.query(feature('float32', [1, 0, 0]), { leafViews: true }).items;
    const firstSlot = first[0]!.identity.slot;
    const second = bank.query(feature('float32', [0, 1, 0]), { leafViews: true }).items;
    expect(second).toBe(first); // same list, refilled
    expect(second[0]!.identity.slot).not.toBe(firstSlot);
    expect(tensorsBitEqual(second[0]!.leaves['feature']!, feature('float32', [0, 1, 0]))).toBe(true);
    bank.setReadHook((items) => items);
    const hooked = bank.query(feature('float32', [0, 1, 0]), { leafViews: true }).items;
    expect(hooked).not.toBe(first);
    (hooked[0]!.leaves['feature']!.data as Float32Array)[0] = 99; // a copy: the bank is untouched
    expect(Array.from(bank.entries()[1]!.feature.data)).toEqual([0, 1, 0]);
  });
});
