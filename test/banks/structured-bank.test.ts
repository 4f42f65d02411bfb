import { describe, expect, it } from 'vitest';
import { tensorFrom, tensorsBitEqual } from '../../src/core/tensor.js';
import { isImepError } from '../../src/core/errors.js';
import { MERGE_OVERWRITTEN_FIELDS, PAYLOAD_FIELDS } from '../../src/banks/record.js';
import type { BankRecord, ReadHook } from '../../src/banks/record.js';
import { MERGE_OVERWRITTEN_KEYS, StructuredBank } from '../../src/banks/structured-bank.js';
import type { WriteEvent } from '../../src/banks/structured-bank.js';
import { basis, candidate, keys, payload, t } from './helpers.js';

const D = 8;
const k = (i: number): ReturnType<typeof keys> => keys(basis(D, i), basis(D, i), basis(D, i));

function bankError(fn: () => unknown): { code: string; field: string | undefined; message: string } {
  try {
    fn();
  } catch (e) {
    if (isImepError(e)) return { code: e.code, field: e.field, message: e.message };
    throw e;
  }
  throw new Error('expected an ImepError');
}

describe('StructuredBank: clock and inserts', () => {
  it('advances the scope clock once per query; queryIndex is the advanced value', () => {
    const bank = new StructuredBank();
    expect(bank.clock('a')).toBe(0);
    const r1 = bank.query('a', k(0), { episode: 'e' });
    expect(r1.ctx).toEqual({
      bank: 'pcmb',
      scope: 'a',
      episode: 'e',
      queryIndex: 1,
      decisionStep: true,
      candidateCount: 0,
    });
    expect(r1.selection.reason).toBe('no-candidates');
    bank.query('a', k(0), { episode: 'e', decisionStep: false });
    expect(bank.clock('a')).toBe(2);
    expect(bank.clock('b')).toBe(0);
    expect(bank.scopes()).toEqual(['a']);
  });

  it('inserts into the lowest free slot, version 0, timestep = current clock', () => {
    const bank = new StructuredBank();
    const events: WriteEvent[] = [];
    bank.onWrite((ev) => events.push(ev));
    expect(bank.write('s', candidate(k(0), 0))).toEqual({ kind: 'insert', scope: 's', slot: 0, queryIndex: 0 });
    bank.query('s', k(0), { episode: 'e' });
    bank.query('s', k(0), { episode: 'e' });
    bank.write('s', candidate(k(1), 1));
    const recs = bank.records('s');
    expect(recs.map((r) => [r.slot, r.timestep, r.version, r.sourceEpisode, r.scope])).toEqual([
      [0, 0, 0, 'ep1', 's'],
      [1, 2, 0, 'ep1', 's'],
    ]);
    expect(events.map((ev) => ev.kind)).toEqual(['insert', 'insert']);
    expect(events[1]).toEqual({ kind: 'insert', scope: 's', slot: 1, queryIndex: 2 });
  });

  it('stores copies: mutating the written tensors does not reach the bank', () => {
    const bank = new StructuredBank();
    const c = candidate(k(0), 5);
    bank.write('s', c);
    (c.payload.actionChunk.data as Float32Array)[0] = 99;
    (c.keys.cognitiveKey.data as Float32Array)[0] = -1;
    const r = bank.records('s')[0] as BankRecord;
    expect(r.payload.actionChunk.data[0]).toBe(5);
    expect(r.keys.cognitiveKey.data[0]).toBe(1);
  });

  it('refuses non-finite keys, malformed payloads and key size changes within a scope', () => {
    const bank = new StructuredBank();
    expect(bankError(() => bank.write('s', candidate(keys([NaN, 0], [1, 0], [1, 0]), 0))).field).toBe(
      'keys.cognitiveKey',
    );
    const bad = { ...payload(0), outcomeEmbedding: { dtype: 'float32', shape: [3], data: new Float32Array(2) } };
    expect(bankError(() => bank.write('s', { keys: k(0), payload: bad as never, sourceEpisode: 'e' })).field).toBe(
      'payload.outcomeEmbedding',
    );
    bank.write('s', candidate(k(0), 0));
    expect(bankError(() => bank.write('s', candidate(keys([1], [1], [1]), 0))).code).toBe('E_BANK_INVALID');
    expect(bankError(() => bank.query('s', keys([1], [1], [1]), { episode: 'e' })).field).toBe('query.cognitiveKey');
    expect(bank.clock('s')).toBe(0); // a refused query does not tick the clock
  });
});

describe('StructuredBank: merge', () => {
  it('keeps the slot, sets timestep to the clock, bumps the version, overwrites exactly the documented fields', () => {
    const bank = new StructuredBank({ mergeThreshold: 0.9 });
    const original = {
      keys: keys(basis(D, 1), basis(D, 2), basis(D, 3, 0.1)),
      payload: payload(1),
      sourceEpisode: 'ep1',
    };
    bank.write('s', candidate(k(0), 0));
    bank.write('s', original);
    for (let i = 0; i < 5; i++) bank.query('s', k(3), { episode: 'ep2' });
    const incoming = {
      keys: keys(basis(D, 5), basis(D, 6), basis(D, 3, 0.11)),
      payload: payload(2, 'float16'),
      sourceEpisode: 'ep2',
    };
    const events: WriteEvent[] = [];
    bank.onWrite((e) => events.push(e));
    expect(bank.write('s', incoming)).toEqual({ kind: 'merge', scope: 's', slot: 1, queryIndex: 5 });
    expect(events).toEqual([{ kind: 'merge', scope: 's', slot: 1, queryIndex: 5 }]);
    const merged = bank.records('s')[1] as BankRecord;
    expect([merged.slot, merged.timestep, merged.version, merged.sourceEpisode]).toEqual([1, 5, 1, 'ep1']);
    expect(MERGE_OVERWRITTEN_FIELDS).toEqual(['cognitiveValue', 'perceptualValue']);
    expect(MERGE_OVERWRITTEN_KEYS).toEqual(['stateSignature']);
    for (const f of PAYLOAD_FIELDS) {
      const from = (MERGE_OVERWRITTEN_FIELDS as readonly string[]).includes(f)
        ? incoming.payload[f]
        : original.payload[f];
      expect(tensorsBitEqual(merged.payload[f], from), f).toBe(true);
    }
    expect(tensorsBitEqual(merged.keys.stateSignature, incoming.keys.stateSignature)).toBe(true);
    expect(tensorsBitEqual(merged.keys.cognitiveKey, original.keys.cognitiveKey)).toBe(true);
    expect(tensorsBitEqual(merged.keys.perceptualKey, original.keys.perceptualKey)).toBe(true);
    // a second merge into the same slot
    bank.query('s', k(3), { episode: 'ep2' });
    bank.write('s', incoming);
    const twice = bank.records('s')[1] as BankRecord;
    expect([twice.timestep, twice.version]).toEqual([6, 2]);
    expect(bank.records('s')).toHaveLength(2);
  });

  it('merges into the most similar record; equal similarity goes to the earlier (timestep, slot)', () => {
    const sig = (...v: number[]): number[] => [...v, ...new Array<number>(D - v.length).fill(0)];
    const bank = new StructuredBank({ mergeThreshold: 0.7, capacity: 4 });
    bank.query('s', k(0), { episode: 'e' }); // clock 1
    bank.write('s', candidate(keys(basis(D, 0), basis(D, 0), sig(1, 1)), 0)); // slot 0, t1
    bank.write('s', candidate(keys(basis(D, 1), basis(D, 1), sig(1, -1)), 1)); // slot 1, t1
    bank.write('s', candidate(keys(basis(D, 2), basis(D, 2), sig(0, 0, 1)), 2)); // slot 2, t1
    // e0 is equally similar (1/√2) to slots 0 and 1: equal timesteps → lower slot
    const tieProbe = (): ReturnType<typeof keys> => keys(basis(D, 3), basis(D, 3), sig(1));
    const probeBank = (): StructuredBank => StructuredBank.restore(bank.snapshot());
    expect(probeBank().write('s', candidate(tieProbe(), 9)).slot).toBe(0);
    // the most similar wins over the lower slot
    expect(probeBank().write('s', candidate(keys(basis(D, 3), basis(D, 3), sig(1, -0.9)), 9)).slot).toBe(1);
    // refresh slot 0 at clock 2 with a signature of the same direction: now slot 1 is older and wins the tie
    bank.query('s', k(0), { episode: 'e' });
    expect(bank.write('s', candidate(keys(basis(D, 3), basis(D, 3), sig(2, 2)), 3))).toMatchObject({
      kind: 'merge',
      slot: 0,
    });
    expect(bank.write('s', candidate(tieProbe(), 4))).toMatchObject({ kind: 'merge', slot: 1 });
  });

  it('does not merge below the threshold', () => {
    const bank = new StructuredBank({ mergeThreshold: 0.95 });
    bank.write('s', candidate(k(0), 0));
    expect(bank.write('s', candidate(keys(basis(D, 0), basis(D, 0), [1, 0.5, 0, 0, 0, 0, 0, 0]), 1)).kind).toBe(
      'insert',
    );
  });
});

describe('StructuredBank: eviction', () => {
  it('evicts the oldest timestep (then lowest slot) and reports evict then insert', () => {
    const bank = new StructuredBank({ capacity: 3, mergeThreshold: 2 });
    const events: WriteEvent[] = [];
    const stop = bank.onWrite((e) => events.push(e));
    bank.query('s', k(0), { episode: 'e' }); // clock 1
    bank.write('s', candidate(k(0), 0)); // slot 0 t1
    bank.query('s', k(0), { episode: 'e' }); // clock 2
    bank.write('s', candidate(k(1), 1)); // slot 1 t2
    bank.write('s', candidate(k(2), 2)); // slot 2 t2
    expect(bank.write('s', candidate(k(3), 3))).toEqual({ kind: 'insert', scope: 's', slot: 0, queryIndex: 2 });
    expect(events.slice(-2)).toEqual([
      { kind: 'evict', scope: 's', slot: 0, queryIndex: 2 },
      { kind: 'insert', scope: 's', slot: 0, queryIndex: 2 },
    ]);
    // now all three have timestep 2: the lowest slot goes next
    expect(bank.write('s', candidate(k(4), 4)).slot).toBe(0);
    expect(bank.records('s').map((r) => [r.slot, r.payload.actionChunk.data[0]])).toEqual([
      [0, 4],
      [1, 1],
      [2, 2],
    ]);
    stop();
    bank.write('s', candidate(k(5), 5));
    expect(events).toHaveLength(7);
  });
});

describe('StructuredBank: reads', () => {
  it('passes copies through the read hook and returns what the hook returns', () => {
    const bank = new StructuredBank({ mergeThreshold: 2 });
    for (let i = 0; i < 6; i++)
      bank.write('s', candidate(keys(basis(D, i, 0.2), basis(D, i, 0.2), basis(D, 0, 0.5)), i));
    const seen: unknown[] = [];
    const hook: ReadHook = (items, ctx) => {
      seen.push(ctx);
      for (const it of items) (it.leaves['actionChunk']?.data as Float32Array)[0] = -7; // mutate in place
      return items.slice(1);
    };
    bank.setReadHook(hook);
    const r = bank.query('s', keys(basis(D, 2), basis(D, 2), basis(D, 0)), { episode: 'ep9' });
    expect(r.selection.accepted).toBe(true);
    expect(r.selected.map((x) => x.slot)).toEqual([2, 0, 1, 3]);
    expect(r.items.map((x) => x.identity.slot)).toEqual([0, 1, 3]);
    expect(r.items[0]?.identity).toEqual({ slot: 0, scope: 's', sourceEpisode: 'ep1', timestep: 0, version: 0 });
    expect(Object.keys(r.items[0]?.leaves ?? {})).toEqual([...PAYLOAD_FIELDS]);
    expect(seen).toEqual([r.ctx]);
    expect(r.ctx.candidateCount).toBe(6);
    // the in-place mutation reached neither the bank nor `selected`
    expect(bank.records('s').map((x) => x.payload.actionChunk.data[0])).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.selected[0]?.payload.actionChunk.data[0]).toBe(2);
  });

  it('calls the hook with an empty list when the gate rejects', () => {
    const bank = new StructuredBank();
    bank.write('s', candidate(k(0), 0));
    let calls = 0;
    bank.setReadHook((items) => {
      calls++;
      expect(items).toEqual([]);
      return items;
    });
    const r = bank.query('s', k(1), { episode: 'e' });
    expect(r.selection.reason).toBe('below-gate');
    expect(calls).toBe(1);
  });
});

describe('StructuredBank: clearing', () => {
  it('clearScope keepClock keeps the clock; without it the scope is forgotten', () => {
    const bank = new StructuredBank();
    for (const s of ['a', 'b']) {
      bank.query(s, k(0), { episode: 'e' });
      bank.query(s, k(0), { episode: 'e' });
      bank.write(s, candidate(k(0), 0));
    }
    bank.clearScope('a', { keepClock: true });
    expect(bank.records('a')).toEqual([]);
    expect(bank.clock('a')).toBe(2);
    expect(bank.query('a', k(0), { episode: 'e2' }).ctx).toMatchObject({ queryIndex: 3, candidateCount: 0 });
    bank.write('a', candidate(k(1), 1));
    expect(bank.records('a')[0]).toMatchObject({ slot: 0, timestep: 3, version: 0 });
    bank.clearScope('b', { keepClock: false });
    expect(bank.clock('b')).toBe(0);
    expect(bank.scopes()).toEqual(['a']);
    bank.clearAll();
    expect(bank.scopes()).toEqual([]);
    expect(bank.clock('a')).toBe(0);
  });
});

describe('StructuredBank: replaceRecords', () => {
  function filled(): StructuredBank {
    const bank = new StructuredBank();
    bank.query('s', k(0), { episode: 'e' });
    bank.write('s', candidate(k(0), 0));
    bank.write('s', candidate(k(1), 1));
    bank.write('s', candidate(keys(basis(D, 1), basis(D, 1), basis(D, 1, 0.01)), 2)); // merge into slot 1
    return bank;
  }

  it('installs new payloads and keeps everything else', () => {
    const bank = filled();
    const before = bank.records('s');
    const next = before.map((r) => ({ ...r, payload: payload(100 + r.slot, 'bfloat16') }));
    bank.replaceRecords('s', [...next].reverse());
    const after = bank.records('s');
    expect(after.map((r) => [r.slot, r.scope, r.sourceEpisode, r.timestep, r.version])).toEqual(
      before.map((r) => [r.slot, r.scope, r.sourceEpisode, r.timestep, r.version]),
    );
    after.forEach((r, i) => {
      expect(tensorsBitEqual(r.payload.failureSignature, payload(100 + i, 'bfloat16').failureSignature)).toBe(true);
      for (const key of ['cognitiveKey', 'perceptualKey', 'stateSignature'] as const)
        expect(tensorsBitEqual(r.keys[key], before[i]?.keys[key] as never)).toBe(true);
    });
  });

  it('refuses changed identities, non-identical keys, missing, extra or duplicate slots — naming slot and field', () => {
    const bank = filled();
    const recs = bank.records('s');
    const with1 = (patch: Partial<BankRecord>): BankRecord[] =>
      recs.map((r) => (r.slot === 1 ? { ...r, ...patch } : r));
    expect(bankError(() => bank.replaceRecords('s', with1({ timestep: 9 })))).toMatchObject({
      code: 'E_BANK_INVALID',
      field: 'records[slot=1].timestep',
    });
    expect(bankError(() => bank.replaceRecords('s', with1({ version: 0 }))).field).toBe('records[slot=1].version');
    expect(bankError(() => bank.replaceRecords('s', with1({ scope: 'x' }))).field).toBe('records[slot=1].scope');
    expect(bankError(() => bank.replaceRecords('s', with1({ sourceEpisode: 'x' }))).message).toMatch(
      /slot 1: sourceEpisode differs/,
    );
    const r1 = recs[1] as BankRecord;
    // same values, other dtype → not byte-identical
    const f64 = tensorFrom('float64', Array.from(r1.keys.perceptualKey.data as Float32Array));
    expect(bankError(() => bank.replaceRecords('s', with1({ keys: { ...r1.keys, perceptualKey: f64 } }))).field).toBe(
      'records[slot=1].keys.perceptualKey',
    );
    // -0 instead of 0 is a different byte pattern
    const r0 = recs[0] as BankRecord;
    const neg = t(Array.from(r0.keys.stateSignature.data as Float32Array, (v) => (v === 0 ? -0 : v)));
    const negRecs = recs.map((r) => (r.slot === 0 ? { ...r, keys: { ...r.keys, stateSignature: neg } } : r));
    expect(bankError(() => bank.replaceRecords('s', negRecs)).field).toBe('records[slot=0].keys.stateSignature');
    expect(bankError(() => bank.replaceRecords('s', recs.slice(1))).field).toBe('records');
    expect(bankError(() => bank.replaceRecords('s', [recs[0] as BankRecord, { ...r1, slot: 5 }])).field).toBe(
      'records[slot=5].slot',
    );
    expect(bankError(() => bank.replaceRecords('s', [r1, r1])).field).toBe('records[slot=1].slot');
    expect(
      bankError(() => bank.replaceRecords('s', with1({ payload: { ...r1.payload, actionChunk: undefined } as never })))
        .field,
    ).toBe('records[slot=1].payload.actionChunk');
    expect(bankError(() => bank.replaceRecords('other', recs)).field).toBe('records');
    // nothing changed by any refusal
    expect(bank.snapshot()).toEqual(filled().snapshot());
  });
});

describe('StructuredBank: determinism', () => {
  it('the same operations give byte-identical snapshots', () => {
    const run = (): Uint8Array => {
      const bank = new StructuredBank({ capacity: 4 });
      for (let i = 0; i < 30; i++) {
        const scope = `s${i % 3}`;
        bank.query(scope, keys(basis(D, i % D, 0.3), basis(D, (i * 3) % D), basis(D, (i * 5) % D, 0.2)), {
          episode: `e${i}`,
        });
        bank.write(scope, {
          keys: keys(basis(D, i % D), basis(D, (i * 7) % D), basis(D, (i * 5) % D, 0.25)),
          payload: payload(i, 'float16'),
          sourceEpisode: `e${i}`,
        });
      }
      return bank.snapshot();
    };
    expect(Buffer.from(run()).equals(Buffer.from(run()))).toBe(true);
  });

  it('validates its config', () => {
    expect(bankError(() => new StructuredBank({ capacity: 0 })).field).toBe('capacity');
    expect(bankError(() => new StructuredBank({ k: 1.5 })).field).toBe('k');
    expect(bankError(() => new StructuredBank({ gate: NaN })).field).toBe('gate');
    expect(bankError(() => new StructuredBank({ weights: { cognitive: Infinity, perceptual: 0 } })).field).toBe(
      'weights.cognitive',
    );
  });
});

describe('StructuredBank: contract with src/interventions', () => {
  it('satisfies the InstallTarget surface the interventions code against', async () => {
    const { StructuredBank: Bank } = await import('../../src/banks/index.js');
    type Target = import('../../src/interventions/install-target.js').InstallTarget;
    const target: Target = new Bank();
    expect(typeof target.replaceRecords).toBe('function');
  });
});
