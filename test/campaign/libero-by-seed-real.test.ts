/**
 * LIBERO's seed-paired init states on the real stack (IMEP_REAL_LIBERO=1, run by scripts/sims/libero.sh test): a
 * standard task made with `kwargs.init_state: by-seed` (sim-bridge/imep_sim_bridge/adapters/libero_by_seed.py)
 * declares seeds 0…49 (its 50 init states), so a protocol that registers seed 50 is refused at precommit — exit 2,
 * one line naming seeds and the range, the campaigns folder left empty — by the bridge preflight's check of
 * EnvSpec.seeds (src/campaign/bridge-preflight.ts). The policy is the memoryless control `libero-hold`
 * (sim-bridge/imep_sim_bridge/libero_hold_policy.py), hosted from its module.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { imep } from './cli-support.js';

const LIBERO = process.env['IMEP_REAL_LIBERO'] === '1';

const dir = mkdtempSync(join(tmpdir(), 'imep-libero-by-seed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function protocolYaml(id: string, seeds: string, n: number): string {
  return `version: 1
id: ${id}
title: LIBERO-Spatial task 0, seed-paired init states, memoryless control
simulator: { kind: sim-bridge, adapter: libero }
envs:
  - id: libero/libero_spatial/0
    kwargs: { init_state: by-seed, resolution: 64 }
policy: { runtime: remote, name: libero-hold, module: imep_sim_bridge.libero_hold_policy }
memory: { bank: episode-local, banks: [perceptual], capacity: 8, k: 1, consolidation: fifo }
seeds: { bands: [${seeds}] }
n: ${n}
attempts: { count: 1, registered: 1 }
conditions: [{ id: A, kind: A }]
waves: [{ id: 1, conditions: [A], anchor: A }]
estimands: [{ id: SR_A, kind: successRate, condition: A }]
executionFailures: { policy: record }
allowlists:
  methodVisible: [image, wrist_image, state, instruction]
  evaluatorOnly: [reward, success, seed, initStateId, task]
`;
}

describe.skipIf(!LIBERO)('real LIBERO: seed-paired init states (IMEP_REAL_LIBERO=1)', () => {
  it('seed 50 on a task with 50 init states (kwargs.init_state: by-seed): one line naming seeds and 0–49, nothing written', async () => {
    writeFileSync(join(dir, 'seed50.yaml'), protocolYaml('libero-by-seed-50', '{ start: 47, end: 50 }', 4));
    const campaigns = join(dir, 'campaigns');
    mkdirSync(campaigns);
    const t0 = performance.now();
    const r = await imep(['campaign', 'run', 'seed50.yaml', '--batch', '1', '--campaigns-dir', campaigns], dir);
    process.stdout.write(
      `libero by-seed, seed 50: exit ${r.code} in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${r.stderr.trim()}\n`,
    );
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      'imep: seed50.yaml: seeds: 1 of the 4 registered seeds (50) are outside the seeds libero/libero_spatial/0 takes: 0–49 — register seeds inside 0–49',
    );
    expect(readdirSync(campaigns)).toEqual([]);
  }, 180_000);
});
