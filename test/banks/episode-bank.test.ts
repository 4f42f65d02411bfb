import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { tensorFrom, tensorsBitEqual, toFloat64 } from '../../src/core/tensor.js';
import type { FloatDtype } from '../../src/core/tensor.js';
import { EpisodeBank, sortedTopK, topK, topKPacked } from '../../src/banks/episode-bank.js';
import { unitOfValues } from '../../src/banks/cosine.js';
import { averageFeatures, mostSimilarAdjacentPair } from '../../src/banks/token-merge.js';
import type { ReadContext, RetrievedItem } from '../../src/banks/record.js';
import { t } from './helpers.js';

function started(config: ConstructorParameters<typeof EpisodeBank>[0] = {}): EpisodeBank {
  const b = new EpisodeBank(config);
  b.reset('ep1');
  return b;
}
const view = (b: EpisodeBank): [number, number[]][] =>
  b.entries().map((e) => [e.timestep, Array.from(toFloat64(e.feature))]);

describe('EpisodeBank: consolidation', () => {
  it('token-merge merges the most similar adjacent pair, keeps the earlier timestep; ties → earliest pair', () => {
    const b = started({ capacity: 3 });
    b.write(0, t([1, 0]));
    b.write(1, t([1, 0.1]));
    b.write(2, t([0, 1]));
    // pairs (0,1) and (2,3) are equally similar → the earliest pair merges
    const r = b.write(3, t([0.1, 1]));
    expect(r.size).toBe(3);
    expect(r.consolidation).toMatchObject({ kind: 'token-merge', index: 0, timestep: 0 });
    const f01 = Math.fround(0.1);
    expect(view(b)).toEqual([
      [0, [1, Math.fround(f01 / 2)]],
      [2, [0, 1]],
      [3, [f01, 1]],
    ]);
    // now (2,3) is the most similar pair: merged entry keeps timestep 2
    const r2 = b.write(4, t([-1, 0]));
    expect(r2.consolidation).toMatchObject({ kind: 'token-merge', index: 1, timestep: 2 });
    expect(b.entries().map((e) => e.timestep)).toEqual([0, 2, 4]);
  });

  it('FIFO drops the oldest entry', () => {
    const b = started({ capacity: 3, consolidation: 'fifo' });
    for (let i = 0; i < 5; i++) b.write(i, t([i, 1]));
    expect(b.entries().map((e) => e.timestep)).toEqual([2, 3, 4]);
    expect(b.write(5, t([5, 1])).consolidation).toEqual({ kind: 'fifo', droppedTimestep: 2 });
  });

  it('averages in float64 and rounds to the dtype (round half to even)', () => {
    const a = tensorFrom('float16', [1, 3, 65504, -0]);
    const c = tensorFrom('float16', [1 + 2 ** -10, 5, 65504, -0]);
    const m = averageFeatures(a, c);
    expect(m.dtype).toBe('float16');
    expect(Array.from(toFloat64(m))).toEqual([1, 4, 65504, -0]);
    const bf = averageFeatures(tensorFrom('bfloat16', [1, 2]), tensorFrom('bfloat16', [1 + 2 ** -7, 2 + 2 ** -6]));
    expect(Array.from(toFloat64(bf))).toEqual([1, 2]); // both halfway → even
    const big = averageFeatures(t([Number.MAX_VALUE], 'float64'), t([Number.MAX_VALUE], 'float64'));
    expect(toFloat64(big)[0]).toBe(Number.MAX_VALUE);
    expect(averageFeatures(tensorFrom('float32', [1, 2], [1, 2]), tensorFrom('float32', [3, 4], [1, 2])).shape).toEqual(
      [1, 2],
    );
  });

  it('mostSimilarAdjacentPair keeps the earliest of equal pairs', () => {
    const u = [Float64Array.of(1, 0), Float64Array.of(1, 0), Float64Array.of(1, 0)];
    expect(mostSimilarAdjacentPair(u)).toEqual({ index: 0, similarity: 1 });
    expect(mostSimilarAdjacentPair(u.slice(0, 1))).toBeUndefined();
  });

  it('consolidation is deterministic over random streams and never exceeds capacity (500 seeded cases)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: -4, max: 4 }), { minLength: 3, maxLength: 3 }), { maxLength: 40 }),
        fc.constantFrom<'token-merge' | 'fifo'>('token-merge', 'fifo'),
        (feats, mode) => {
          const run = (): Uint8Array => {
            const b = started({ capacity: 5, consolidation: mode });
            feats.forEach((f, i) => {
              b.write(i, tensorFrom('float16', f));
              expect(b.size).toBeLessThanOrEqual(5);
            });
            const ts = b.entries().map((e) => e.timestep);
            expect([...ts].sort((x, y) => x - y)).toEqual(ts);
            return b.snapshot();
          };
          expect(Buffer.from(run()).equals(Buffer.from(run()))).toBe(true);
        },
      ),
      { seed: 99, numRuns: 500 },
    );
  });
});

describe('EpisodeBank: reads', () => {
  it('returns the top-k by similarity (ties by timestep) through the read hook', () => {
    const b = started({ bank: 'cognitive', k: 3 });
    b.write(0, t([0, 1]));
    b.write(1, t([1, 0]));
    b.write(1, t([2, 0]));
    b.write(2, t([1, 1]));
    const calls: [readonly RetrievedItem[], ReadContext][] = [];
    b.setReadHook((items, ctx) => {
      calls.push([items, ctx]);
      return items;
    });
    const r = b.query(t([1, 0]));
    expect(r.items.map((i) => [i.identity.slot, i.identity.timestep])).toEqual([
      [1, 1],
      [2, 1],
      [3, 2],
    ]);
    expect(r.items[0]?.identity).toEqual({ slot: 1, scope: 'ep1', sourceEpisode: 'ep1', timestep: 1, version: 0 });
    expect(Object.keys(r.items[0]?.leaves ?? {})).toEqual(['feature']);
    expect(r.ctx).toEqual({
      bank: 'cognitive',
      scope: 'ep1',
      episode: 'ep1',
      queryIndex: 1,
      decisionStep: true,
      candidateCount: 4,
    });
    expect(calls).toHaveLength(1);
    (r.items[0]?.leaves['feature']?.data as Float32Array)[0] = 42;
    expect(b.entries()[1]?.feature.data[0]).toBe(1); // leaves are copies
    expect(b.query(t([1, 0]), { k: 1, decisionStep: false }).ctx).toMatchObject({ queryIndex: 2, decisionStep: false });
  });

  it('reset empties the bank and the query counter; using it before reset is refused', () => {
    const fresh = new EpisodeBank();
    expect(() => fresh.write(0, t([1]))).toThrow(/reset/);
    const b = started();
    b.write(0, t([1, 2]));
    b.query(t([1, 2]));
    b.reset('ep2');
    expect([b.size, b.queryCount, b.episode]).toEqual([0, 0, 'ep2']);
    expect(b.query(t([1, 2])).items).toEqual([]);
  });

  it('refuses decreasing timesteps and features of another dtype or shape', () => {
    const b = started();
    b.write(3, t([1, 2]));
    expect(() => b.write(2, t([1, 2]))).toThrow(/before/);
    expect(() => b.write(4, t([1, 2], 'float16'))).toThrow(/differs/);
    expect(() => b.write(4, t([1, 2, 3]))).toThrow(/differs/);
    expect(() => b.query(t([1, 2, 3]))).toThrow(/elements/);
    expect(() => new EpisodeBank({ consolidation: 'lru' as never })).toThrow(/consolidation/);
  });
});

describe('EpisodeBank: snapshots', () => {
  it('round-trips byte-identically, keeping NaN/-0 bit patterns, dtype, shape and counters', () => {
    for (const dtype of ['float16', 'bfloat16', 'float32', 'float64'] as FloatDtype[]) {
      const b = started({ capacity: 4, bank: 'perceptual' });
      for (let i = 0; i < 6; i++) {
        const f = tensorFrom(dtype, [i, -0, NaN, i % 2 ? Infinity : 1e-8, 1, 2], [2, 3]);
        b.write(i, f);
      }
      b.query(tensorFrom(dtype, [1, 1, 1, 1, 1, 1], [2, 3]));
      const bytes = b.snapshot();
      const r = EpisodeBank.restore(bytes);
      expect(Buffer.from(r.snapshot()).equals(Buffer.from(bytes))).toBe(true);
      expect([r.episode, r.queryCount, r.size, r.config]).toEqual([b.episode, b.queryCount, b.size, b.config]);
      r.entries().forEach((e, i) => expect(tensorsBitEqual(e.feature, b.entries()[i]?.feature as never)).toBe(true));
    }
    const empty = new EpisodeBank({ bank: 'cognitive', consolidation: 'fifo' });
    expect(Buffer.from(EpisodeBank.restore(empty.snapshot()).snapshot()).equals(Buffer.from(empty.snapshot()))).toBe(
      true,
    );
    expect(EpisodeBank.restore(empty.snapshot(), { k: 7 }).config.k).toBe(7);
  });
});

describe('EpisodeBank: top-k selection equals the full sort', () => {
  // Few distinct values → many exactly equal similarities, so the timestep and index tie-breaks decide.
  const vec = fc.array(fc.constantFrom(-1, 0, 0.5, 1, 2), { minLength: 3, maxLength: 3 });
  it('topK returns the first k of the sorted ranking for any entries, ties and k', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(vec, fc.nat(4)), { maxLength: 40 }),
        vec,
        fc.integer({ min: 1, max: 45 }),
        fc.boolean(),
        (rows, query, k, ordered) => {
          let ts = 0;
          // ordered: non-decreasing timesteps as the bank keeps them; otherwise arbitrary (restore-proof generality).
          const entries = rows.map(([v, dt]) => ({ timestep: ordered ? (ts += dt) : dt, unit: unitOfValues(v) }));
          const q = unitOfValues(query);
          expect(topK(entries, q, k)).toEqual(sortedTopK(entries, q, k));
          // the packed form (what query scans) ranks the same entries the same way
          const units = new Float64Array(entries.length * 3);
          entries.forEach((e, i) => units.set(e.unit, i * 3));
          expect(
            topKPacked(
              units,
              Float64Array.from(entries, (e) => e.timestep),
              entries.length,
              q,
              k,
            ),
          ).toEqual(sortedTopK(entries, q, k));
        },
      ),
      { numRuns: 500, seed: 5 },
    );
  });

  it('query ranks like the full sort through writes past capacity (token-merge and fifo), resets and restore', () => {
    fc.assert(
      fc.property(
        fc.array(vec, { minLength: 1, maxLength: 30 }),
        vec,
        fc.constantFrom('token-merge' as const, 'fifo' as const),
        (rows, query, consolidation) => {
          const b = started({ capacity: 7, k: 5, consolidation });
          const check = (bank: EpisodeBank): void => {
            const ranked: number[] = [];
            bank.setReadHook((items) => {
              for (const it of items) ranked.push(it.identity.slot);
              return items;
            });
            bank.query(t(query));
            const entries = bank
              .entries()
              .map((e) => ({ timestep: e.timestep, unit: unitOfValues(toFloat64(e.feature)) }));
            expect(ranked).toEqual(sortedTopK(entries, unitOfValues(Array.from(Float32Array.from(query))), 5));
          };
          rows.forEach((v, i) => {
            b.write(i, t(v));
            check(b);
          });
          check(EpisodeBank.restore(b.snapshot()));
          b.reset('again');
          b.write(0, t(rows[0] as number[]));
          check(b);
        },
      ),
      { numRuns: 200, seed: 6 },
    );
  });

  it('pins a case where similarity, then timestep, then index decide', () => {
    const u = (v: number[]): Float64Array => unitOfValues(v);
    const entries = [
      { timestep: 3, unit: u([1, 0]) },
      { timestep: 1, unit: u([0, 1]) },
      { timestep: 1, unit: u([2, 0]) },
      { timestep: 2, unit: u([0, 3]) },
      { timestep: 1, unit: u([0, 5]) },
    ];
    // sims to [1, 0]: 1, 0, 1, 0, 0 → [2 (t1), 0 (t3)], then the zeros by timestep then index: 1, 4, 3
    expect(topK(entries, u([1, 0]), 5)).toEqual([2, 0, 1, 4, 3]);
    expect(topK(entries, u([1, 0]), 3)).toEqual([2, 0, 1]);
    expect(sortedTopK(entries, u([1, 0]), 5)).toEqual([2, 0, 1, 4, 3]);
  });

  it('falls back to the full sort when a similarity is NaN', () => {
    const entries = [
      { timestep: 0, unit: Float64Array.of(1, 0) },
      { timestep: 1, unit: Float64Array.of(NaN, 0) },
      { timestep: 2, unit: Float64Array.of(0.5, 0) },
    ];
    const q = Float64Array.of(1, 0);
    expect(topK(entries, q, 2)).toEqual(sortedTopK(entries, q, 2));
  });

  it('query hands the hook the same items the full sort ranks', () => {
    const b = started({ capacity: 64, k: 4 });
    const seen: RetrievedItem[][] = [];
    b.setReadHook((items) => {
      seen.push([...items]);
      return items;
    });
    const vals = [
      [1, 0, 0],
      [0, 1, 0],
      [1, 1, 0],
      [1, 0, 0],
      [0, 0, 1],
      [2, 0, 0],
      [1, 1, 0],
    ];
    vals.forEach((v, i) => b.write(i, t(v)));
    b.query(t([1, 0.1, 0]));
    const entries = b.entries().map((e) => ({ timestep: e.timestep, unit: unitOfValues(toFloat64(e.feature)) }));
    const want = sortedTopK(entries, unitOfValues([Math.fround(1), Math.fround(0.1), 0]), 4);
    expect(seen[0]?.map((it) => it.identity.slot)).toEqual(want);
    expect(seen[0]?.map((it) => it.identity.timestep)).toEqual([0, 3, 5, 2]);
  });
});
