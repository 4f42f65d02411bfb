import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/hash.js';
import {
  assertCrossChecked,
  assertFreezable,
  assertNoSeedOverlap,
  firstSeeds,
  parseProtocol,
  seedCount,
  verifyCheckpoint,
  checkpointOf,
  type Protocol,
  loadProtocolSync,
} from '../../src/protocol/index.js';
import { conditionSeed, pointLabel, toConditionSpec } from '../../src/interventions/index.js';
import { BASE, ROOT } from './helpers.js';
import { ConditionSchema } from '../../src/protocol/schema-conditions.js';

const base = (): Protocol => parseProtocol(BASE, 'base.yaml').protocol;

describe('seeds', () => {
  it('counts and orders bands and lists', () => {
    expect(
      seedCount({
        bands: [
          { start: 5, end: 7 },
          { start: 1, end: 1 },
        ],
      }),
    ).toBe(4);
    expect(
      firstSeeds(
        {
          bands: [
            { start: 5, end: 7 },
            { start: 1, end: 1 },
          ],
        },
        10,
      ),
    ).toEqual([5, 6, 7, 1]);
    expect(firstSeeds({ list: [9, 2, 4] }, 2)).toEqual([9, 2]);
  });

  it('refuses an overlap with another registered campaign unless declared under reuse', () => {
    const p = base(); // seeds 100–119
    expect(() =>
      assertNoSeedOverlap(p, [{ campaign: 'other', seeds: { bands: [{ start: 200, end: 300 }] } }]),
    ).not.toThrow();
    expect(() => assertNoSeedOverlap(p, [{ campaign: 'other', seeds: { list: [50, 119] } }], 'p.yaml')).toThrow(
      expect.objectContaining({
        code: 'E_SEED_OVERLAP',
        file: 'p.yaml',
        message: expect.stringContaining('seeds 119–119 are already registered by campaign "other"'),
      }),
    );
    const reusing = {
      ...p,
      seeds: { ...p.seeds, reuse: [{ campaign: 'other', reason: 'same units, new checkpoint' }] },
    };
    expect(() => assertNoSeedOverlap(reusing, [{ campaign: 'other', seeds: { list: [50, 119] } }])).not.toThrow();
  });
});

describe('checkpoint binding', () => {
  it('a pending hash loads but cannot be frozen', () => {
    const p = loadProtocolSync(join(ROOT, 'protocols/shellgame-blackout.yaml')).protocol;
    if (p.checkpoint?.sha256 === 'pending') {
      expect(() => assertFreezable(p, 'x.yaml')).toThrow(
        expect.objectContaining({ code: 'E_CHECKPOINT_MISSING', field: 'checkpoint.sha256' }),
      );
    } else {
      expect(() => assertFreezable(p)).not.toThrow();
    }
  });

  it('verifies the file’s SHA-256', async () => {
    const root = mkdtempSync(join(tmpdir(), 'imep-ckpt-'));
    mkdirSync(join(root, 'checkpoints/lite-memvla'), { recursive: true });
    writeFileSync(join(root, 'checkpoints/lite-memvla/model.json'), '{"weights":[1,2,3]}');
    const digest = sha256Hex('{"weights":[1,2,3]}');
    const p = base();
    await expect(verifyCheckpoint(p, root)).rejects.toMatchObject({ code: 'E_CHECKPOINT_MISMATCH' });
    const bound = { ...p, checkpoint: { ...checkpointOf(p), sha256: digest } };
    await expect(verifyCheckpoint(bound, root)).resolves.toBe(digest);
    await expect(verifyCheckpoint(bound, join(root, 'nowhere'))).rejects.toMatchObject({
      code: 'E_CHECKPOINT_MISSING',
    });
  });
});

describe('conditions → intervention specs', () => {
  it('maps every kind onto the interventions’ ConditionSpec', () => {
    const rc = loadProtocolSync(join(ROOT, 'protocols/remembercolor-substitution.yaml')).protocol;
    const sg = loadProtocolSync(join(ROOT, 'protocols/shellgame-blackout.yaml')).protocol;
    const specs = Object.fromEntries([...sg.conditions, ...rc.conditions].map((c) => [c.id, toConditionSpec(c)]));
    expect(specs).toMatchObject({
      A: { kind: 'A' },
      C: { kind: 'C' },
      N_blk: { kind: 'N', variant: 'block' },
      S_pi: { kind: 'S_pi' },
      T_mu: { kind: 'T_mu' },
      S: { kind: 'S', seed: 20260824 },
      T: { kind: 'T', seed: 20260825 },
    });
    const u = rc.conditions.find((c) => c.id === 'U');
    expect(u && toConditionSpec(u)).toEqual({ kind: 'U', direction: 'away', installation: 'install' });
    expect(u && pointLabel(u)).toBe('attempt-2/before-first-query');
    const sPi = sg.conditions.find((c) => c.id === 'S_pi');
    expect(sPi && conditionSeed(sPi)).toBe(610001);
    expect(sPi && pointLabel(sPi)).toBe('every-read');
    // no registered version → the spec has none (version 1, the recorded spec unchanged)
    expect(sPi && toConditionSpec(sPi)).toEqual({ kind: 'S_pi' });
  });

  it('takes version 1 of S_pi / T_mu and refuses the retired versions 2 and 3, saying what to write', () => {
    const sg = loadProtocolSync(join(ROOT, 'protocols/shellgame-blackout.yaml')).protocol;
    const withVersion = (kind: 'S_pi' | 'T_mu', version: unknown): unknown => ({
      ...sg.conditions.find((c) => c.kind === kind),
      version,
    });
    expect(ConditionSchema.safeParse(withVersion('S_pi', 1)).success).toBe(true);
    expect(ConditionSchema.safeParse(withVersion('T_mu', 1)).success).toBe(true);
    for (const [kind, v] of [
      ['S_pi', 2],
      ['S_pi', 3],
      ['T_mu', 2],
    ] as const) {
      const r = ConditionSchema.safeParse(withVersion(kind, v));
      expect(r.success).toBe(false);
      expect(r.error?.issues.map((i) => i.message).join(' ')).toMatch(
        /versions 2 and 3 were retired.*remove version, or write version: 1/,
      );
    }
  });
});

describe('cross-check without YAML', () => {
  it('assertCrossChecked throws the first problem with its path', () => {
    const p = base();
    const bad = { ...p, waves: p.waves.map((w, i) => (i === 0 ? { ...w, anchor: 'C' } : w)) };
    expect(() => assertCrossChecked(bad, 'mem.yaml')).toThrow(
      expect.objectContaining({ code: 'E_PROTOCOL_INVALID', field: 'waves[0].anchor' }),
    );
    expect(() => assertCrossChecked(p)).not.toThrow();
  });
});
