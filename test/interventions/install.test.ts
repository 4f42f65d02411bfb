import { describe, expect, it } from 'vitest';
import { PAYLOAD_FIELDS, type BankRecord } from '../../src/banks/record.js';
import { Prng } from '../../src/core/prng.js';
import { tensorsBitEqual, type FloatDtype } from '../../src/core/tensor.js';
import { assignDonors } from '../../src/interventions/donor-assignment.js';
import { payloadDigest } from '../../src/interventions/digest.js';
import { installDonorSwaps, installPayloads, snapshotRecords } from '../../src/interventions/install.js';
import { oneUlpOperator } from '../../src/interventions/one-ulp.js';
import { permuteOperator } from '../../src/interventions/permute.js';
import { stepTensorUlp } from '../../src/interventions/ulp.js';
import { FakeBank, identityEqual, keysBitEqual, makeRecord } from './helpers.js';

function bankWith(scopes: Record<string, number>, dtype: FloatDtype = 'float32'): FakeBank {
  const bank = new FakeBank();
  const p = new Prng('bank');
  for (const [scope, n] of Object.entries(scopes)) {
    // slots deliberately not in timestep order
    bank.load(Array.from({ length: n }, (_, i) => makeRecord(p, scope, (i * 5) % 7, n - i, { dtype, version: i % 2 })));
  }
  return bank;
}

describe('installPayloads (the shared routine for U/S/T)', () => {
  it('U installs every field stepped by one ULP in its own dtype, identities and keys kept, with a digest record', () => {
    for (const dtype of ['float16', 'bfloat16', 'float32', 'float64'] as const) {
      const bank = bankWith({ u: 5 }, dtype);
      const before = bank.records('u');
      const r = installPayloads(bank, 'u', 'attempt-2-start', { kind: 'leaf', operator: oneUlpOperator('away') });
      if (r.kind !== 'installed') throw new Error('expected installed');
      expect(bank.replaceCalls).toBe(1);
      const after = bank.records('u');
      after.forEach((rec, i) => {
        const old = before[i] as BankRecord;
        expect(identityEqual(rec, old)).toBe(true);
        expect(keysBitEqual(rec.keys, old.keys)).toBe(true);
        for (const f of PAYLOAD_FIELDS)
          expect(tensorsBitEqual(rec.payload[f], stepTensorUlp(old.payload[f], 'away').tensor)).toBe(true);
      });
      expect(r.record).toMatchObject({
        scope: 'u',
        point: 'attempt-2-start',
        condition: 'U',
        params: { direction: 'away' },
        donor: null,
        prng: null,
        nonFinite: 0,
      });
      expect(r.record.records.map((d) => d.timestep)).toEqual(
        [...r.record.records.map((d) => d.timestep)].sort((a, b) => a - b),
      );
      for (const d of r.record.records) {
        const old = before.find((x) => x.slot === d.slot) as BankRecord;
        expect(d.before).toBe(payloadDigest(old.payload));
        expect(d.after).not.toBe(d.before);
      }
    }
  });

  it('a seeded operator needs a registered seed and is deterministic in it', () => {
    const a = bankWith({ u: 4 }),
      b = bankWith({ u: 4 });
    expect(() => installPayloads(a, 'u', 'p', { kind: 'leaf', operator: permuteOperator })).toThrow(/seed/);
    const ra = installPayloads(a, 'u', 'p', { kind: 'leaf', operator: permuteOperator, seed: 9 });
    const rb = installPayloads(b, 'u', 'p', { kind: 'leaf', operator: permuteOperator, seed: 9 });
    if (ra.kind !== 'installed' || rb.kind !== 'installed') throw new Error('expected installed');
    expect(ra.record.records).toEqual(rb.record.records);
    expect(ra.record.prng).toEqual(new Prng(9).fork('install/u').spec);
  });

  it('S/T swaps donor payloads in (timestep, slot) order and fails closed on a short donor without writing', () => {
    const bank = bankWith({ r: 4, d: 6, short: 3 });
    const snap = snapshotRecords(bank, ['d', 'short']);
    const before = bank.records('r');
    const short = installPayloads(bank, 'r', 'p', {
      kind: 'donor',
      condition: 'T',
      donorScope: 'short',
      donorRecords: snap.get('short') ?? [],
    });
    expect(short).toEqual({
      kind: 'donor-short',
      scope: 'r',
      point: 'p',
      donor: 'short',
      recipientCount: 4,
      donorCount: 3,
    });
    expect(bank.replaceCalls).toBe(0);
    expect(bank.records('r')).toEqual(before);
    const ok = installPayloads(bank, 'r', 'p', {
      kind: 'donor',
      condition: 'S',
      donorScope: 'd',
      donorRecords: snap.get('d') ?? [],
    });
    if (ok.kind !== 'installed') throw new Error('expected installed');
    expect(ok.record.donor).toBe('d');
    expect(ok.record.condition).toBe('S');
    for (const d of ok.record.records) expect(d.donorSlot).not.toBeNull();
    expect(() =>
      installPayloads(bank, 'r', 'p', { kind: 'donor', condition: 'S', donorScope: 'r', donorRecords: [] }),
    ).toThrow(/own donor/);
  });

  it('installDonorSwaps snapshots donors first, so a scope that is also a donor gives its reference payload', () => {
    const bank = bankWith({ a: 3, b: 3, c: 3 });
    const ref = snapshotRecords(bank, ['a', 'b', 'c']);
    const assignment = assignDonors({
      units: [
        { scope: 'a', fact: 'x' },
        { scope: 'b', fact: 'x' },
        { scope: 'c', fact: 'x' },
      ],
      mode: 'same-fact',
      seed: 3,
    });
    const results = installDonorSwaps(bank, assignment, 'p', 'S');
    expect(results.size).toBe(3);
    for (const [recipient, donor] of assignment.donors) {
      const got = [...bank.records(recipient)].sort((x, y) => x.timestep - y.timestep || x.slot - y.slot);
      const want = [...(ref.get(donor) ?? [])].sort((x, y) => x.timestep - y.timestep || x.slot - y.slot);
      got.forEach((g, i) => expect(payloadDigest(g.payload)).toBe(payloadDigest((want[i] as BankRecord).payload)));
    }
  });
});
