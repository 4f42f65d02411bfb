/**
 * Bad input on the real simulator stacks (#20): `imep campaign run` (the built CLI) on the shipped real protocols
 * with one thing wrong exits 2 with one line naming the field or what to install, before anything is written — the
 * campaigns folder stays empty (no unit, no temporary folder, no seed registry). The generic cases (an env id the
 * server does not host, seeds outside those an environment declares, an adapter whose packages are missing, an
 * IMEP_PYTHON that does not exist) run in the bare suite (runner/bad-bridged-input.test.ts); these need the stacks:
 *
 *   IMEP_REAL_LIBERO=1 (scripts/sims/libero.sh test): a LIBERO task that does not exist; a renderer that does not
 *     render (MUJOCO_GL=glx-none: the adapter's probe fails and make refuses, naming MUJOCO_GL and what to install);
 *     a seed above 2^32 − 1, which LIBERO's np.random.seed cannot take (refused by the protocol schema).
 *   IMEP_REAL_MIKASA=1 (scripts/sims/mikasa.sh test): a RememberColor variant that does not exist; kwargs the env
 *     cannot take (ShellGameTouch in state mode); ShellGameTouch from pixels, whose YCB asset is on no package
 *     registry (refused at make, before ManiSkill could prompt or download).
 *
 * And a checkpoint (issue #33's contract, graphs built with zero weights: test/policies/contract-checkpoint.ts) whose
 * I/O the real environment's declared spec does not match — a RememberColor5 checkpoint (cubes [batch, 5, 4]) on
 * RememberColor3, a LIBERO checkpoint whose cue input is [batch, 1] where the env's cue is a scalar — refused once the
 * server has declared the spec, naming model.json, the tensor, its shape and the env's.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { liberoContract, mikasaContract, writeContractCheckpoint } from '../policies/contract-checkpoint.js';
import { imep } from './cli-support.js';
import { ROOT } from './helpers.js';

const LIBERO = process.env['IMEP_REAL_LIBERO'] === '1';
const MIKASA = process.env['IMEP_REAL_MIKASA'] === '1';

const dir = mkdtempSync(join(tmpdir(), 'imep-real-bad-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `imep campaign run` on `protocol` with `edit` applied; the exit, its stderr lines and the campaigns folder after. */
async function refused(name: string, protocol: string, edit: (text: string) => string, env: NodeJS.ProcessEnv = {}) {
  const original = readFileSync(join(ROOT, 'protocols', protocol), 'utf8');
  const text = edit(original);
  expect(text).not.toBe(original);
  writeFileSync(join(dir, `${name}.yaml`), text);
  const campaigns = join(dir, `campaigns-${name}`);
  mkdirSync(campaigns);
  const t0 = performance.now();
  const r = await imep(
    [
      'campaign',
      'run',
      `${name}.yaml`,
      '--through',
      'closeout',
      '--same-operator-reason',
      'bad-input test',
      '--batch',
      '1',
      '--campaigns-dir',
      campaigns,
    ],
    dir,
    undefined,
    env,
  );
  process.stdout.write(
    `real-sim bad input ${name}: exit ${r.code} in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${r.stderr.trim()}\n`,
  );
  return { ...r, lines: r.stderr.trim().split('\n'), after: readdirSync(campaigns) };
}

/**
 * The shipped protocol's hosted policy replaced by checkpoint `c` (written under dir/checkpoints/NAME), its memory
 * block the checkpoint's (k 4, token-merge), so that only the checkpoint's I/O against the environment is wrong.
 */
function withCheckpoint(text: string, c: Parameters<typeof writeContractCheckpoint>[1]): string {
  const sha = writeContractCheckpoint(join(dir, 'checkpoints', c.name), c);
  const out = text
    .replace(
      /^policy:\n(?: {2}.*\n)+/m,
      `checkpoint: { path: checkpoints/${c.name}, file: model.json, sha256: ${sha} }\n`,
    )
    .replace(/^ {2}k: \d+$/m, '  k: 4')
    .replace(/^ {2}consolidation: fifo$/m, '  consolidation: token-merge');
  expect(out).toContain('checkpoint: { path:');
  expect(out).toContain('consolidation: token-merge');
  return out;
}

describe.skipIf(!LIBERO)('real LIBERO: bad input (IMEP_REAL_LIBERO=1)', () => {
  it('a LIBERO task that does not exist: envs[0].id, what the server hosts', async () => {
    const r = await refused('libero-task', 'libero-drawer-memory.yaml', (t) =>
      t.replace('  - id: libero-mem/top-drawer-cue', '  - id: libero/libero_90/90'),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(
      /^imep: libero-task\.yaml: envs\[0\]\.id: the simulator server at ipc:\/\/\S+ cannot make libero\/libero_90\/90: make: E_UNKNOWN_ENV: .* — it hosts: libero\/libero_spatial\/0, /,
    );
    expect(r.after).toEqual([]);
  }, 120_000);

  it('a renderer that does not render (MUJOCO_GL set to one MuJoCo cannot use): names MUJOCO_GL and what to install', async () => {
    const r = await refused(
      'libero-gl',
      'libero-drawer-memory.yaml',
      (t) => t.replace('id: libero-drawer-memory', 'id: libero-drawer-memory-gl'),
      { MUJOCO_GL: 'glx-none' },
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain('libero-gl.yaml: envs[0].id: the simulator server at ipc://');
    expect(r.lines[0]).toContain('cannot make libero-mem/top-drawer-cue: make: E_SIM_UNAVAILABLE: ');
    expect(r.lines[0]).toContain('MUJOCO_GL=glx-none was set and does not render');
    expect(r.lines[0]).toContain('apt-get install libosmesa6');
    expect(r.after).toEqual([]);
  }, 180_000);

  it("a checkpoint whose cue input is [batch, 1] where the env's cue is a scalar: model.json, the tensor and both shapes", async () => {
    const c = liberoContract('libero-cue-wide');
    const r = await refused('libero-io', 'libero-drawer-memory.yaml', (t) =>
      withCheckpoint(t, {
        ...c,
        encode: c.encode.map((o) => (o.name === 'cue' ? { ...o, shape: ['batch', 1] } : o)),
      }),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toBe(
      `imep: ${join(dir, 'checkpoints/libero-cue-wide/model.json')}: graphs.encode.inputs[2].shape: encode input "cue" has shape [batch, 1] but env libero-mem/top-drawer-cue gives cue [] (expected [batch]) — libero-cue-wide was built for libero-mem/top-drawer-cue with kwargs {}: make the environment it was built for, or re-export it for this one`,
    );
    expect(r.after).toEqual([]);
  }, 120_000);

  it('a seed LIBERO cannot take (above 2^32 − 1): seeds.bands[0].end', async () => {
    const r = await refused('libero-seed', 'libero-drawer-memory.yaml', (t) =>
      t.replace('{ start: 720000, end: 720011 }', '{ start: 4294967290, end: 4294967301 }'),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(
      /^imep: libero-seed\.yaml:\d+:\d+: seeds\.bands\[0\]\.end: must be ≤ 4294967295, got 4294967301/,
    );
    expect(r.after).toEqual([]);
  }, 60_000);
});

describe.skipIf(!MIKASA)('real MIKASA-Robo: bad input (IMEP_REAL_MIKASA=1)', () => {
  it('a RememberColor variant that does not exist: envs[0].id, what the server hosts', async () => {
    const r = await refused('mikasa-task', 'mikasa-remembercolor.yaml', (t) =>
      t.replace('  - id: mikasa/RememberColor3-VLA-v0', '  - id: mikasa/RememberColor4-VLA-v0'),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(
      /^imep: mikasa-task\.yaml: envs\[0\]\.id: the simulator server at ipc:\/\/\S+ cannot make mikasa\/RememberColor4-VLA-v0: make: E_UNKNOWN_ENV: .* — it hosts: /,
    );
    expect(r.after).toEqual([]);
  }, 120_000);

  it("a RememberColor5 checkpoint (cubes [batch, 5, 4]) on RememberColor3: model.json, the tensor, its shape and the env's", async () => {
    const r = await refused('mikasa-io', 'mikasa-remembercolor.yaml', (t) =>
      withCheckpoint(t, mikasaContract('mikasa-rc5-test', 'mikasa/RememberColor5-VLA-v0', 5)),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toBe(
      `imep: ${join(dir, 'checkpoints/mikasa-rc5-test/model.json')}: graphs.encode.inputs[1].shape: encode input "cubes" has shape [batch, 5, 4] but env mikasa/RememberColor3-VLA-v0 gives cubes [3, 4] (expected [batch, 3, 4]) — bind a checkpoint built for mikasa/RememberColor3-VLA-v0 (mikasa-rc5-test was built for mikasa/RememberColor5-VLA-v0), or re-export it for that environment`,
    );
    expect(r.after).toEqual([]);
  }, 120_000);

  it('kwargs the env cannot take (ShellGameTouch in state mode, where no visible state field carries the cue): envs[0]', async () => {
    const r = await refused('mikasa-kwargs', 'mikasa-remembercolor.yaml', (t) =>
      t.replace('  - id: mikasa/RememberColor3-VLA-v0', '  - id: mikasa/ShellGameTouch-v0'),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain('mikasa-kwargs.yaml: envs[0]: the simulator server at ipc://');
    expect(r.lines[0]).toContain(
      "cannot make mikasa/ShellGameTouch-v0: make: E_ADAPTER: mikasa/ShellGameTouch-v0: obs_mode 'state': no visible state field carries the task's cue; use obs_mode 'rgb'",
    );
    expect(r.after).toEqual([]);
  }, 120_000);

  it('ShellGameTouch from pixels, whose YCB asset no registry has: envs[0], the asset and where it belongs', async () => {
    const r = await refused('mikasa-shellgame', 'mikasa-remembercolor.yaml', (t) =>
      t
        .replace('  - id: mikasa/RememberColor3-VLA-v0', '  - id: mikasa/ShellGameTouch-v0')
        .replace('obs_mode: state,', 'obs_mode: rgb,'),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain('mikasa-shellgame.yaml: envs[0]: the simulator server at ipc://');
    expect(r.lines[0]).toContain('cannot make mikasa/ShellGameTouch-v0: make: E_ADAPTER: ');
    expect(r.lines[0]).toContain('are on no package registry');
    expect(r.after).toEqual([]);
  }, 120_000);
});
