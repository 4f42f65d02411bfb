/**
 * Issue 35, item 10: IMEP installed as packages, not cloned (docs/install.md). Both artefacts are built from this
 * checkout and installed in a fresh HOME (test/packaging/artefacts.ts): the npm tarball with `npm install -g`, the
 * sim-bridge wheel with its `test` extra into a fresh venv. Then, in an empty folder outside the repository, the
 * installed `imep` copies a shipped protocol out (`imep protocol example`), runs the quick start's campaign on the copy
 * through closeout (its checkpoint resolved to the one shipped in the package, the unit written under the folder),
 * and runs the hosted-policy protocol with its policy host on the wheel's venv (IMEP_PYTHON).
 * Runs under CI=true (where it must not skip) or IMEP_PACKAGING=1: it builds dist/, downloads the dependencies and
 * takes minutes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';
import { readUnitRows } from '../helpers/unit-rows.js';
import { buildAndInstall, PACKAGING_PYTHON, type Artefacts } from './artefacts.js';

const CI = process.env['CI'] === 'true';
const RUN = CI || process.env['IMEP_PACKAGING'] === '1';
const npmFound = spawnSync('npm', ['--version']).status === 0;
const venvFound = spawnSync(PACKAGING_PYTHON, ['-c', 'import ensurepip, venv']).status === 0;
const WHY_NOT = !npmFound
  ? 'npm is not on PATH'
  : !venvFound
    ? `${PACKAGING_PYTHON} cannot make a venv (Debian: python3-venv)`
    : null;

if (CI && WHY_NOT !== null) {
  it('CI: the packaging test can run (npm, pip and venv)', () => {
    throw new Error(`the packaging test cannot run: ${WHY_NOT}`);
  });
}

interface Verdict {
  readonly criterion: string;
  readonly verdict: string;
}

/** The unit's verdicts by criterion (its first adjudication). */
function verdicts(unit: string): Record<string, string> {
  const a = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as {
    verdicts: Verdict[];
  };
  return Object.fromEntries(a.verdicts.map((v) => [v.criterion, v.verdict]));
}

describe.runIf(RUN && WHY_NOT === null)('IMEP installed from its npm tarball and sim-bridge wheel', () => {
  let a: Artefacts;
  let work: string;
  const imep = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    spawnSync(a.imep, args, { cwd: work, env: { ...a.env, ...extra }, encoding: 'utf8', maxBuffer: 64 << 20 });

  beforeAll(() => {
    a = buildAndInstall();
    work = join(a.dir, 'my-study');
    mkdirSync(work);
  }, 900_000);

  afterAll(() => {
    if (a === undefined) return;
    process.stdout.write(`packaging: ${JSON.stringify(a.seconds)} s\n`);
    // ~1 GB (the installed package with its dependencies, the npm cache, the venv); IMEP_PACKAGING_KEEP=1 keeps it
    if (process.env['IMEP_PACKAGING_KEEP'] === '1') process.stdout.write(`packaging: kept ${a.dir}\n`);
    else rmSync(a.dir, { recursive: true, force: true });
  });

  it('the tarball holds what a user runs and none of the tests, source maps, egg-info or caches', () => {
    const paths = a.tarball.files.map((f) => f.path);
    for (const needed of [
      'dist/cli/main.js',
      'checkpoints/lite-memvla/model.json',
      'protocols/shellgame-blackout.yaml',
      'protocols/shellgame-hosted-policy.yaml',
      'sim-bridge/imep_sim_bridge/policy_host.py',
      'sim-bridge/pyproject.toml',
    ]) {
      expect(paths).toContain(needed);
    }
    expect(
      paths.filter((p) => /^sim-bridge\/tests\/|\.map$|\.d\.ts$|__pycache__|\.egg-info|\.pyc$|^(src|test)\//.test(p)),
    ).toEqual([]);
    expect(a.tarball.size).toBeLessThan(6 * 1024 * 1024);
    expect(existsSync(join(a.installedPackage, 'dist/cli/main.js'))).toBe(true);
  });

  it('the wheel holds every module of imep_sim_bridge, and its entry point runs from the fresh venv', () => {
    const listed = spawnSync(a.venvPython, ['-c', 'import imep_sim_bridge, sys; print(imep_sim_bridge.__file__)'], {
      cwd: work,
      env: a.env,
      encoding: 'utf8',
    });
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout.trim().startsWith(a.venv)).toBe(true);
    const files = (dir: string): string[] =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.py'))
        .sort();
    const installed = join(listed.stdout.trim(), '..');
    expect(files(installed)).toEqual(files(join(ROOT, 'sim-bridge/imep_sim_bridge')));
    const adapters = spawnSync(join(a.venv, 'bin', 'imep-sim-bridge'), ['adapters'], {
      cwd: work,
      env: a.env,
      encoding: 'utf8',
    });
    expect(adapters.status, adapters.stderr).toBe(0);
    expect(adapters.stdout).toMatch(/mikasa/);
  });

  it('imep protocol example lists the shipped protocols and copies one out, never overwriting', () => {
    const list = imep(['protocol', 'example']);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(join(a.installedPackage, 'protocols'));
    expect(list.stdout).toMatch(/^ {2}shellgame-blackout +ShellGame-lite blackout ladder/m);
    const copy = imep(['protocol', 'example', 'shellgame-blackout', '--out', 'my.yaml']);
    expect(copy.status, copy.stderr).toBe(0);
    expect(copy.stdout).toContain('wrote my.yaml: shellgame-blackout (protocol shellgame-blackout, hash 750efa7a9384)');
    // the checkpoint the copy will use, named: none next to it, so the one shipped in the installed package
    expect(copy.stdout).toContain(
      `checkpoint checkpoints/lite-memvla/model.json: ${join(a.installedPackage, 'checkpoints/lite-memvla/model.json')}`,
    );
    const again = imep(['protocol', 'example', 'shellgame-blackout', '--out', 'my.yaml']);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('my.yaml exists; it is not overwritten');
  });

  it('the installed imep runs the quick start on the copy through closeout, its unit under the working folder', () => {
    const r = imep(['campaign', 'run', 'my.yaml', '--through', 'closeout', '--same-operator-reason', 'x']);
    expect(r.status, r.stderr.slice(-4000)).toBe(0);
    const unit = join(work, 'campaigns', 'shellgame-blackout-750efa7a9384');
    expect(readUnitRows(unit)).toHaveLength(5600);
    expect(verdicts(unit)).toMatchObject({
      Q1: 'not detected',
      Q1_eligibility: 'holds',
      Q3_S_pi: 'holds',
      Q3_T_mu: 'holds',
      Q4: 'unresolved',
    });
    expect(existsSync(join(unit, 'closeout.json'))).toBe(true);
    expect(existsSync(join(a.installedPackage, 'campaigns'))).toBe(false); // nothing written inside the package
    const verify = imep(['campaign', 'verify', relative(work, unit)]);
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
  });

  it("a hosted Python policy runs from the wheel's venv (IMEP_PYTHON)", () => {
    const copy = imep(['protocol', 'example', 'shellgame-hosted-policy', '--out', 'hosted.yaml']);
    expect(copy.status, copy.stderr).toBe(0);
    const r = imep(['campaign', 'run', 'hosted.yaml', '--through', 'closeout', '--same-operator-reason', 'x'], {
      IMEP_PYTHON: a.venvPython,
    });
    expect(r.status, r.stderr.slice(-4000)).toBe(0);
    expect(r.stdout).toContain(`started by IMEP: ${a.venvPython} -m imep_sim_bridge.policy_host`);
    const unit = readdirSync(join(work, 'campaigns')).find((d) => d.startsWith('shellgame-hosted-policy-'));
    expect(unit).toBeDefined();
    const dir = join(work, 'campaigns', unit ?? '');
    expect(readUnitRows(dir)).toHaveLength(144);
    expect(verdicts(dir)).toMatchObject({ Q1_eligibility: 'holds' });
  });
});
