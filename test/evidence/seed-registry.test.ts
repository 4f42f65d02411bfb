import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SEED_REGISTRY, findSeedOverlaps, readSeedRegistry, registerSeeds } from '../../src/evidence/index.js';
import { expectImepError, removeTree, tempDir } from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-seeds-');
});
afterAll(async () => removeTree(root));

const band = (task: string, start: number, end: number) => ({ task, start, end });

describe('seed registry', () => {
  it('defaults to campaigns/seed-registry.json', () => {
    expect(DEFAULT_SEED_REGISTRY).toBe('campaigns/seed-registry.json');
  });

  it('refuses an overlapping band, naming both campaigns and the overlapping range', async () => {
    const reg = join(root, 'a', 'seed-registry.json');
    await registerSeeds(reg, { campaignId: 'R27-A', bands: [band('shell-game', 8701, 8900)] });
    const err = await expectImepError(
      registerSeeds(reg, { campaignId: 'LADDER-1', bands: [band('shell-game', 8850, 9000)] }),
      'E_SEED_OVERLAP',
    );
    expect(err.message).toBe(
      "campaign 'LADDER-1' (task shell-game, seeds 8850–9000) overlaps campaign 'R27-A' (task shell-game, seeds 8701–8900) at seeds 8850–8900",
    );
    expect(err.file).toBe(reg);
    expect(err.hint).toContain('reuse: [R27-A]');
    expect(Object.keys((await readSeedRegistry(reg)).campaigns)).toEqual(['R27-A']);
  });

  it('accepts the overlap when the protocol declares the reuse, and records it', async () => {
    const reg = join(root, 'b', 'seed-registry.json');
    await registerSeeds(reg, { campaignId: 'SUBST', bands: [band('remember-color-5', 610000, 610399)] });
    const e = await registerSeeds(reg, {
      campaignId: 'R-1',
      bands: [band('remember-color-5', 610000, 610399)],
      reuse: ['SUBST'],
    });
    expect(e.reuse).toEqual(['SUBST']);
    await expectImepError(
      registerSeeds(reg, { campaignId: 'R-2', bands: [band('remember-color-5', 610100, 610100)], reuse: ['SUBST'] }),
      'E_SEED_OVERLAP',
    ); // also overlaps R-1
  });

  it('different tasks do not overlap; "*" overlaps every task; touching ends overlap, adjacent ones do not', () => {
    const registry = {
      kind: 'imep.seed-registry' as const,
      version: 1 as const,
      campaigns: { A: { bands: [band('t1', 10, 20)], reuse: [], registeredAt: '', protocolHash: null } },
    };
    expect(findSeedOverlaps(registry, 'B', [band('t2', 10, 20)], [])).toEqual([]);
    expect(findSeedOverlaps(registry, 'B', [band('*', 20, 30)], [])).toHaveLength(1);
    expect(findSeedOverlaps(registry, 'B', [band('t1', 21, 30)], [])).toEqual([]);
    expect(findSeedOverlaps(registry, 'B', [band('t1', 0, 9), band('t1', 5, 6)], [])[0]).toMatchObject({
      otherCampaignId: 'B',
      start: 5,
      end: 6,
    });
  });

  it('re-registering the same bands is a no-op; other bands or an unknown reuse are refused', async () => {
    const reg = join(root, 'c', 'seed-registry.json');
    await registerSeeds(reg, { campaignId: 'X', bands: [band('t', 1, 5)] });
    const before = await readFile(reg);
    await registerSeeds(reg, { campaignId: 'X', bands: [band('t', 1, 5)] });
    expect(await readFile(reg)).toEqual(before);
    await expectImepError(registerSeeds(reg, { campaignId: 'X', bands: [band('t', 1, 6)] }), 'E_SEED_OVERLAP');
    const err = await expectImepError(
      registerSeeds(reg, { campaignId: 'Y', bands: [band('t', 9, 9)], reuse: ['NOPE'] }),
      'E_USAGE',
    );
    expect(err.field).toBe('reuse');
  });

  it('concurrent registrations all land (lock + atomic write)', async () => {
    const reg = join(root, 'd', 'seed-registry.json');
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        registerSeeds(reg, { campaignId: `C${i}`, bands: [band('t', i * 100, i * 100 + 99)] }),
      ),
    );
    expect(Object.keys((await readSeedRegistry(reg)).campaigns).sort()).toEqual(['C0', 'C1', 'C2', 'C3', 'C4', 'C5']);
  });

  it('a hand-edited registry is refused with the file named', async () => {
    const reg = join(root, 'e', 'seed-registry.json');
    await registerSeeds(reg, { campaignId: 'X', bands: [band('t', 1, 5)] });
    await writeFile(reg, '{"kind":"imep.seed-registry"}');
    const err = await expectImepError(readSeedRegistry(reg), 'E_IO');
    expect(err.file).toBe(reg);
  });
});
