import { describe, expect, it } from 'vitest';
import { diffManifests, generateChainManifest } from '../../src/chainbench/index.js';
import { copy, fixture } from './helpers.js';

describe('manifest diff', () => {
  const { manifest } = fixture(12, 2, 77);

  it('identical manifests', () => {
    const d = diffManifests(manifest, copy(manifest));
    expect(d).toMatchObject({
      identical: true,
      removed: [],
      added: [],
      changed: [],
      unchanged: 12,
      header: [],
      orderChanged: false,
    });
    const reversed = copy(manifest);
    reversed.chains.reverse();
    expect(diffManifests(manifest, reversed)).toMatchObject({
      identical: false,
      removed: [],
      added: [],
      changed: [],
      orderChanged: true,
    });
  });

  it('reports removed, added and changed chains (a rebuild is visible)', () => {
    const next = copy(manifest);
    const dropped = next.chains.splice(2, 2).map((c) => c.id);
    const extra = generateChainManifest({ chains: 20, K: 2, seed: 5 }).chains.slice(14, 16);
    next.chains.push(...extra);
    next.chains[0]!.executorSeeds.primary += 1;
    next.chains[1]!.finalFact = { ...next.chains[1]!.finalFact };
    next.chains[5]!.queryFrameHash = 'f'.repeat(64);
    next.features.noise = 0.5;
    const d = diffManifests(manifest, next);
    expect(d.identical).toBe(false);
    expect(d.removed).toEqual(dropped);
    expect(d.added).toEqual(extra.map((c) => c.id));
    expect(d.changed).toEqual([
      { id: manifest.chains[0]!.id, fields: ['executorSeeds'] },
      { id: manifest.chains[7]!.id, fields: ['queryFrameHash'] },
    ]);
    expect(d.unchanged).toBe(12 - 2 - 2);
    expect(d.header).toEqual(['features']);
    expect(d.orderChanged).toBe(false);
    expect([d.oldChains, d.newChains]).toEqual([12, 12]);
  });
});
