/**
 * Bad input to a campaign on a bridged simulator is refused before anything is written (bridge-preflight.ts,
 * campaign-setup.ts withCheckedSimulators): `imep campaign run` (the built CLI) on each bad protocol exits 2 with
 * one line naming the field or the package and what to do, and the campaigns folder stays as it was — no unit, no
 * temporary folder, no seed-registry entry. Against the Python sim-bridge as IMEP starts it (/usr/bin/python3 or
 * $IMEP_PYTHON): the replay adapter serving sim-bridge/tests/fixtures/replay (env replay/tiny, seeds 0–1 recorded),
 * and the libero / mikasa adapters where their simulator packages are not installed. The real stacks' own bad
 * inputs (a renderer that does not render, a LIBERO task that does not exist) are checked by
 * scripts/sims/libero.sh test.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalPrettyJson } from '../../src/core/canonical-json.js';
import { bridgeImportable as importable, imep, liteCheckpointSha } from './cli-support.js';
import { ROOT } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-bad-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A registry entry of another campaign, present before every refused run (it must stay byte for byte). */
const REGISTRY = canonicalPrettyJson({
  kind: 'imep.seed-registry',
  version: 1,
  campaigns: {
    other: {
      bands: [{ task: 'replay/tiny', start: 900, end: 901 }],
      reuse: [],
      registeredAt: '2026-01-01T00:00:00.000Z',
      protocolHash: null,
    },
  },
});

function protocolYaml(id: string, simulator: string, envId: string, seeds = '{ start: 0, end: 1 }', n = 2): string {
  return `version: 1
id: ${id}
title: bad bridged input
simulator: ${simulator}
envs: [{ id: ${envId} }]
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: ${liteCheckpointSha()} }
memory: { bank: episode-local, banks: [perceptual], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [${seeds}] }
n: ${n}
attempts: { count: 1, registered: 1 }
conditions: [{ id: A, kind: A }]
waves: [{ id: 1, conditions: [A], anchor: A }]
estimands: [{ id: SR_A, kind: successRate, condition: A }]
executionFailures: { policy: record }
allowlists: { methodVisible: [image, state], evaluatorOnly: [reward, success, oracle, seed] }
`;
}

const REPLAY = `{ kind: sim-bridge, adapter: replay, replayDir: ${join(ROOT, 'sim-bridge/tests/fixtures/replay')} }`;

/** Runs `imep campaign run` on `yaml` against a campaigns folder holding only a registry; returns the exit and the folder's listing after. */
async function refused(name: string, yaml: string, env: NodeJS.ProcessEnv = {}) {
  writeFileSync(join(dir, `${name}.yaml`), yaml);
  const campaigns = join(dir, `campaigns-${name}`);
  mkdirSync(campaigns);
  writeFileSync(join(campaigns, 'seed-registry.json'), REGISTRY);
  const r = await imep(['campaign', 'run', `${name}.yaml`, '--campaigns-dir', campaigns], dir, undefined, env);
  return {
    ...r,
    lines: r.stderr.trim().split('\n'),
    after: readdirSync(campaigns),
    registry: readFileSync(join(campaigns, 'seed-registry.json'), 'utf8'),
  };
}

describe('bad bridged input: one line, exit 2, nothing written', () => {
  it('an env id the server does not host: names envs[0].id and what the server hosts', async () => {
    const r = await refused('env', protocolYaml('bad-env', REPLAY, 'replay/nothing'));
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(
      /^imep: env\.yaml: envs\[0\]\.id: the simulator server at ipc:\/\/\S+ cannot make replay\/nothing: make: E_UNKNOWN_ENV: .* — it hosts: replay\/tiny$/,
    );
    expect(r.after).toEqual(['seed-registry.json']);
    expect(r.registry).toBe(REGISTRY);
  }, 60_000);

  it('seeds the environment does not take (its spec declares the recorded seeds 0–1): names seeds and the range', async () => {
    const r = await refused('seeds', protocolYaml('bad-seeds', REPLAY, 'replay/tiny', '{ start: 1, end: 3 }', 3));
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain(
      'seeds.yaml: seeds: 2 of the 3 registered seeds (2, 3) are outside the seeds replay/tiny takes: 0–1 — register seeds inside 0–1',
    );
    expect(r.after).toEqual(['seed-registry.json']);
    expect(r.registry).toBe(REGISTRY);
  }, 60_000);

  it.runIf(!importable('libero'))(
    'the LIBERO adapter where LIBERO is not installed: names the module and the setup command',
    async () => {
      const r = await refused(
        'libero',
        protocolYaml('no-libero', '{ kind: sim-bridge, adapter: libero }', 'libero-mem/top-drawer-cue'),
      );
      expect(r.code, r.stderr).toBe(2);
      expect(r.lines).toHaveLength(1);
      expect(r.lines[0]).toMatch(
        /libero\.yaml: simulator\.adapter: the simulator adapter 'libero' cannot run at ipc:\/\/\S+: python module '(libero|robosuite)' is not installed \(bash scripts\/setup-sims\.sh libero /,
      );
      expect(r.after).toEqual(['seed-registry.json']);
    },
    60_000,
  );

  it.runIf(!importable('mani_skill') || !importable('torch'))(
    'the MIKASA-Robo adapter where its stack is not installed: names the module and the setup command',
    async () => {
      const r = await refused(
        'mikasa',
        protocolYaml('no-mikasa', '{ kind: sim-bridge, adapter: mikasa }', 'mikasa/RememberColor3-VLA-v0'),
      );
      expect(r.code, r.stderr).toBe(2);
      expect(r.lines).toHaveLength(1);
      expect(r.lines[0]).toMatch(
        /mikasa\.yaml: simulator\.adapter: the simulator adapter 'mikasa' cannot run at ipc:\/\/\S+: python module '\w+' is not installed \(bash scripts\/setup-sims\.sh mikasa/,
      );
      expect(r.after).toEqual(['seed-registry.json']);
    },
    60_000,
  );

  it('an IMEP_PYTHON that does not exist: names the interpreter and IMEP_PYTHON', async () => {
    const python = join(dir, 'no-such-python');
    const r = await refused('python', protocolYaml('no-python', REPLAY, 'replay/tiny'), { IMEP_PYTHON: python });
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain(`${python} not found`);
    expect(r.lines[0]).toContain('IMEP_PYTHON');
    expect(r.after).toEqual(['seed-registry.json']);
  }, 60_000);

  it('a hosted policy whose python does not exist: names the interpreter and IMEP_PYTHON, exit 2, nothing written', async () => {
    const python = join(dir, 'no-such-host-python');
    const yaml = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8').replace(
      /^id: .*$/m,
      'id: no-host-python',
    );
    const r = await refused('host-python', yaml, { IMEP_PYTHON: python });
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain(`${python} not found`);
    expect(r.lines[0]).toContain('IMEP_PYTHON');
    expect(r.after).toEqual(['seed-registry.json']);
  }, 60_000);
});
