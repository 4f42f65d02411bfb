/**
 * The two release artefacts built and installed as a user would (docs/install.md): `npm pack` at the project root
 * (its `prepare` script builds dist/ first) installed with `npm install -g --prefix P ./imep-0.1.0.tgz` in a fresh HOME
 * and npm cache (dependencies from the registry), and sim-bridge's wheel (`pip wheel --no-deps` by a fresh venv's pip,
 * from a copy of sim-bridge/ so the checkout gets no build/ or egg-info) installed with its `test` extra into that venv.
 * Each step is timed; test/packaging/install.test.ts asserts on what they produce.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../campaign/helpers.js';

/** The Python that makes the venv (Debian's python3-venv; the venv's own pip builds and installs the wheel). */
export const PACKAGING_PYTHON = process.env['IMEP_PACKAGING_PYTHON'] ?? '/usr/bin/python3';

export interface PackFile {
  readonly path: string;
  readonly size: number;
}

export interface Artefacts {
  readonly dir: string;
  /** A fresh HOME (npm cache, pip cache, IMEP keys and seen store all under it). */
  readonly home: string;
  /** The environment every installed command runs in. */
  readonly env: NodeJS.ProcessEnv;
  readonly tarball: {
    readonly file: string;
    readonly size: number;
    readonly unpacked: number;
    readonly files: PackFile[];
  };
  /** The installed `imep` (PREFIX/bin/imep) and the package folder it runs from. */
  readonly imep: string;
  readonly installedPackage: string;
  readonly wheel: { readonly file: string; readonly size: number };
  /** The fresh venv's python, with the wheel and its test extra installed. */
  readonly venvPython: string;
  readonly venv: string;
  /** Seconds each step took. */
  readonly seconds: Record<string, number>;
}

/** Runs a command; throws with its output when it fails. */
export function must(
  file: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): SpawnSyncReturns<string> {
  const r = spawnSync(file, args, { ...opts, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) {
    throw new Error(`${file} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`.slice(-8000));
  }
  return r;
}

function timed<T>(seconds: Record<string, number>, step: string, fn: () => T): T {
  const t0 = performance.now();
  const value = fn();
  seconds[step] = Math.round((performance.now() - t0) / 100) / 10;
  return value;
}

/** The environment of a first-time user: a fresh HOME and caches, nothing of the test run's IMEP settings. */
function freshEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('IMEP_') && !k.startsWith('npm_') && !k.startsWith('PIP_') && k !== 'PYTHONPATH') env[k] = v;
  }
  return {
    ...env,
    HOME: home,
    npm_config_cache: join(home, '.npm'),
    npm_config_update_notifier: 'false',
    ONNXRUNTIME_NODE_INSTALL: 'skip', // onnxruntime-node's install step would fetch its CUDA provider
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
  };
}

interface PackJson {
  readonly filename: string;
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: PackFile[];
}

/** Builds both artefacts and installs them; minutes (the npm install fetches the dependencies). */
export function buildAndInstall(): Artefacts {
  const dir = mkdtempSync(join(tmpdir(), 'imep-packaging-'));
  const home = join(dir, 'home');
  const prefix = join(dir, 'prefix');
  mkdirSync(home);
  const env = freshEnv(home);
  const seconds: Record<string, number> = {};
  // npm pack at the project root: `prepare` builds dist/ (the developer's npm, not the fresh HOME's cache)
  const packEnv = { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' };
  const pack = timed(seconds, 'npm pack', () =>
    must('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, env: packEnv }),
  );
  const packed = (JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as PackJson[])[0];
  if (packed === undefined) throw new Error(`npm pack printed no package:\n${pack.stdout}`);
  const tarball = join(dir, packed.filename);
  timed(seconds, 'npm install -g', () =>
    must('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball], { cwd: dir, env }),
  );
  const bridge = join(dir, 'sim-bridge-src');
  cpSync(join(ROOT, 'sim-bridge'), bridge, {
    recursive: true,
    filter: (src) => !/(__pycache__|\.egg-info|[/\\]build|\.pytest_cache)$/.test(src),
  });
  // the venv first: its own pip builds the wheel (no system pip needed), then installs it with its test extra
  const venv = join(dir, 'venv');
  const venvPython = join(venv, 'bin', 'python');
  timed(seconds, 'venv', () => must(PACKAGING_PYTHON, ['-m', 'venv', venv], { cwd: dir, env }));
  const wheels = join(dir, 'wheels');
  timed(seconds, 'pip wheel', () =>
    must(venvPython, ['-m', 'pip', 'wheel', '--no-deps', '-w', wheels, bridge], { cwd: dir, env }),
  );
  const wheelName = readdirSync(wheels).find((f) => f.endsWith('.whl'));
  if (wheelName === undefined) throw new Error(`pip wheel wrote no wheel into ${wheels}`);
  const wheel = join(wheels, wheelName);
  timed(seconds, 'pip install wheel[test]', () =>
    must(venvPython, ['-m', 'pip', 'install', '-q', `${wheel}[test]`], { cwd: dir, env }),
  );
  return {
    dir,
    home,
    env,
    tarball: { file: tarball, size: packed.size, unpacked: packed.unpackedSize, files: packed.files },
    imep: join(prefix, 'bin', 'imep'),
    installedPackage: join(prefix, 'lib', 'node_modules', 'imep'),
    wheel: { file: wheel, size: statSync(wheel).size },
    venvPython,
    venv,
    seconds,
  };
}
