/**
 * Issue 18 §3: precommit recomputes every registered power/MDE output with src/stats/power.ts and refuses
 * a mismatch beyond the stated tolerance (E_PROTOCOL_INVALID → exit 2), naming the field, the registered
 * and the computed value, before anything is written.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precommit, readUnitState, unitPaths } from '../../src/evidence/index.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { checkFrozenPower, MDE_EFFECT_TOLERANCE } from '../../src/evidence/frozen-power.js';
import { loadProtocol } from '../../src/protocol/load.js';
import { minimumDetectableEffect } from '../../src/stats/power.js';
import { buildUnit, exists, expectImepError, precommitInput, PROTOCOL, removeTree, tempDir } from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-frozen-power-');
});
afterAll(async () => removeTree(root));

const inputs = {
  test: 'mcnemar-one-sided',
  alpha: 0.05,
  power: 0.8,
  n: 120,
  assumedDiscordance: [0.15],
  method: 'exact',
} as const;
const model = minimumDetectableEffect({
  n: 120,
  rhoDiscordant: 0.15,
  alpha: 0.05,
  test: 'mcnemar-one-sided',
  power: 0.8,
  method: 'exact',
});

describe('the frozen power analysis is recomputed at precommit', () => {
  it('refuses a registered MDE the model does not give: exit 2, field, registered and computed value; nothing written', async () => {
    if (model.status !== 'found') throw new Error('the design must reach 80% power');
    const d = join(root, 'wrong');
    await buildUnit(d, 'created');
    const protocol = { ...PROTOCOL, mde: { inputs, outputs: [{ assumedDiscordance: 0.15, effect: 0.01 }] } };
    const e = await expectImepError(precommit(d, precommitInput({ protocol })), 'E_PROTOCOL_INVALID');
    expect(exitCodeFor(e)).toBe(2);
    expect(e.field).toBe('mde.outputs[0].effect');
    expect(e.message).toContain('registered 0.01,');
    expect(e.message).toContain(`computes ${Number(model.effect.toPrecision(6))}`);
    expect(e.message).toContain(`±${MDE_EFFECT_TOLERANCE}`);
    expect((await readUnitState(d)).state).toBe('created');
    expect(await exists(unitPaths(d).protocol)).toBe(false);
  });

  it('accepts the model’s value rounded to 4 decimals and refuses one 0.001 away', () => {
    if (model.status !== 'found') throw new Error('unreachable');
    const at = (effect: number | null) => ({
      inputs: { ...inputs, assumedDiscordance: [0.15] },
      outputs: [{ assumedDiscordance: 0.15, effect }],
    });
    expect(checkFrozenPower(at(Number(model.effect.toFixed(4))))[0]?.effect).toBe(model.effect);
    expect(() => checkFrozenPower(at(model.effect + 0.001))).toThrow(/mde\.outputs\[0\]\.effect: registered/);
    expect(() => checkFrozenPower(at(null))).toThrow(/registered null \(unreachable\)/);
  });

  it('refuses a null (unreachable) row the model reaches, and a reachable value where the model cannot reach the power', () => {
    const tiny = {
      inputs: { ...inputs, assumedDiscordance: [0.01] },
      outputs: [{ assumedDiscordance: 0.01, effect: 0.005 }],
    };
    expect(() => checkFrozenPower(tiny)).toThrow(/computes null \(unreachable\)/);
    expect(checkFrozenPower({ ...tiny, outputs: [{ assumedDiscordance: 0.01, effect: null }] })[0]?.effect).toBeNull();
  });

  it('the shipped blackout protocol’s frozen table passes', async () => {
    const { protocol } = await loadProtocol('protocols/shellgame-blackout.yaml');
    const rows = checkFrozenPower(protocol.mde);
    expect(rows.map((r) => Number(r.effect!.toFixed(4)))).toEqual([0.0233, 0.0365]);
  });
});
