/**
 * Disk full / file too large / unwritable campaign folder, against the built CLI. Each scenario checks:
 * a clear one-line error (E_IO: `imep: <file>: could not … (<errno>) …`, exit code 4) naming a file of the
 * unit; no half-written manifest (no seal.json, no temporary file left); the unit readable and its
 * complete rows a byte prefix of an uninterrupted run's rows (verifiable up to the last durable row);
 * and, once space is back, `imep campaign resume` / `seal` finishing a unit that `verify` accepts, with
 * rows byte-identical to the uninterrupted run.
 *
 *   fsize-rows   `prlimit --fsize=N imep campaign run` — a write past N bytes fails with EFBIG (Node
 *                ignores SIGXFSZ) in the middle of the run: works for any user
 *   fsize-seal   `prlimit --fsize=M imep campaign seal` on a run-complete unit, M below seal.json's size
 *   enospc-run   a small tmpfs (root only): the campaign runs out of space mid-run (true ENOSPC)
 *   readonly     a chmod 0555 campaigns folder (as root: run as user nobody, since root ignores permission bits)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isTempName } from '../../../src/evidence/io/atomic-write.js';
import { completeRun, startRun } from '../../../src/evidence/transitions/formal-run.js';
import { imep, lineCount, MAIN, ROOT, smallBlackoutYaml, unitIn, type Exit } from './cli.js';

export interface Scenario {
  readonly name: string;
  readonly skipped?: string;
  readonly exit?: Exit;
  /** One line `imep: …` naming a file, mentioning the errno. */
  readonly errorLine?: string;
  readonly errno?: string;
  readonly namedFile?: string;
  readonly durableRows?: number;
  readonly planned?: number;
  readonly prefixOk?: boolean;
  readonly tornBytes?: number;
  readonly sealJsonAfterFailure?: boolean;
  readonly tempFiles?: readonly string[];
  readonly statusCode?: number | null;
  readonly statusLine?: string;
  readonly statusText?: string;
  readonly recoverCode?: number | null;
  readonly rowsIdentical?: boolean;
  readonly verifyCode?: number | null;
  readonly notes?: string;
}

export interface Fixture {
  readonly dir: string;
  readonly file: string;
  readonly planned: number;
  readonly refUnit: string;
  readonly refRows: Buffer;
}

export async function makeFixture(n: number): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'imep-rel-disk-'));
  const file = join(dir, 'p.yaml');
  writeFileSync(file, smallBlackoutYaml(n));
  const ref = await imep(['campaign', 'run', file, '--campaigns-dir', join(dir, 'ref')], dir);
  if (ref.code !== 0) throw new Error(`reference run failed: ${ref.stderr}`);
  const refUnit = unitIn(join(dir, 'ref')) as string;
  return { dir, file, planned: 14 * n, refUnit, refRows: readFileSync(join(refUnit, 'rows/rows.jsonl')) };
}

function walk(root: string, rel = ''): { path: string; size: number }[] {
  const out: { path: string; size: number }[] = [];
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...walk(root, p));
    else out.push({ path: p, size: statSync(join(root, p)).size });
  }
  return out;
}

function errorOf(e: Exit): { line: string; errno: string; file: string } {
  // the progress display also writes to stderr; the error is the last line, and the only `imep:` line
  const all = e.stderr.trim().split('\n');
  const lines = all.filter((l) => l.startsWith('imep:'));
  const line: string =
    lines.length === 1 && all.at(-1) === lines[0]
      ? (lines[0] as string)
      : `(${lines.length} error lines) ${lines.join(' / ')}`;
  const errno = /\((E[A-Z]+)\)/.exec(line)?.[1] ?? '';
  const file = /^imep: (\/[^:]+):/.exec(line)?.[1] ?? '';
  return { line, errno, file };
}

function durable(unit: string, ref: Buffer): { rows: number; prefixOk: boolean; torn: number } {
  const f = join(unit, 'rows/rows.jsonl');
  const buf = existsSync(f) ? readFileSync(f) : Buffer.alloc(0);
  const end = buf.lastIndexOf(0x0a) + 1;
  const prefix = buf.subarray(0, end);
  return { rows: lineCount(f), prefixOk: ref.subarray(0, prefix.length).equals(prefix), torn: buf.length - end };
}

async function recoverAndCheck(
  fx: Fixture,
  unit: string,
  cmd: 'resume' | 'seal',
): Promise<Pick<Scenario, 'recoverCode' | 'rowsIdentical' | 'verifyCode' | 'notes'>> {
  const r = await imep(['campaign', cmd, unit], fx.dir);
  const v = await imep(['campaign', 'verify', unit], fx.dir);
  return {
    recoverCode: r.code,
    rowsIdentical: readFileSync(join(unit, 'rows/rows.jsonl')).equals(fx.refRows),
    verifyCode: v.code,
    ...(r.code !== 0 || v.code !== 0 ? { notes: `${r.stderr.trim()} ${v.stderr.trim()}` } : {}),
  };
}

async function failureState(fx: Fixture, unit: string, exit: Exit): Promise<Partial<Scenario>> {
  const err = errorOf(exit);
  const d = durable(unit, fx.refRows);
  const st = await imep(['campaign', 'status', unit], fx.dir);
  return {
    exit,
    errorLine: err.line,
    errno: err.errno,
    namedFile: err.file,
    durableRows: d.rows,
    planned: fx.planned,
    prefixOk: d.prefixOk,
    tornBytes: d.torn,
    sealJsonAfterFailure: existsSync(join(unit, 'seal.json')),
    tempFiles: walk(unit)
      .map((f) => f.path)
      .filter((p) => isTempName(p.split('/').at(-1) ?? '')),
    statusCode: st.code,
    statusText: `${st.stdout}${st.stderr}`,
    statusLine: st.code === 0 ? st.stdout.split('\n').slice(0, 3).join(' | ') : st.stderr.trim(),
  };
}

/** `prlimit --fsize=N imep campaign run`: N = 40% of the reference rows file (every precommit file is smaller). */
export async function fsizeRows(fx: Fixture): Promise<Scenario> {
  const files = walk(fx.refUnit);
  const n = Math.floor(fx.refRows.length * 0.4);
  const precommitMax = Math.max(
    ...files
      .filter((f) => !f.path.startsWith('rows/') && !f.path.startsWith('traces/') && f.path !== 'seal.json')
      .map((f) => f.size),
  );
  if (precommitMax >= n)
    throw new Error(`fixture too small: a precommit file has ${precommitMax} bytes ≥ the limit ${n}`);
  const campaigns = join(fx.dir, 'fsize');
  const exit = await imep(['campaign', 'run', fx.file, '--campaigns-dir', campaigns, '--batch', '4'], fx.dir, {
    prlimit: [`--fsize=${n}`],
  });
  const unit = unitIn(campaigns) as string;
  return {
    name: `fsize-rows (prlimit --fsize=${n})`,
    ...(await failureState(fx, unit, exit)),
    ...(await recoverAndCheck(fx, unit, 'resume')),
  };
}

/** A run-complete unit (CLI precommit, rows and timings copied from the reference through the formal-run API). */
async function runCompleteUnit(fx: Fixture, campaigns: string): Promise<string> {
  const pre = await imep(['campaign', 'precommit', fx.file, '--campaigns-dir', campaigns], fx.dir);
  if (pre.code !== 0) throw new Error(`precommit failed: ${pre.stderr}`);
  const unit = unitIn(campaigns) as string;
  const run = await startRun(unit);
  const timings = readFileSync(join(fx.refUnit, 'rows/timings.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number });
  const rows = fx.refRows
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number });
  for (const [i, row] of rows.entries()) {
    await run.appendTiming(timings[i] as { seq: number });
    await run.appendRow(row);
  }
  await run.close();
  await completeRun(unit);
  return unit;
}

/** `prlimit --fsize=M imep campaign seal` with M below the reference seal.json's size and above unit.json's (rewritten first). */
export async function fsizeSeal(fx: Fixture): Promise<Scenario> {
  const campaigns = join(fx.dir, 'fsize-seal');
  const unit = await runCompleteUnit(fx, campaigns);
  const sealSize = statSync(join(fx.refUnit, 'seal.json')).size;
  const header = statSync(join(unit, 'unit.json')).size;
  const m = Math.max(header + 256, Math.floor(sealSize * 0.75));
  if (m >= sealSize - 64)
    throw new Error(
      `unit.json (${header} bytes) and seal.json (${sealSize} bytes) are too close for a limit between them`,
    );
  const exit = await imep(['campaign', 'seal', unit], fx.dir, { prlimit: [`--fsize=${m}`] });
  return {
    name: `fsize-seal (prlimit --fsize=${m}; seal.json is ${sealSize} bytes)`,
    ...(await failureState(fx, unit, exit)),
    ...(await recoverAndCheck(fx, unit, 'seal')),
  };
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** A 2 MiB tmpfs; after the precommit a filler leaves free about half the reference rows' size. Root only. */
export async function enospcRun(fx: Fixture): Promise<Scenario> {
  const name = 'enospc-run (tmpfs)';
  if (!isRoot()) return { name, skipped: 'not root: mounting a tmpfs needs root' };
  const mnt = join(fx.dir, 'tmpfs');
  mkdirSync(mnt);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0755', 'imep-reliability', mnt], { stdio: 'pipe' });
  } catch (e) {
    const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
    if (process.env['CI'] === 'true') throw new Error(`root but cannot mount a tmpfs: ${why}`);
    return { name, skipped: `root, but mount -t tmpfs failed (${why})` };
  }
  try {
    const campaigns = join(mnt, 'campaigns');
    const pre = await imep(['campaign', 'precommit', fx.file, '--campaigns-dir', campaigns], fx.dir);
    if (pre.code !== 0) throw new Error(`precommit on tmpfs failed: ${pre.stderr}`);
    const unit = unitIn(campaigns) as string;
    const s = statfsSync(mnt);
    const free = s.bavail * s.bsize;
    const leave = Math.floor(fx.refRows.length / 2);
    writeFileSync(join(mnt, 'filler'), Buffer.alloc(Math.max(0, free - leave)));
    const exit = await imep(['campaign', 'run', fx.file, '--campaigns-dir', campaigns, '--batch', '4'], fx.dir);
    const failed = await failureState(fx, unit, exit);
    rmSync(join(mnt, 'filler'));
    return {
      name: `${name}, ${Math.round(leave / 1024)} KiB left free`,
      ...failed,
      ...(await recoverAndCheck(fx, unit, 'resume')),
    };
  } finally {
    execFileSync('umount', [mnt], { stdio: 'pipe' });
  }
}

const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

/**
 * Why user nobody cannot run the built CLI here, or null when it can: a clone (or node itself) under a folder other
 * users cannot search — e.g. /root, mode 0700 — gives nobody "Cannot find module …/dist/cli/main.js". Probed by
 * running `node MAIN --version` as nobody, so whatever blocks it (the clone's parents, node's own folder) is caught.
 */
function nobodyCannotRun(): string | null {
  const r = spawnSync(NOBODY[0]!, [...NOBODY.slice(1), process.execPath, MAIN, '--version'], {
    encoding: 'utf8',
    cwd: tmpdir(),
  });
  if (r.status === 0) return null;
  const blocked = [ROOT, dirname(process.execPath)]
    .flatMap((p) => ancestors(p))
    .find((d) => (statSync(d).mode & 0o001) === 0);
  return `user nobody cannot run the CLI (${blocked === undefined ? (r.stderr.trim().split('\n')[0] ?? `exit ${r.status}`) : `${blocked} is not searchable by other users (mode ${(statSync(blocked).mode & 0o777).toString(8)})`}): clone IMEP under a world-searchable folder to run this check as nobody`;
}

function ancestors(p: string): string[] {
  const out: string[] = [];
  for (let d = p; ; d = dirname(d)) {
    out.unshift(d);
    if (dirname(d) === d) return out;
  }
}

/**
 * A campaigns folder made read-only (0555): nothing can be created. Root ignores permission bits, so as
 * root the CLI runs as user nobody (setpriv) in a folder owned by nobody.
 */
export async function readonlyFolder(fx: Fixture): Promise<Scenario> {
  const name = 'readonly (chmod 0555 campaigns folder)';
  const asNobody = isRoot();
  if (asNobody && !existsSync('/usr/bin/setpriv'))
    return { name, skipped: 'root without setpriv: cannot drop to an unprivileged user' };
  if (asNobody) {
    const unreadable = nobodyCannotRun();
    if (unreadable !== null) return { name, skipped: unreadable };
  }
  const base = mkdtempSync(join(tmpdir(), 'imep-rel-ro-'));
  const campaigns = join(base, 'ro');
  try {
    writeFileSync(join(base, 'p.yaml'), readFileSync(fx.file));
    mkdirSync(campaigns);
    if (asNobody) for (const p of [base, join(base, 'p.yaml'), campaigns]) chownSync(p, 65534, 65534);
    chmodSync(campaigns, 0o555);
    const wrapper = asNobody ? NOBODY : [];
    const exit = await imep(['campaign', 'run', 'p.yaml', '--campaigns-dir', campaigns], base, {
      wrapper,
      env: { HOME: base, IMEP_KEYS_DIR: join(base, 'keys') },
    });
    const err = errorOf(exit);
    return {
      name: `${name}${asNobody ? ', as user nobody' : ''}`,
      exit,
      errorLine: err.line,
      errno: err.errno,
      namedFile: err.file,
      tempFiles: readdirSync(campaigns),
      durableRows: 0,
    };
  } finally {
    chmodSync(campaigns, 0o755);
    rmSync(base, { recursive: true, force: true });
  }
}

export function formatScenario(s: Scenario): string {
  if (s.skipped) return `${s.name}: skipped — ${s.skipped}`;
  const parts = [
    `${s.name}: exit ${s.exit?.code} (${s.errno || 'no errno'}) naming ${s.namedFile ? s.namedFile.split('/').slice(-2).join('/') : '(no file)'}`,
    s.planned === undefined
      ? ''
      : `durable rows ${s.durableRows}/${s.planned} (byte prefix of the uninterrupted run: ${s.prefixOk ? 'yes' : 'NO'}, torn tail ${s.tornBytes} B)`,
    s.sealJsonAfterFailure === undefined
      ? ''
      : `seal.json after the failure: ${s.sealJsonAfterFailure ? 'PRESENT' : 'none'}; temp files left: ${s.tempFiles?.length ?? 0}`,
    s.statusCode === undefined ? '' : `status exit ${s.statusCode}`,
    s.recoverCode === undefined
      ? ''
      : `after space is back: exit ${s.recoverCode}, rows byte-identical ${s.rowsIdentical ? 'yes' : 'NO'}, verify exit ${s.verifyCode}`,
  ];
  return parts.filter((p) => p !== '').join('; ');
}
