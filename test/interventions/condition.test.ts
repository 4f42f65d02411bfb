import { describe, expect, it } from 'vitest';
import type { RetrievedItem } from '../../src/banks/record.js';
import { isImepError } from '../../src/core/errors.js';
import { Prng } from '../../src/core/prng.js';
import { tensorBytes, tensorFrom, tensorsBitEqual } from '../../src/core/tensor.js';
import { conditionLabel, interventionHook, type ConditionSpec } from '../../src/interventions/condition.js';
import { snapshotRecords } from '../../src/interventions/install.js';
import { fixedOracle } from '../../src/interventions/oracle.js';
import { replicateHook } from '../../src/interventions/replicate.js';
import { FakeBank, makeRecord } from './helpers.js';

function setup(): FakeBank {
  const bank = new FakeBank();
  const p = new Prng('cond');
  bank.load([0, 1, 2].map((s) => makeRecord(p, 'u', s, s)));
  bank.load([0, 1, 2, 3].map((s) => makeRecord(p, 'd', s, s)));
  bank.load([0].map((s) => makeRecord(p, 'tiny', s, s)));
  return bank;
}

function bytesOf(items: readonly RetrievedItem[]): string {
  return items
    .map((it) =>
      Object.keys(it.leaves)
        .sort()
        .map((k) => Buffer.from(tensorBytes(it.leaves[k]!)).toString('hex'))
        .join('|'),
    )
    .join('/');
}

describe('interventionHook: every condition installs the same way', () => {
  it('A and C return the very same items (C: identical bytes, never installs)', () => {
    for (const spec of [{ kind: 'A' }, { kind: 'C' }] as const) {
      const bank = setup();
      const h = interventionHook(spec, { scope: 'u', point: 'p' });
      bank.setReadHook(h.hook);
      const ref = bank.records('u');
      expect(h.atPoint(bank)).toEqual({ kind: 'none' });
      expect(bank.replaceCalls).toBe(0);
      const out = bank.query('u', 'e', [0, 1]);
      expect(bytesOf(out)).toBe(bytesOf(ref.slice(0, 2).map((r) => ({ identity: r, leaves: r.payload }))));
      expect(h.bookkeeping()).toMatchObject({ condition: spec.kind, reads: 1, emptyReads: 0, substitutedReads: 0 });
    }
    const items: RetrievedItem[] = [
      {
        identity: { slot: 0, scope: 's', sourceEpisode: 'e', timestep: 0, version: 0 },
        leaves: { f: tensorFrom('float16', [1, 2]) },
      },
    ];
    const ctx = { bank: 'b', scope: 's', episode: 'e', queryIndex: 0, decisionStep: true, candidateCount: 1 };
    expect(replicateHook(items, ctx)).toBe(items);
  });

  it('N_block empties every read and leaves the clock and records alone; N_clear clears keeping the clock', () => {
    const bank = setup();
    const block = interventionHook({ kind: 'N', variant: 'block' }, { scope: 'u', point: 'p' });
    bank.setReadHook(block.hook);
    bank.query('u', 'e', [0]);
    block.atPoint(bank);
    expect(bank.query('u', 'e', [0, 1])).toEqual([]);
    expect(bank.records('u').length).toBe(3);
    expect(bank.clock('u')).toBe(2);
    expect(block.bookkeeping()).toMatchObject({ condition: 'N_block', reads: 2 });

    const clear = interventionHook({ kind: 'N', variant: 'clear' }, { scope: 'u', point: 'attempt-2-start' });
    bank.setReadHook(clear.hook);
    const out = clear.atPoint(bank);
    expect(out).toEqual({
      kind: 'cleared',
      record: {
        condition: 'N_clear',
        scope: 'u',
        point: 'attempt-2-start',
        clearedCount: 3,
        clockBefore: 2,
        clockAfter: 2,
      },
    });
    expect(bank.query('u', 'e', [0, 1])).toEqual([]);
    expect(bank.clock('u')).toBe(3);
  });

  it('O returns the harness-supplied items', () => {
    const bank = setup();
    const fact: RetrievedItem = {
      identity: { slot: 0, scope: 'u', sourceEpisode: 'oracle', timestep: 0, version: 0 },
      leaves: { decision: tensorFrom('float32', [0, 1, 0]) },
    };
    const h = interventionHook(
      { kind: 'O' },
      { scope: 'u', point: 'p', oracle: fixedOracle(new Map([['u', [fact]]])) },
    );
    bank.setReadHook(h.hook);
    expect(bank.query('u', 'e', [0, 1])).toEqual([fact]);
    expect(h.bookkeeping().substitutedReads).toBe(1);
    expect(() => interventionHook({ kind: 'O' }, { scope: 'u', point: 'p' })).toThrow(/oracle/);
  });

  it('U at install goes through replaceRecords; U at read changes every read and leaves the bank alone', () => {
    const bank = setup();
    const inst = interventionHook(
      { kind: 'U', direction: 'away', installation: 'install' },
      { scope: 'u', point: 'p' },
    );
    bank.setReadHook(inst.hook);
    const before = bank.records('u');
    const o = inst.atPoint(bank);
    expect(o.kind).toBe('installed');
    expect(bank.replaceCalls).toBe(1);
    expect(tensorsBitEqual(bank.records('u')[0]!.payload.actionChunk, before[0]!.payload.actionChunk)).toBe(false);
    expect(() => inst.atPoint(bank)).toThrow(/already run/);

    const bank2 = setup();
    const rd = interventionHook(
      { kind: 'U', direction: 'toward-zero', installation: 'read' },
      { scope: 'u', point: 'p' },
    );
    bank2.setReadHook(rd.hook);
    rd.atPoint(bank2);
    const out = bank2.query('u', 'e', [0]);
    expect(bank2.replaceCalls).toBe(0);
    expect(tensorsBitEqual(out[0]!.leaves.actionChunk!, bank2.records('u')[0]!.payload.actionChunk)).toBe(false);
    expect(rd.bookkeeping()).toMatchObject({ condition: 'U', reads: 1, substitutedReads: 1, nonFinite: 0 });
  });

  it('S_π and T_μ need a seed and are deterministic per read', () => {
    for (const kind of ['S_pi', 'T_mu'] as const) {
      expect(() => interventionHook({ kind }, { scope: 'u', point: 'p' })).toThrow(/seed/);
      const results = [0, 1].map(() => {
        const bank = setup();
        const h = interventionHook({ kind }, { scope: 'u', point: 'p', seed: 11 });
        bank.setReadHook(h.hook);
        return bytesOf(bank.query('u', 'e', [0, 1, 2]));
      });
      expect(results[0]).toBe(results[1]);
    }
  });

  it('S/T install the donor payload; a short donor fails closed and every later read throws E_DONOR_SHORT', () => {
    const bank = setup();
    const snap = snapshotRecords(bank, ['d', 'tiny']);
    const s = interventionHook(
      { kind: 'S', seed: 5 },
      { scope: 'u', point: 'p', donor: { scope: 'd', records: snap.get('d')! } },
    );
    bank.setReadHook(s.hook);
    expect(s.atPoint(bank).kind).toBe('installed');
    expect(s.bookkeeping()).toMatchObject({ condition: 'S', donor: 'd', seed: 5 });

    const bank2 = setup();
    const t = interventionHook(
      { kind: 'T', seed: 5 },
      { scope: 'u', point: 'p', donor: { scope: 'tiny', records: snap.get('tiny')! } },
    );
    bank2.setReadHook(t.hook);
    expect(t.atPoint(bank2)).toEqual({
      kind: 'donor-short',
      scope: 'u',
      donor: 'tiny',
      recipientCount: 3,
      donorCount: 1,
    });
    expect(bank2.replaceCalls).toBe(0);
    try {
      bank2.query('u', 'e', [0]);
      throw new Error('expected E_DONOR_SHORT');
    } catch (e) {
      expect(isImepError(e) && e.code === 'E_DONOR_SHORT').toBe(true);
    }
    expect(() => interventionHook({ kind: 'S', seed: 1 }, { scope: 'u', point: 'p' })).toThrow(/donor/);
    expect(() =>
      interventionHook({ kind: 'S', seed: 1 }, { scope: 'u', point: 'p', donor: { scope: 'u', records: [] } }),
    ).toThrow(/own donor/);
  });

  it('labels name the N variants apart', () => {
    const specs: ConditionSpec[] = [{ kind: 'N', variant: 'block' }, { kind: 'N', variant: 'clear' }, { kind: 'S_pi' }];
    expect(specs.map(conditionLabel)).toEqual(['N_block', 'N_clear', 'S_pi']);
  });
});
