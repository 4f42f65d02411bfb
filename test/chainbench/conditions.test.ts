import { describe, expect, it } from 'vitest';
import {
  LooCentroids,
  chainMemory,
  decisionConditions,
  nearestCentroid,
  selectDecidingRecord,
  shuffledRecords,
  summarizeDecisions,
  decideAll,
  type ChainRecordSet,
  type ConditionSpec,
  type DecisionCondition,
} from '../../src/chainbench/index.js';
import { chainEvents } from '../../src/chainbench/records.js';
import { fixture } from './helpers.js';

function spec(name: DecisionCondition, fallback: 'uniform' | 'fixed' = 'uniform'): ConditionSpec {
  return decisionConditions({ fallback }).find((c) => c.name === name) as ConditionSpec;
}

describe.each([2, 3])('decision conditions on 200 generated lite chains, K=%i', (K) => {
  const { manifest, records, hash } = fixture(200, K);
  const finals = new Map(manifest.chains.map((c) => [c.id, c.finalFact.drawer]));
  const accuracy = (name: DecisionCondition): { n: number; correct: number } => {
    const ds = spec(name).decide(manifest, records, 11);
    return { n: ds.length, correct: ds.filter((d) => d.choice === finals.get(d.chainId)).length };
  };

  it('full memory (presence gate → two-stage retrieval → LOO nearest centroid) decides like the oracle on every chain', () => {
    const full = spec('full-memory').decide(manifest, records, 11);
    expect(full.every((d) => d.path === 'readout')).toBe(true);
    expect(full.map((d) => d.choice)).toEqual(
      spec('oracle')
        .decide(manifest, records, 11)
        .map((d) => d.choice),
    );
    // the deciding record is the latest write of the query object
    for (const d of full) {
      const chain = manifest.chains.find((c) => c.id === d.chainId)!;
      const idx = chain.episodes.findIndex((e) => e.role === 'write' && e.deciding);
      expect(d.recordId).toBe(`${chain.id}/e${idx}`);
    }
  });

  it('no memory: seeded fallback whose accuracy CI contains 1/K; fixed fallback answers drawer 0', () => {
    const { table } = decideAll(manifest, records, hash, { seed: 11, ladder: false });
    const s = summarizeDecisions(manifest, table, { replicates: 500 });
    expect(s.noMemoryFloor?.floor).toBeCloseTo(1 / K, 12);
    expect(s.noMemoryFloor?.contains).toBe(true);
    const none = spec('no-memory').decide(manifest, records, 11);
    expect(none).toEqual(spec('no-memory').decide(manifest, records, 11));
    expect(none.map((d) => d.choice)).not.toEqual(
      spec('no-memory')
        .decide(manifest, records, 12)
        .map((d) => d.choice),
    );
    expect(
      new Set(
        spec('no-memory', 'fixed')
          .decide(manifest, records, 11)
          .map((d) => d.choice),
      ),
    ).toEqual(new Set([0]));
    expect(s.G?.againstOnly).toBe(0);
    expect(s.G?.estimate).toBeCloseTo(1 - s.rows.find((r) => r.condition === 'no-memory')!.accuracy, 12);
  });

  it('initial-fact baseline is right exactly where the fact was never rewritten; stale records are wrong on every rewritten chain', () => {
    const initial = spec('initial-fact').decide(manifest, records, 11);
    for (const d of initial) {
      const chain = manifest.chains.find((c) => c.id === d.chainId)!;
      expect(d.choice).toBe(chain.initialFact.drawer);
      expect(d.choice === chain.finalFact.drawer).toBe(!chain.rewrite);
    }
    const stale = spec('stale-records').decide(manifest, records, 11);
    expect(stale.length).toBe(manifest.chains.filter((c) => c.rewrite).length);
    expect(stale.every((d) => d.path === 'readout' && d.choice !== finals.get(d.chainId))).toBe(true);
    expect(accuracy('stale-records').correct).toBe(0);
  });

  it('shuffled records: payloads permuted within K, decisions near chance, seeded', () => {
    const a = accuracy('shuffled-records');
    expect(a.correct / a.n).toBeLessThan(0.7);
    const s1 = shuffledRecords(manifest, records, 11);
    const s2 = shuffledRecords(manifest, records, 11);
    const drawers = (r: ChainRecordSet): string[] =>
      [...r.byChain.values()]
        .flat()
        .map((e) => e.record.fact.drawer)
        .sort();
    expect(drawers(s1)).toEqual(drawers(records)); // a permutation of the same payloads
    expect([...s1.byChain.values()].flat().map((e) => e.record.fact.drawer)).toEqual(
      [...s2.byChain.values()].flat().map((e) => e.record.fact.drawer),
    );
  });

  it('conditions are pure: same inputs, same decisions; records are not mutated', () => {
    const before = [...records.byChain.values()]
      .flat()
      .map((e) => `${e.record.id}:${e.record.fact.drawer}:${e.feature.join(',')}`);
    for (const c of decisionConditions())
      expect(c.decide(manifest, records, 5)).toEqual(c.decide(manifest, records, 5));
    expect(
      [...records.byChain.values()].flat().map((e) => `${e.record.id}:${e.record.fact.drawer}:${e.feature.join(',')}`),
    ).toEqual(before);
  });
});

describe('readout stages', () => {
  const { manifest, records } = fixture(60, 2, 99);

  it('presence gate declines when the memory holds no record of the query object; the chain then falls back', () => {
    const chain = manifest.chains[0]!;
    const events = chainEvents(records, chain.id).filter((e) => e.record.fact.object !== chain.finalFact.object);
    const sel = selectDecidingRecord(chainMemory(chain, events, 'latest-write'), chain);
    expect(sel).toEqual({ gate: 'declined', candidates: 0, record: null });
    const pruned: ChainRecordSet = {
      dim: records.dim,
      byChain: new Map([...records.byChain].map(([id, evs]) => [id, id === chain.id ? events : evs])),
    };
    const d = spec('full-memory').decide(manifest, pruned, 3)[0]!;
    expect(d.path).toBe('fallback');
    expect(d.choice).toBe(spec('no-memory').decide(manifest, pruned, 3)[0]!.choice);
  });

  it('two-stage retrieval takes the latest valid revision; the stale set exposes the earlier one', () => {
    const chain = manifest.chains.find((c) => c.rewrite)!;
    const events = chainEvents(records, chain.id);
    const log = selectDecidingRecord(chainMemory(chain, events, 'log'), chain);
    expect(log.candidates).toBe(2);
    expect(log.record?.revision).toBe(1);
    expect(log.record?.fact['drawer']).toBe(chain.drawers[chain.finalFact.drawer]);
    const latest = selectDecidingRecord(chainMemory(chain, events, 'latest-write'), chain);
    expect([latest.candidates, latest.record?.id]).toEqual([1, log.record?.id]);
    const stale = selectDecidingRecord(chainMemory(chain, events, 'stale'), chain);
    expect([stale.candidates, stale.record?.revision, stale.record?.fact['drawer']]).toEqual([
      1,
      0,
      chain.drawers[chain.initialFact.drawer],
    ]);
  });

  it('leave-one-chain-out: a chain’s own events never enter its centroids', () => {
    const chain = manifest.chains[4]!;
    const c = new LooCentroids(records);
    const poisoned: ChainRecordSet = {
      dim: records.dim,
      byChain: new Map(
        [...records.byChain].map(([id, evs]) => [
          id,
          id === chain.id ? evs.map((e) => ({ ...e, feature: e.feature.map(() => 1000) })) : evs,
        ]),
      ),
    };
    const a = c.forChain(chain.id, chain.drawers);
    const b = new LooCentroids(poisoned).forChain(chain.id, chain.drawers);
    a.forEach((v, k) => v!.forEach((x, i) => expect(b[k]![i]).toBeCloseTo(x, 9)));
    expect(new LooCentroids(poisoned).forChain(manifest.chains[5]!.id, chain.drawers)).not.toEqual(
      c.forChain(manifest.chains[5]!.id, chain.drawers),
    );
  });

  it('nearest centroid: ties go to the lowest drawer position; drawers without a centroid are skipped', () => {
    const f = Float32Array.of(0, 0);
    expect(nearestCentroid(f, [Float64Array.of(1, 0), Float64Array.of(0, 1)]).choice).toBe(0);
    expect(nearestCentroid(f, [null, Float64Array.of(0, 1)]).choice).toBe(1);
    expect(nearestCentroid(f, [null, null]).choice).toBeNull();
  });
});
