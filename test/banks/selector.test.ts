import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { FloatDtype } from '../../src/core/tensor.js';
import type { BankRecord, RecordKeys } from '../../src/banks/record.js';
import { PAYLOAD_FIELDS } from '../../src/banks/record.js';
import { selectRecords } from '../../src/banks/selector.js';
import type { SelectableRecord, Selection } from '../../src/banks/selector.js';
import { StructuredBank } from '../../src/banks/structured-bank.js';
import { basis, keys, payload, t } from './helpers.js';

const D = 4;
const e = (i: number): number[] => basis(D, i);

function rec(slot: number, timestep: number, k: RecordKeys): SelectableRecord {
  return { slot, timestep, keys: k };
}
const slots = (s: Selection): number[] => s.picks.map((p) => p.slot);

describe('selector (golden)', () => {
  const bankRecords = [
    rec(0, 0, keys(e(0), e(0), e(0))),
    rec(1, 1, keys(e(1), e(1), e(1))),
    rec(2, 2, keys(e(0), e(1), e(2))),
  ];

  it('ranks by w_cog·cos + w_per·cos', () => {
    const s = selectRecords(keys(e(0), e(0), e(0)), bankRecords);
    expect(s.accepted).toBe(true);
    expect(s.reason).toBe('accepted');
    expect(s.bestSignatureSimilarity).toBe(1);
    expect(slots(s)).toEqual([0, 2, 1]);
    expect(s.picks.map((p) => p.score)).toEqual([1, 0.5, 0]);
  });

  it('weights change the ranking', () => {
    const s = selectRecords(keys(e(0), e(1), e(2)), bankRecords, { weights: { cognitive: 0.9, perceptual: 0.1 } });
    expect(slots(s)).toEqual([2, 0, 1]);
    expect(s.picks[1]?.score).toBe(0.9);
  });

  it('rejects the whole query when the best state-signature similarity is below the gate', () => {
    const s = selectRecords(keys(e(0), e(0), e(3)), bankRecords);
    expect(s).toEqual({
      accepted: false,
      reason: 'below-gate',
      bestSignatureSimilarity: 0,
      candidateCount: 3,
      picks: [],
    });
  });

  it('accepts at exactly the gate and rejects just above it', () => {
    const q = keys(e(0), e(0), [3, 4, 0, 0]); // cos with e0 = 0.6, with e1 = 0.8 (best), exactly
    const at = selectRecords(q, bankRecords, { gate: 0.8 });
    expect(at.accepted).toBe(true);
    expect(at.bestSignatureSimilarity).toBe(0.8);
    const r = selectRecords(q, bankRecords, { gate: 0.8000000000000002 });
    expect(r.reason).toBe('below-gate');
    expect(r.bestSignatureSimilarity).toBe(0.8);
  });

  it('reports an empty candidate set', () => {
    expect(selectRecords(keys(e(0), e(0), e(0)), [])).toEqual({
      accepted: false,
      reason: 'no-candidates',
      bestSignatureSimilarity: null,
      candidateCount: 0,
      picks: [],
    });
  });

  it('returns at most k, and breaks ties by (timestep asc, slot asc)', () => {
    const same = keys(e(0), e(0), e(0));
    const tied = [
      rec(0, 5, same),
      rec(3, 3, same),
      rec(1, 3, same),
      rec(2, 3, same),
      rec(4, 9, keys(e(1), e(1), e(0))),
    ];
    expect(slots(selectRecords(same, tied))).toEqual([1, 2, 3, 0]);
    expect(slots(selectRecords(same, tied, { k: 2 }))).toEqual([1, 2]);
    expect(slots(selectRecords(same, tied, { k: 10 }))).toEqual([1, 2, 3, 0, 4]);
    expect(slots(selectRecords(same, [...tied].reverse()))).toEqual([1, 2, 3, 0]);
  });

  it('reads no payload and no version (structural proof: those getters throw)', () => {
    const trap = (slot: number, timestep: number, k: RecordKeys): BankRecord => {
      const r = { slot, timestep, scope: 's', sourceEpisode: 'x', keys: k } as Record<string, unknown>;
      for (const f of ['payload', 'version']) {
        Object.defineProperty(r, f, {
          get: () => {
            throw new Error(`selector read ${f}`);
          },
        });
      }
      return r as unknown as BankRecord;
    };
    const recs = bankRecords.map((r) => trap(r.slot, r.timestep, r.keys));
    expect(slots(selectRecords(keys(e(0), e(0), e(0)), recs))).toEqual([0, 2, 1]);
  });

  it('refuses key dimension mismatches', () => {
    expect(() => selectRecords(keys([1, 0], [1, 0], [1, 0]), bankRecords)).toThrow(/elements/);
  });
});

// ---- property: payload and version never change a selection --------------------------------------

const DTYPES: FloatDtype[] = ['float32', 'float16', 'bfloat16', 'float64'];
const value = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.double({ min: -4, max: 4, noNaN: true }));

const scenario = fc.integer({ min: 1, max: 6 }).chain((dim) => {
  const vec = fc.array(value, { minLength: dim, maxLength: dim });
  const keyArb = fc.record({ c: vec, p: vec, s: vec, dtype: fc.constantFrom(...DTYPES) });
  return fc.record({
    query: keyArb,
    records: fc.uniqueArray(
      fc.record({ slot: fc.integer({ min: 0, max: 15 }), timestep: fc.integer({ min: 0, max: 5 }), key: keyArb }),
      {
        maxLength: 16,
        selector: (r) => r.slot,
      },
    ),
    versions: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 16, maxLength: 16 }),
    tags: fc.array(fc.double({ noNaN: false }), { minLength: 16, maxLength: 16 }),
    k: fc.integer({ min: 1, max: 6 }),
    gate: fc.double({ min: -1, max: 1, noNaN: true }),
  });
});

describe('selector (property)', () => {
  it('selection ignores payload, version and candidate order (3000 seeded cases)', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const toKeys = (k: { c: number[]; p: number[]; s: number[]; dtype: FloatDtype }): RecordKeys =>
          keys(k.c, k.p, k.s, k.dtype);
        const base: BankRecord[] = sc.records.map((r) => ({
          slot: r.slot,
          scope: 's',
          sourceEpisode: 'a',
          timestep: r.timestep,
          version: 0,
          keys: toKeys(r.key),
          payload: payload(0),
        }));
        const changed: BankRecord[] = base.map((r, i) => {
          const p = { ...r.payload } as Record<string, ReturnType<typeof t>>;
          for (const f of PAYLOAD_FIELDS) p[f] = t([sc.tags[i] as number, -0, NaN], 'bfloat16');
          return { ...r, version: sc.versions[i] as number, payload: p as BankRecord['payload'] };
        });
        const cfg = { k: sc.k, gate: sc.gate };
        const q = toKeys(sc.query);
        const a = selectRecords(q, base, cfg);
        const b = selectRecords(q, changed, cfg);
        const c = selectRecords(q, [...changed].reverse(), cfg);
        expect(b).toEqual(a);
        expect({ ...c, picks: c.picks.map((p) => ({ ...p, index: 0 })) }).toEqual({
          ...a,
          picks: a.picks.map((p) => ({ ...p, index: 0 })),
        });
      }),
      { seed: 20260915, numRuns: 3000 },
    );
  });

  it('through the bank: installing other payloads never changes what a query selects (1000 seeded cases)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 })), {
          minLength: 1,
          maxLength: 20,
        }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 })), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.integer(),
        (writes, queries, tag) => {
          const make = (): StructuredBank => {
            const bank = new StructuredBank({ capacity: 6, mergeThreshold: 0.99 });
            for (const [a, b] of writes) {
              bank.query('s', keys(basis(8, a, 0.1), basis(8, b, 0.2), basis(8, a, 0.3)), { episode: 'e' });
              bank.write('s', {
                keys: keys(basis(8, a, 0.1), basis(8, b, 0.2), basis(8, (a + b) % 8, 0.3)),
                payload: payload(a * 8 + b),
                sourceEpisode: 'e',
              });
            }
            return bank;
          };
          const ref = make();
          const alt = make();
          alt.replaceRecords(
            's',
            alt.records('s').map((r) => ({ ...r, payload: payload(tag, 'float16') })),
          );
          for (const [a, b] of queries) {
            const q = keys(basis(8, b, 0.1), basis(8, a, 0.2), basis(8, a, 0.3));
            const x = ref.query('s', q, { episode: 'e2' });
            const y = alt.query('s', q, { episode: 'e2' });
            expect(y.selection).toEqual(x.selection);
            expect(y.items.map((i) => i.identity)).toEqual(x.items.map((i) => i.identity));
            expect(y.ctx).toEqual(x.ctx);
          }
        },
      ),
      { seed: 7, numRuns: 1000 },
    );
  });
});
