/**
 * No silent rebuild (issue 35, item 3). `npx imep` on a fresh npm cache links the project folder into npx's cache
 * and runs its `prepare` (npm ≥ 9 runs a bin the project itself declares that way); `prepare` is scripts/build.mjs,
 * which builds only when dist/ is not the build of the sources as they are (its stamp). So a reviewer's first
 * `npx imep …` in a fresh HOME answers without running tsc, and leaves dist/ as it was.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';

const home = mkdtempSync(join(tmpdir(), 'imep-fresh-home-'));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

beforeAll(() => {
  // dist/ built from the sources as they are (a no-op when it already is: the state `npm ci` leaves)
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  expect(b.status, b.stderr).toBe(0);
}, 300_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('the first `npx imep` in a fresh HOME', () => {
  it('answers without building: no tsc, dist/ untouched', () => {
    const main = join(ROOT, 'dist/cli/main.js');
    const before = statSync(main).mtimeMs;
    const r = spawnSync('npx', ['--loglevel', 'verbose', 'imep', '--version'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, HOME: home, npm_config_update_notifier: 'false', npm_config_cache: join(home, '.npm') },
      timeout: 120_000,
    });
    const output = `${r.stdout}\n${r.stderr}`;
    expect(r.status, output).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
    // npm links the project into its fresh cache and runs prepare: scripts/build.mjs, which finds dist/ current
    expect(output).not.toMatch(/imep: building dist\//);
    expect(output).not.toMatch(/\btsc -p\b|npm run build/);
    expect(output).not.toMatch(/prepare \{ code: [1-9]/);
    expect(statSync(main).mtimeMs).toBe(before);
  }, 180_000);

  it('`npm run build` always builds and says so; `prepare` then finds dist/ current', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['prepare']).toBe('node scripts/build.mjs');
    expect(pkg.scripts['build']).toBe('node scripts/build.mjs --always');
    const again = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
    expect(again.status).toBe(0);
    expect(again.stderr.trim()).toBe('imep: dist/ is up to date with the sources; nothing to build');
  });

  it('prepare builds again when a source changes, and only then (in a scratch project)', () => {
    const dir = join(home, 'scratch-project');
    mkdirSync(join(dir, 'scripts'), { recursive: true });
    mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
    copyFileSync(join(ROOT, 'scripts/build.mjs'), join(dir, 'scripts/build.mjs'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), '{ "name": "scratch", "type": "module" }\n');
    writeFileSync(
      join(dir, 'tsconfig.build.json'),
      JSON.stringify({
        compilerOptions: { outDir: 'dist', rootDir: 'src', module: 'nodenext', target: 'es2022' },
        include: ['src'],
      }),
    );
    writeFileSync(join(dir, 'src/cli/main.ts'), 'export const answer: number = 1;\n');
    const prepare = () => spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, encoding: 'utf8' });
    const first = prepare();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/^imep: building dist\/ with tsc .*\nimep: built dist\/ in \d+\.\d s\n$/);
    expect(readFileSync(join(dir, 'dist/cli/main.js'), 'utf8')).toContain('answer = 1');
    expect(statSync(join(dir, 'dist/cli/main.js')).mode & 0o111).not.toBe(0);
    expect(prepare().stderr).toBe('imep: dist/ is up to date with the sources; nothing to build\n');
    writeFileSync(join(dir, 'src/cli/main.ts'), 'export const answer: number = 2;\n');
    const again = prepare();
    expect(again.stderr).toMatch(/^imep: building dist\//);
    expect(readFileSync(join(dir, 'dist/cli/main.js'), 'utf8')).toContain('answer = 2');
  }, 120_000);
});
