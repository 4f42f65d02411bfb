import { describe, expect, it } from 'vitest';
import { decideAll, runDecisionLadder, summarizeDecisions, LADDER_CONDITIONS } from '../../src/chainbench/index.js';
import { fixture } from './helpers.js';

describe.each([2, 3])('decision-level C/U/S/T ladder on curated records, 200 chains, K=%i', (K) => {
  const { manifest, records, hash } = fixture(200, K);
  const { table, ladder } = decideAll(manifest, records, hash, { seed: 7 });
  const L = ladder!;

  it('C reproduces every archived full-memory decision', () => {
    const full = table.conditions.find((c) => c.name === 'full-memory')!.decisions;
    expect(L.chains).toBe(200);
    expect(L.excluded).toEqual([]);
    expect(L.rows.C.map((r) => r.choice)).toEqual(full.map((d) => d.choice));
    expect(L.rows.C.every((r) => !r.changed)).toBe(true);
  });

  it('U (one ULP on every feature element) and S (same-fact cross-chain) change no decision; T changes all', () => {
    expect(L.ulpElementsStepped).toBe(200 * manifest.features.dim);
    expect(L.rows.U.filter((r) => r.changed)).toEqual([]);
    expect(L.rows.S.length).toBe(200);
    expect(L.rows.S.filter((r) => r.changed)).toEqual([]);
    expect(L.rows.T.length).toBe(200);
    expect(L.rows.T.every((r) => r.changed && !r.correct)).toBe(true);
    for (const r of L.rows.S) expect(manifest.chains.find((c) => c.id === r.donorChainId)!.finalFact.drawer).toBe(manifest.chains.find((c) => c.id === r.chainId)!.finalFact.drawer);
    for (const r of L.rows.T) expect(r.choice).toBe(manifest.chains.find((c) => c.id === r.donorChainId)!.finalFact.drawer);
    const s = summarizeDecisions(manifest, table, { replicates: 500 });
    expect(s.ladder?.reproduced).toBe(200);
    expect(s.ladder?.rows.map((r) => r.changed)).toEqual([0, 0, 0, 200]);
    expect(s.ladder?.theta?.estimate).toBe(1);
  });

  it('centroids and selection path are identical across conditions (recorded per row)', () => {
    expect(L.pathIdentical).toBe(true);
    for (let i = 0; i < L.rows.C.length; i++) {
      const c = L.rows.C[i]!;
      for (const cond of LADDER_CONDITIONS) {
        const r = L.rows[cond].find((x) => x.chainId === c.chainId)!;
        expect([r.recordId, r.centroidDigest]).toEqual([c.recordId, c.centroidDigest]);
      }
    }
  });

  it('is seeded: the same seed gives the same donors and rows', () => {
    const full = table.conditions.find((c) => c.name === 'full-memory')!.decisions;
    const again = runDecisionLadder(manifest, records, { seed: '7/ladder', archived: full });
    expect(again.rows).toEqual(L.rows);
    expect(runDecisionLadder(manifest, records, { seed: 'other', archived: full }).donors.S).not.toEqual(L.donors.S);
  });
});

describe('ladder donors', () => {
  it('assignDonorsFast reproduces assignDonors exactly (same-fact and different-fact)', async () => {
    const { assignDonors } = await import('../../src/interventions/donor-assignment.js');
    const { assignDonorsFast } = await import('../../src/chainbench/donors.js');
    const units = Array.from({ length: 57 }, (_, i) => ({ scope: `u-${(i * 37) % 101}`, fact: `f${i % 3}` }));
    units.push({ scope: 'lonely', fact: 'only-one' });
    for (const mode of ['same-fact', 'different-fact'] as const) {
      for (const seed of [1, 'x/K=2']) {
        const slow = assignDonors({ units, mode, seed });
        const fast = assignDonorsFast({ units, mode, seed });
        expect(fast.entries).toEqual(slow.entries);
        expect([...fast.donors]).toEqual([...slow.donors]);
      }
    }
  });
});
