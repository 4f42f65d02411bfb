import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LITE_ENV_IDS } from '../../src/sims/lite/registry.js';
import { minimumDetectableEffect } from '../../src/stats/power.js';
import {
  loadProtocol,
  loadProtocolSync,
  parseProtocol,
  protocolHash,
  type Protocol,
} from '../../src/protocol/index.js';
import { BASE, ROOT, protocolFiles } from './helpers.js';

const load = (name: string): Protocol => loadProtocolSync(join(ROOT, 'protocols', name)).protocol;

const MIKASA_STANDARD = ['RememberColor3-VLA', 'RememberColor5-VLA', 'RememberColor9-VLA', 'InterceptMedium-VLA'];
const SUITE_PROTOCOLS = [
  { file: 'libero-mem-memoryless.yaml', tasks: ['top-drawer-cue'], n: 100 },
  { file: 'libero-mem.yaml', tasks: ['top-drawer-cue'], n: 100 },
  { file: 'libero-spatial.yaml', tasks: Array.from({ length: 10 }, (_, i) => `libero_spatial-${i}`), n: 50 },
  { file: 'mikasa-vla-standard-memoryless.yaml', tasks: MIKASA_STANDARD, n: 100 },
  { file: 'mikasa-vla-standard.yaml', tasks: MIKASA_STANDARD, n: 100 },
];

describe('the registered example protocols', () => {
  it('the registered protocols all load', async () => {
    const files = protocolFiles();
    expect(files).toEqual([
      'protocols/libero-drawer-memory.yaml',
      'protocols/libero-learned-blind.yaml',
      'protocols/libero-learned-memvla.yaml',
      'protocols/mikasa-learned-blind.yaml',
      'protocols/mikasa-learned-memvla.yaml',
      'protocols/mikasa-remembercolor.yaml',
      'protocols/remembercolor-substitution.yaml',
      'protocols/shellgame-blackout.yaml',
      'protocols/shellgame-donor-swap.yaml',
      'protocols/shellgame-hosted-policy.yaml',
      'protocols/shellgame-noisy.yaml',
      'protocols/shellgame-view-removal.yaml',
    ]);
    for (const f of files) {
      const loaded = await loadProtocol(join(ROOT, f));
      expect(loaded.protocol.version).toBe(1);
      expect(loaded.hash).toBe(protocolHash(loaded.protocol));
      expect(loaded.hash).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('protocols/suites: each loads and expands its benchmark into envs, per-task estimands/criteria and a Holm family', async () => {
    const suites = readdirSync(join(ROOT, 'protocols/suites'))
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(suites).toEqual(SUITE_PROTOCOLS.map((s) => s.file));
    for (const s of SUITE_PROTOCOLS) {
      const loaded = await loadProtocol(join(ROOT, 'protocols/suites', s.file));
      const p = loaded.protocol;
      expect(loaded.hash).toBe(protocolHash(p));
      expect(p.envs.map((e) => e.task ?? e.id)).toEqual(s.tasks);
      for (const task of s.tasks) {
        expect(p.estimands.find((e) => e.id === `D_N@${task}`)).toMatchObject({
          task,
          reference: 'A',
          intervention: 'N_blk',
        });
        expect(p.criteria.find((c) => c.id === `Q1_eligibility@${task}`)).toMatchObject({ estimand: `D_N@${task}` });
      }
      expect(p.holmFamilies).toEqual([
        expect.objectContaining({ id: 'Q1_eligibility_tasks', contrasts: s.tasks.map((t) => `D_N@${t}`), alpha: 0.05 }),
      ]);
      expect(p.n).toBe(s.n);
    }
  });

  it('libero-drawer-memory: real LIBERO through the sim-bridge, the hosted known-answer policy, A/U/S_pi/S/T and A/N_blk/C', () => {
    const p = load('libero-drawer-memory.yaml');
    expect(p.simulator).toMatchObject({ kind: 'sim-bridge', adapter: 'libero' });
    expect(p.envs).toEqual([{ id: 'libero-mem/top-drawer-cue' }]);
    expect(p.policy).toMatchObject({
      runtime: 'remote',
      name: 'libero-drawer-memory',
      module: 'imep_sim_bridge.libero_drawer_policy',
    });
    expect(p.waves).toEqual([
      { id: 1, conditions: ['A', 'U', 'S_pi', 'S', 'T'], anchor: 'A' },
      { id: 2, conditions: ['A', 'N_blk', 'C'], anchor: 'A' },
    ]);
    // S and T swap at read time, paired by the fact the environment declares (goal)
    expect(
      p.conditions
        .filter((c) => c.kind === 'S' || c.kind === 'T')
        .map((c) => ('installation' in c ? c.installation : undefined)),
    ).toEqual(['read', 'read']);
    expect(p.n).toBe(12);
    expect(p.allowlists.evaluatorOnly).toContain('goal'); // the env's declared fact never reaches the policy
    expect(p.allowlists.methodVisible).not.toContain('goal');
  });

  it('shellgame-noisy: the donor-swap ladder under registered per-condition execution noise, C tolerated to 30 changes', () => {
    const p = load('shellgame-noisy.yaml');
    expect(p.simulator).toEqual({
      kind: 'lite',
      executionNoise: { kind: 'action-gaussian', sigma: 0.03, seed: 612003, scope: 'per-condition' },
    });
    expect(p.waves).toEqual([{ id: 1, conditions: ['A', 'S', 'T', 'N_blk', 'C'], anchor: 'A' }]);
    expect(p.n).toBe(100);
    expect(p.gates.find((g) => g.kind === 'replicate')).toMatchObject({
      condition: 'C',
      reference: 'A',
      maxChanged: 30,
    });
    expect(p.criteria.find((c) => c.id === 'Q4')).toMatchObject({
      aboveUpperBoundOf: ['rho_C'],
      method: 'conditional-exact',
      minDiscordant: 8,
    });
  });

  it('shellgame-blackout: the paper’s two waves, 400 seeds, attempt 1 registered', () => {
    const p = load('shellgame-blackout.yaml');
    expect(p.envs).toEqual([
      { id: 'ShellGameTouch-lite', kwargs: { blackoutFromStep: 6, strict: true, toolStart: 'home' } },
    ]);
    expect(p.memory.bank).toBe('episode-local');
    expect(p.waves).toEqual([
      { id: 1, conditions: ['A', 'S_pi', 'T_mu', 'U'], anchor: 'A' },
      { id: 2, conditions: ['A', 'N_blk', 'C'], anchor: 'A' },
    ]);
    expect(p.seeds.bands).toEqual([{ start: 610000, end: 610399 }]);
    expect(p.n).toBe(400);
    expect(p.attempts).toEqual({ count: 2, registered: 1 });
    expect(p.estimands.find((e) => e.id === 'theta')).toMatchObject({
      kind: 'theta',
      T: 'T_mu',
      S: 'S_pi',
      reference: 'A',
    });
    expect(p.criteria.find((c) => c.id === 'Q1')).toMatchObject({
      estimand: 'D_N',
      rule: 'upper-bound-below',
      margin: 0.1,
      alphaPerComponent: 0.05,
    });
    expect(p.criteria.find((c) => c.id === 'Q4')).toMatchObject({
      rule: 'lower-bound-above',
      aboveUpperBoundOf: ['rho_U'],
      method: 'conditional-exact',
      minDiscordant: 8,
    });
    expect(p.gates.map((g) => g.kind).sort()).toEqual([
      'competence',
      'empty-read',
      'path',
      'read-canary',
      'replicate',
      'sham-validity',
      'survival',
    ]);
    expect(p.holmFamilies[0]).toMatchObject({ contrasts: ['D_S_pi', 'D_T_mu', 'D_U'], onUnavailable: 'stay-at-p-1' });
    expect(p.checkpoint).toMatchObject({ path: 'checkpoints/lite-memvla', file: 'model.json' });
  });

  it('remembercolor-substitution: donor swaps at attempt 2 before the first query, ±7.5 pp on θ̄', () => {
    const p = load('remembercolor-substitution.yaml');
    expect(p.memory).toMatchObject({ bank: 'structured-pcmb', persistence: 'across-attempts' });
    expect(p.envs.map((e) => [e.id, e.kwargs?.['reshowCueOnRetry']])).toEqual([
      ['RememberColor3-lite', false],
      ['RememberColor5-lite', false],
    ]);
    for (const id of ['S', 'T', 'U']) {
      expect(p.conditions.find((c) => c.id === id)).toMatchObject({ installAt: { attempt: 2, before: 'first-query' } });
    }
    expect(p.conditions.find((c) => c.id === 'S')).toMatchObject({ kind: 'S', seed: 20260824 });
    expect(p.criteria.find((c) => c.rule === 'equivalence')).toMatchObject({
      estimand: 'thetaBar',
      margin: 0.075,
      level: 0.9,
      method: 'task-stratified-bootstrap',
      replicates: 10000,
      seed: 20260824,
    });
    expect(p.attempts).toEqual({ count: 2, registered: 2 });
  });

  it('shellgame-view-removal: a 2×2 of view (env kwarg) × reads (N block)', () => {
    const p = load('shellgame-view-removal.yaml');
    expect(p.factors).toEqual({ view: ['visible', 'blackout'], reads: ['on', 'blocked'] });
    const cells = p.conditions.map((c) => [
      c.id,
      c.kind,
      c.levels?.['view'],
      c.levels?.['reads'],
      c.envKwargs?.['blackoutFromStep'],
    ]);
    expect(cells).toEqual([
      ['A_vis', 'A', 'visible', 'on', null],
      ['N_vis', 'N', 'visible', 'blocked', null],
      ['A_blk', 'A', 'blackout', 'on', 6],
      ['N_blk', 'N', 'blackout', 'blocked', 6],
    ]);
    expect(p.seeds.bands).toEqual([{ start: 8701, end: 8900 }]);
    expect(p.n).toBe(200);
    expect(p.criteria.map((c) => [c.id, c.rule, 'margin' in c ? c.margin : undefined])).toEqual([
      ['view_removal', 'lower-bound-above', 0.1],
      ['reads_blackout', 'upper-bound-below', 0.1],
      ['blackout_floor', 'lower-bound-above', 1 / 3],
      ['reads_visible', 'upper-bound-below', 0.1],
    ]);
  });

  it('every frozen MDE table reproduces with src/stats/power.ts', () => {
    for (const f of protocolFiles()) {
      const mde = loadProtocolSync(join(ROOT, f)).protocol.mde;
      if (!mde) continue;
      for (const row of mde.outputs) {
        const r = minimumDetectableEffect({
          n: mde.inputs.n,
          rhoDiscordant: row.assumedDiscordance,
          alpha: mde.inputs.alpha,
          test: mde.inputs.test,
          power: mde.inputs.power,
          method: mde.inputs.method,
        });
        expect(r.status, f).toBe('found');
        if (r.status === 'found' && row.effect !== null) expect(Math.abs(r.effect - row.effect), f).toBeLessThan(5e-4);
      }
    }
  });

  it('fills defaults, which the hash then binds', () => {
    const p = parseProtocol(BASE, 'base.yaml').protocol;
    expect(p.holmFamilies[0]).toEqual({
      id: 'wave1',
      contrasts: ['D_N'],
      alpha: 0.05,
      test: 'mcnemar-exact-two-sided',
      repairBudget: 0,
      onUnavailable: 'stay-at-p-1',
    });
    expect(p.executionFailures).toEqual({
      policy: 'record',
      unresolved: 'in-denominator',
      budget: { firstFailed: 5, maxFraction: 0.1 },
    });
    expect(p.gates[0]).toMatchObject({ maxChanged: 0 });
    expect(p.criteria[0]).toMatchObject({ role: 'primary' });
  });

  it('a sim-bridge protocol skips the lite env-id check', () => {
    const text = BASE.replace('  kind: lite\n', '  kind: sim-bridge\n  adapter: mikasa\n').replace(
      'ShellGameTouch-lite',
      'ShellGameTouch-v0',
    );
    expect(LITE_ENV_IDS).not.toContain('ShellGameTouch-v0');
    expect(parseProtocol(text, 'bridge.yaml').protocol.simulator).toEqual({ kind: 'sim-bridge', adapter: 'mikasa' });
  });
});
