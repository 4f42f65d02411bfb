/**
 * Broad but legal binds (issue 32 item 1): a protocol (or the environment) that gives a sandboxed policy host or
 * simulator server a folder holding the campaigns folder, HOME, or an interpreter under HOME is refused at precommit
 * in one line naming the field and what it would expose — before anything is written (no unit, no campaigns folder
 * content) and before any process starts. Before the fix each of these ran with "isolation: bubblewrap" while the
 * policy could read plan.json, the arrival-order key or ~/.imep/keys.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';
import { imep, liteCheckpointSha } from '../campaign/cli-support.js';

const REPLAY = `version: 1
id: binds-sim
title: a replay simulator given a broad PYTHONPATH
simulator: { kind: sim-bridge, adapter: replay, replayDir: ${join(ROOT, 'sim-bridge/tests/fixtures/replay')} }
envs: [{ id: replay/tiny }]
checkpoint: { path: ${join(ROOT, 'checkpoints/lite-memvla')}, file: model.json, sha256: "${liteCheckpointSha()}" }
memory: { bank: episode-local, banks: [perceptual], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 0, end: 1 }] }
n: 2
attempts: { count: 1, registered: 1 }
conditions: [{ id: A, kind: A }]
waves: [{ id: 1, conditions: [A], anchor: A }]
estimands: [{ id: SR_A, kind: successRate, condition: A }]
executionFailures: { policy: record }
allowlists: { methodVisible: [image, state], evaluatorOnly: [reward, success, oracle, seed] }
`;

function hosted(policyLines: string): string {
  let text = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8');
  text = text.replace(/^id: .*$/m, 'id: binds-test');
  text = text.replace(/name: shell-game-memory .*$/m, `name: shell-game-memory\n${policyLines}`);
  return text.replace(/start: 630000, end: 630023/, 'start: 660000, end: 660003').replace(/^n: 24$/m, 'n: 4');
}

describe('a bind that would expose the campaigns folder, the key store or HOME', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-binds-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // a project folder that holds the campaigns folder and a module; a HOME with IMEP's key store in it
  const project = join(dir, 'project');
  const home = join(dir, 'home');
  mkdirSync(join(project, 'campaigns'), { recursive: true });
  mkdirSync(join(home, '.imep', 'keys'), { recursive: true });
  mkdirSync(join(home, 'bin'));
  writeFileSync(join(home, '.imep', 'keys', 'operator.key'), 'private');
  symlinkSync('/usr/bin/python3', join(home, 'bin', 'python3'));
  const env = { HOME: home, IMEP_KEYS_DIR: join(home, '.imep', 'keys') };
  const unitsIn = (c: string): string[] => (existsSync(c) ? readdirSync(c).filter((n) => !n.startsWith('seed-')) : []);

  let count = 0;
  const refused = async (yaml: string, extraEnv: Record<string, string> = {}, campaigns = 'campaigns') => {
    // each case its own protocol id: a case that ran (before the fix) never makes the next one "edited"
    // and its own seeds: a case that ran never overlaps the next one's in the seed registry
    const n = ++count;
    const own = yaml
      .replace(/^id: (.*)$/m, `id: $1-${n}`)
      .replace(
        /start: (\d{6}), end: (\d{6})/,
        (_m, a: string, b: string) => `start: ${+a + n * 100}, end: ${+b + n * 100}`,
      );
    writeFileSync(join(project, 'p.yaml'), own);
    const r = await imep(['campaign', 'precommit', 'p.yaml', '--campaigns-dir', campaigns], project, undefined, {
      ...env,
      ...extraEnv,
    });
    return { ...r, units: unitsIn(join(project, campaigns)) };
  };

  it('policy.pythonPath = the project folder that holds campaigns/: refused, nothing written', async () => {
    const r = await refused(hosted(`  pythonPath: [${project}]`));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /policy\.pythonPath\[0\]: .*project would be bound into the sandboxed policy host, exposing the campaigns folder/,
    );
    expect(r.stderr.trim().split('\n')).toHaveLength(1); // one line, its hint on it
    expect(r.units).toEqual([]);
  }, 60_000);

  it('policy.pythonPath = HOME: refused (it holds ~/.imep/keys)', async () => {
    const r = await refused(hosted(`  pythonPath: [${home}]`));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /policy\.pythonPath\[0\]: .*home would be bound into the sandboxed policy host, exposing the key store/,
    );
    expect(r.units).toEqual([]);
  }, 60_000);

  it('policy.python = an interpreter under HOME: refused (its prefix is HOME)', async () => {
    const r = await refused(hosted(`  python: ${join(home, 'bin', 'python3')}`));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/policy\.python: .*home would be bound into the sandboxed policy host, exposing/);
    expect(r.units).toEqual([]);
  }, 60_000);

  it('a folder inside the campaigns folder is refused too (pythonPath: campaigns/x)', async () => {
    mkdirSync(join(project, 'campaigns', 'x'), { recursive: true });
    const r = await refused(hosted(`  pythonPath: [${join(project, 'campaigns', 'x')}]`));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/policy\.pythonPath\[0\]: .* exposing the campaigns folder/);
    rmSync(join(project, 'campaigns', 'x'), { recursive: true });
  }, 60_000);

  // review defect 1: a `..` after a symbolic link goes up from where the link lands (the kernel's rule, and bwrap's):
  // before the fix the `..` was removed as text (…/mods), the bind let through, and bwrap handed …/mods/link/..
  it('policy.pythonPath = mods/link/.. with link -> the key store’s subfolder: refused', async () => {
    mkdirSync(join(home, '.imep', 'keys', 'sub'), { recursive: true });
    mkdirSync(join(project, 'mods'), { recursive: true });
    symlinkSync(join(home, '.imep', 'keys', 'sub'), join(project, 'mods', 'link'));
    const r = await refused(hosted(`  pythonPath: [${join(project, 'mods')}/link/..]`));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /policy\.pythonPath\[0\]: .*mods\/link\/\.\. would be bound into the sandboxed policy host, exposing the key store/,
    );
    expect(r.units).toEqual([]);
  }, 60_000);

  it('policy.pythonPath = mods/clink/.. with clink -> a folder of a campaigns unit: refused', async () => {
    mkdirSync(join(project, 'campaigns', 'unit-0', 'rows'), { recursive: true });
    mkdirSync(join(project, 'mods'), { recursive: true });
    symlinkSync(join(project, 'campaigns', 'unit-0', 'rows'), join(project, 'mods', 'clink'));
    const r = await refused(hosted(`  pythonPath: [${join(project, 'mods')}/clink/..]`));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/policy\.pythonPath\[0\]: .*mods\/clink\/\.\. .* exposing the campaigns folder/);
    rmSync(join(project, 'campaigns', 'unit-0'), { recursive: true });
  }, 60_000);

  // review defect 2: a declared device that is a disk or a terminal is refused at precommit, naming the field
  it.runIf(process.getuid?.() === 0)(
    'policy.devices = a disk (a block node) or a terminal: refused',
    async () => {
      const { spawnSync } = await import('node:child_process');
      mkdirSync(join(dir, 'nodes'), { recursive: true });
      expect(spawnSync('mknod', [join(dir, 'nodes', 'sda'), 'b', '8', '0']).status).toBe(0);
      expect(spawnSync('mknod', [join(dir, 'nodes', 'tty'), 'c', '5', '0']).status).toBe(0);
      const disk = await refused(hosted(`  devices: [nvidia, ${join(dir, 'nodes', 'sda')}]`));
      expect(disk.code).toBe(2);
      expect(disk.stderr).toMatch(
        /policy\.devices\[1\]: .*sda, which is a block device \(a disk\): only GPU or accelerator/,
      );
      expect(disk.units).toEqual([]);
      const tty = await refused(hosted(`  devices: [${join(dir, 'nodes', 'tty')}]`));
      expect(tty.code).toBe(2);
      expect(tty.stderr).toMatch(/policy\.devices\[0\]: .*tty, which is character device 5:0, a terminal/);
    },
    60_000,
  );

  it('a simulator server given the project folder on PYTHONPATH: refused naming PYTHONPATH, no server started', async () => {
    const r = await refused(REPLAY, { PYTHONPATH: project });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /PYTHONPATH: .*project would be bound into the sandboxed simulator server, exposing the campaigns folder/,
    );
    expect(r.units).toEqual([]);
  }, 60_000);

  it('IMEP_SANDBOX_READ = HOME for a simulator server: refused naming IMEP_SANDBOX_READ', async () => {
    // its own campaigns folder: the replay environment has two seeds, which the case before registered (before the fix)
    const r = await refused(REPLAY, { IMEP_SANDBOX_READ: home }, 'campaigns-2');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/IMEP_SANDBOX_READ: .*home would be bound into the sandboxed simulator server/);
    expect(r.units).toEqual([]);
  }, 60_000);
});
