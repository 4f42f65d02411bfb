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
    for (const r of L.rows.S)
      expect(manifest.chains.find((c) => c.id === r.donorChainId)!.finalFact.drawer).toBe(
        manifest.chains.find((c) => c.id === r.chainId)!.finalFact.drawer,
      );
    for (const r of L.rows.T)
      expect(r.choice).toBe(manifest.chains.find((c) => c.id === r.donorChainId)!.finalFact.drawer);
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

describe('ChainBench θ on an unbalanced ladder', () => {
  it('is ρ_T − ρ_S on the chains with both an S and a T row, and restates ρ_S and ρ_T on that set', async () => {
    const { generateChainManifest } = await import('../../src/chainbench/generator.js');
    const { summarizeDecisions } = await import('../../src/chainbench/results.js');
    const m = generateChainManifest({ chains: 3, K: 2, seed: 1 });
    const ids = m.chains.map((c) => c.id);
    const row = (id: string, changed: boolean) => ({
      chainId: id,
      donorChainId: 'x',
      choice: 0,
      changed,
      correct: true,
    });
    // chain 3 has a T row but no S row (no same-fact donor in its K group)
    const table = {
      format: 'imep-chain-decisions',
      version: 1,
      manifestHash: '0'.repeat(64),
      seed: 0,
      prng: { name: 'x', version: 1 },
      fallback: 'uniform',
      conditions: [
        {
          name: 'oracle',
          label: 'O',
          cohort: 'all',
          decisions: m.chains.map((c) => ({ chainId: c.id, choice: c.finalFact.drawer, path: 'oracle' })),
        },
      ],
      ladder: {
        seed: 's',
        chains: 3,
        excluded: [],
        ulpElementsStepped: 0,
        rows: {
          C: ids.map((i) => row(i, false)),
          U: ids.map((i) => row(i, false)),
          S: [row(ids[0]!, false), row(ids[1]!, false)],
          T: [row(ids[0]!, true), row(ids[1]!, true), row(ids[2]!, false)],
        },
      },
    };
    const s = summarizeDecisions(m, table as never, { replicates: 200 });
    const rho = Object.fromEntries(s.ladder!.rows.map((r) => [r.condition, r.rho]));
    expect(rho['T']).toBeCloseTo(2 / 3, 12); // on its own 3 chains
    const th = s.ladder!.theta!;
    expect(th.chains).toBe(2);
    expect([th.rhoT, th.rhoS, th.estimate]).toEqual([1, 0, 1]); // on the 2 chains with both rows
  });
});
