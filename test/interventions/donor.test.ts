import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareByTimestepSlot, PAYLOAD_FIELDS, type BankRecord } from '../../src/banks/record.js';
import { isImepError } from '../../src/core/errors.js';
import { Prng } from '../../src/core/prng.js';
import { tensorsBitEqual } from '../../src/core/tensor.js';
import { assignDonors, type DonorUnit } from '../../src/interventions/donor-assignment.js';
import { swapPayloads } from '../../src/interventions/donor-swap.js';
import { keysBitEqual, makeRecord } from './helpers.js';

fc.configureGlobal({ seed: 20260904, numRuns: 1500 });

/** Records with distinct slots and arbitrary (possibly tied) timesteps, in arbitrary order. */
function recordsArb(scope: string): fc.Arbitrary<BankRecord[]> {
  return fc
    .tuple(fc.uniqueArray(fc.integer({ min: 0, max: 31 }), { minLength: 0, maxLength: 10 }), fc.integer())
    .chain(([slots, seed]) =>
      fc.array(fc.integer({ min: 0, max: 5 }), { minLength: slots.length, maxLength: slots.length }).map((ts) => {
        const prng = new Prng(seed);
        return slots.map((slot, i) => makeRecord(prng, scope, slot, ts[i] as number, { version: (slot * 7) % 3 }));
      }),
    );
}

describe('S/T donor swap', () => {
  it('keeps identities and keys byte-identical, moves payloads by (timestep, slot) position, fails closed when short', () => {
    fc.assert(
      fc.property(recordsArb('recipient'), recordsArb('donor'), (recipient, donor) => {
        const r = swapPayloads(recipient, donor);
        if (donor.length < recipient.length) {
          expect(r).toEqual({ kind: 'donor-short', recipientCount: recipient.length, donorCount: donor.length });
          return;
        }
        if (r.kind !== 'swapped') throw new Error('expected a swap');
        expect(r.records.length).toBe(recipient.length);
        const dOrder = [...donor].sort(compareByTimestepSlot);
        const rOrder = [...recipient].sort(compareByTimestepSlot);
        recipient.forEach((orig, i) => {
          const out = r.records[i] as BankRecord;
          // kept fields: same order as given, byte-identical
          expect([out.slot, out.scope, out.sourceEpisode, out.timestep, out.version]).toEqual([
            orig.slot,
            orig.scope,
            orig.sourceEpisode,
            orig.timestep,
            orig.version,
          ]);
          expect(keysBitEqual(out.keys, orig.keys)).toBe(true);
          const pos = rOrder.indexOf(orig);
          const d = dOrder[pos] as BankRecord;
          for (const f of PAYLOAD_FIELDS) {
            expect(tensorsBitEqual(out.payload[f], d.payload[f])).toBe(true);
            expect(out.payload[f].data).not.toBe(d.payload[f].data); // copied, not shared
          }
        });
        expect(r.pairs.map((p) => p.donorSlot)).toEqual(dOrder.slice(0, recipient.length).map((d) => d.slot));
      }),
    );
  });

  it('rejects a donor whose payload layout differs', () => {
    const p = new Prng(1);
    const recipient = [makeRecord(p, 'a', 0, 0)];
    const donor = [makeRecord(p, 'b', 0, 0, { shape: [3, 2] })];
    try {
      swapPayloads(recipient, donor);
      throw new Error('expected a throw');
    } catch (e) {
      expect(isImepError(e) && e.code === 'E_INTERVENTION_INVALID').toBe(true);
    }
  });
});

const unitsArb = fc
  .uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 25 })
  .chain((scopes) =>
    fc
      .array(fc.constantFrom('red', 'green', 'blue'), { minLength: scopes.length, maxLength: scopes.length })
      .map((facts) => scopes.map((scope, i): DonorUnit => ({ scope, fact: facts[i] as string }))),
  );

describe('donor assignment', () => {
  it('is deterministic in the seed, never self-donor, respects the fact mode, and records every recipient', () => {
    fc.assert(
      fc.property(
        unitsArb,
        fc.constantFrom('same-fact' as const, 'different-fact' as const),
        fc.integer(),
        (units, mode, seed) => {
          const a = assignDonors({ units, mode, seed });
          const b = assignDonors({ units: [...units].reverse(), mode, seed });
          expect([...b.donors].sort()).toEqual([...a.donors].sort()); // independent of listing order
          expect(a.entries.length).toBe(units.length);
          expect(a.prng).toEqual(new Prng(seed).spec);
          const factOf = new Map(units.map((u) => [u.scope, u.fact]));
          for (const e of a.entries) {
            const eligible = units.filter(
              (u) =>
                u.scope !== e.recipient &&
                (mode === 'same-fact' ? u.fact === e.recipientFact : u.fact !== e.recipientFact),
            );
            expect(e.eligible).toBe(eligible.length);
            if (eligible.length === 0) {
              expect(e.donor).toBeNull();
              expect(a.donors.has(e.recipient)).toBe(false);
              continue;
            }
            expect(e.donor).not.toBe(e.recipient);
            expect(a.donors.get(e.recipient)).toBe(e.donor);
            const df = factOf.get(e.donor as string);
            expect(e.donorFact).toBe(df);
            if (mode === 'same-fact') expect(df).toBe(e.recipientFact);
            else expect(df).not.toBe(e.recipientFact);
          }
        },
      ),
    );
  });

  it('depends on the seed and rejects duplicate scopes', () => {
    const units = Array.from({ length: 40 }, (_, i) => ({ scope: `u${i}`, fact: i % 2 ? 'a' : 'b' }));
    const x = assignDonors({ units, mode: 'same-fact', seed: 1 });
    const y = assignDonors({ units, mode: 'same-fact', seed: 2 });
    expect([...x.donors]).not.toEqual([...y.donors]);
    expect(() => assignDonors({ units: [...units, { scope: 'u0', fact: 'a' }], mode: 'same-fact', seed: 1 })).toThrow(
      /listed twice/,
    );
  });
});
