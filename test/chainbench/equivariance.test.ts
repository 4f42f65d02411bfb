import { describe, expect, it } from 'vitest';
import { Prng } from '../../src/core/prng.js';
import { chainEvents } from '../../src/chainbench/records.js';
import {
  auditLabelEquivariance,
  centroidsOf,
  chainMemory,
  nearestCentroid,
  selectDecidingRecord,
  decisionConditions,
  identifiersOf,
  randomRenaming,
  renameManifest,
  renameRecords,
  validateManifest,
  type AuditedReadout,
  type ChainManifest,
  type ChainRecordSet,
} from '../../src/chainbench/index.js';
import { fixture } from './helpers.js';

/** Deliberately name-leaning: with no memory, answer the drawer whose NAME sorts first. */
const alphabeticalFallback: AuditedReadout = {
  name: 'no-memory (alphabetical drawer)',
  decide: (m: ChainManifest) =>
    m.chains.map((c) => ({ chainId: c.id, choice: c.drawers.indexOf([...c.drawers].sort()[0] as string) })),
};

/**
 * Name-leaning in a subtler way: the full-memory path, but distances are compared at a coarse resolution
 * (rounded to multiples of 4) and ties are broken alphabetically by drawer name.
 */
const alphabeticalTieBreak: AuditedReadout = {
  name: 'full-memory (coarse distances, alphabetical tie-break)',
  decide: (m: ChainManifest, r: ChainRecordSet) => {
    const centroids = centroidsOf(r);
    return m.chains.map((chain) => {
      const events = chainEvents(r, chain.id);
      const sel = selectDecidingRecord(chainMemory(chain, events, 'latest-write'), chain);
      const feature = events.find((e) => e.record.id === sel.record?.id)!.feature;
      const { distances } = nearestCentroid(feature, centroids.forChain(chain.id, chain.drawers));
      const coarse = distances.map((d) => Math.round((d as number) / 4));
      const best = Math.min(...coarse);
      const tied = chain.drawers.filter((_, k) => coarse[k] === best).sort();
      return { chainId: chain.id, choice: chain.drawers.indexOf(tied[0] as string) };
    });
  },
};

describe('label-equivariance audit', () => {
  const { manifest, records } = fixture(200, 3);

  it('renamings are consistent, bijective and same-length; a renamed manifest is still structurally valid', () => {
    const ids = identifiersOf(manifest);
    const map = randomRenaming(ids, new Prng(1));
    expect(new Set(map.values()).size).toBe(ids.length);
    for (const [a, b] of map) expect(b.length).toBe(a.length);
    const m = renameManifest(manifest, map);
    expect(() => validateManifest(m, { simulator: false })).not.toThrow();
    const r = renameRecords(records, map);
    const ev = [...r.byChain.values()][0]![0]!;
    const orig = [...records.byChain.values()][0]![0]!;
    expect(ev.record.fact.object).toBe(map.get(orig.record.fact.object));
    expect(ev.feature).toBe(orig.feature);
  });

  it('every ChainBench condition is equivariant: renamed score = identity score × R, no decision changes', () => {
    const readouts = decisionConditions().map((c) => ({
      name: c.name,
      decide: (m: ChainManifest, r: ChainRecordSet) => c.decide(m, r, 4),
    }));
    const audit = auditLabelEquivariance({ manifest, records, readouts, renamings: 5, seed: 9 });
    expect(audit.renamings).toBe(5);
    for (const row of audit.rows) {
      expect(row.violations).toBe(0);
      expect(row.equivariant).toBe(true);
      expect(row.renamedScore).toBe(row.identityScore * 5);
    }
    expect(audit.rows.find((r) => r.readout === 'full-memory')!.identityScore).toBe(200);
  });

  it('catches name-leaning readouts (alphabetical tie-breaks), even when the score happens to match', () => {
    const audit = auditLabelEquivariance({
      manifest,
      records,
      readouts: [alphabeticalFallback, alphabeticalTieBreak],
      renamings: 5,
      seed: 9,
    });
    for (const row of audit.rows) {
      expect(row.equivariant).toBe(false);
      expect(row.violations).toBeGreaterThan(0);
      expect(row.examples.length).toBeGreaterThan(0);
    }
    const fb = audit.rows[0]!;
    expect(fb.identityScore).toBe(manifest.chains.filter((c) => c.finalFact.drawer === 0).length);
    const tb = audit.rows[1]!;
    expect(tb.renamedScore).not.toBe(tb.expectedScore);
  });
});
