#!/usr/bin/env node
/**
 * scripts/build.mjs — builds dist/ with tsc, once, and says so (issue 35, item 3).
 *
 *   node scripts/build.mjs --always   `npm run build`: always builds
 *   node scripts/build.mjs            `prepare`: builds only when dist/ is not the build of the sources as they are
 *
 * npm runs `prepare` on `npm ci` / `npm install` at the project root and on `npm pack`, and ALSO each time `npx imep`
 * meets a fresh npm cache: npm ≥ 9 (libnpmexec) runs a bin the project itself declares by linking the project folder
 * into its npx cache, and a linked folder runs its `prepare` — a silent tsc of 9–50 s on a reviewer's fresh HOME.
 * So `prepare` compares a stamp (dist/.build-stamp: the SHA-256 of every file under src/, the tsconfig files and the
 * TypeScript version) with the sources and builds only when they differ: `npm ci` builds once, and no later command
 * (`verify`, `keys`, `status`, `report` in a fresh HOME included) triggers a build. When it does build it says what it
 * does, also on the terminal when npm hides the script's output (npx).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const STAMP = join(ROOT, 'dist', '.build-stamp');
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');

/** Every file under `dir`, sorted (paths relative to ROOT). */
function filesUnder(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(ROOT, p));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort();
}

function tscPath() {
  try {
    return createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return null;
  }
}

/** The stamp of the sources dist/ is built from. */
export function sourceStamp() {
  const h = createHash('sha256');
  const tsc = tscPath();
  const tsVersion =
    tsc === null ? 'none' : JSON.parse(readFileSync(join(dirname(tsc), '..', 'package.json'), 'utf8')).version;
  h.update(`typescript ${tsVersion}\n`);
  for (const f of [...filesUnder(join(ROOT, 'src')), 'tsconfig.json', 'tsconfig.build.json']) {
    const p = join(ROOT, f);
    if (!existsSync(p)) continue;
    h.update(`${f}\0`);
    h.update(createHash('sha256').update(readFileSync(p)).digest('hex'));
    h.update('\n');
  }
  return h.digest('hex');
}

/** Whether dist/ is the build of the sources as they are. */
export function upToDate(stamp = sourceStamp()) {
  return existsSync(MAIN) && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === stamp;
}

/** A line on stderr, and on the terminal when npm captures the script's output (npx's link into its cache). */
function say(line) {
  process.stderr.write(`${line}\n`);
  if (process.env.npm_command === 'exec' && !process.stderr.isTTY) {
    try {
      appendFileSync('/dev/tty', `${line}\n`);
    } catch {
      // no terminal: npm shows the output if the build fails
    }
  }
}

function build(stamp) {
  const tsc = tscPath();
  if (tsc === null) {
    say('imep: cannot build dist/: TypeScript is not installed here (run `npm ci` in the project folder first)');
    process.exit(1);
  }
  say('imep: building dist/ with tsc (once, 20–60 s; later commands reuse it)');
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    say(`imep: tsc failed (exit ${r.status ?? r.signal}); dist/ is not built`);
    process.exit(r.status ?? 1);
  }
  chmodSync(MAIN, 0o755);
  writeFileSync(STAMP, `${stamp}\n`);
  say(`imep: built dist/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const stamp = sourceStamp();
  if (process.argv.includes('--always') || !upToDate(stamp)) build(stamp);
  else if (process.env.npm_command !== 'exec') say('imep: dist/ is up to date with the sources; nothing to build');
}
