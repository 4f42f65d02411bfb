/**
 * Reliability figure (issue 9, tamper evidence): a closed-out unit of a small blackout ladder (signed
 * precommit → seal → adjudication → closeout), then every file in turn is
 *   flipped (one byte in the middle), truncated (last byte removed), appended to (one byte),
 *   renamed (to NAME.moved) and deleted,
 * and stray files are added (at the root and in rows/). After each change `imep campaign verify` (the
 * built CLI, a fresh process) must exit 3 with one line naming the changed file; the change is undone
 * and verify must pass again. Deleting closeout.json returns the unit to a legitimate earlier state
 * (sealed, adjudication pending closeout): the end of a hash chain cannot be proven missing from inside
 * it, so that case is verified as a reader citing the closed unit does, with `--expected-root`. Prints detected/tried per kind and the signature chain verify reports.
 *
 *   npx tsx bench/reliability-tamper.ts [--n N]
 */
import {
  appendFileSync,
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { imep, unitIn } from '../test/reliability/support/cli.js';
import { liteCheckpointSha } from '../test/campaign/cli-support.js';
import { blackoutYaml } from '../test/campaign/helpers.js';

const { values } = parseArgs({ options: { n: { type: 'string' } } });
const n = Number(values.n ?? '6');
const t0 = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'imep-tamper-'));

function files(at: string): string[] {
  return readdirSync(at, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(at, e.name)) : [join(at, e.name)],
  );
}

/** Makes a sealed (read-only) file and its folder writable for the duration of `fn`, then restores the modes. */
function writable<T>(file: string, fn: () => T): T {
  const folder = join(file, '..');
  const fileMode = statSync(file).mode & 0o777;
  const dirMode = statSync(folder).mode & 0o777;
  chmodSync(folder, 0o755);
  chmodSync(file, 0o644);
  try {
    return fn();
  } finally {
    chmodSync(file, fileMode);
    chmodSync(folder, dirMode);
  }
}

interface Case {
  readonly kind: string;
  readonly rel: string;
  /** Applies the change; returns the undo. */
  readonly apply: () => () => void;
}

let bad = 0;
try {
  writeFileSync(join(dir, 'p.yaml'), blackoutYaml({ n, sha: liteCheckpointSha() }));
  const run = await imep(
    ['campaign', 'run', 'p.yaml', '--through', 'closeout', '--same-operator-reason', 'single-operator quick start'],
    dir,
  );
  if (run.code !== 0) throw new Error(`campaign run failed: ${run.stderr}`);
  const unit = unitIn(join(dir, 'campaigns'));
  if (unit === null) throw new Error('no unit written');
  const intact = await imep(['campaign', 'verify', unit], dir);
  if (intact.code !== 0) throw new Error(`the fresh unit does not verify: ${intact.stderr}`);
  const closeoutRoot = /closeout root ([0-9a-f]{64})/.exec(intact.stdout)?.[1];
  if (closeoutRoot === undefined) throw new Error(`verify printed no closeout root: ${intact.stdout}`);
  const all = files(unit).sort();
  console.log(
    `closed-out unit of a blackout ladder n=${n}: ${all.length} files (${all.map((f) => relative(unit, f)).join(', ')})`,
  );
  console.log(
    intact.stdout
      .trim()
      .split('\n')
      .find((l) => l.startsWith('signatures:')) ?? 'signatures: (not printed)',
  );

  const cases: Case[] = [];
  for (const f of all) {
    const rel = relative(unit, f);
    cases.push({
      kind: 'flip',
      rel,
      apply: () => {
        const before = readFileSync(f);
        writable(f, () => {
          const b = Buffer.from(before);
          const i = b.length >> 1;
          b[i] = (b[i] ?? 0) ^ 0x01;
          writeFileSync(f, b);
        });
        return () => writable(f, () => writeFileSync(f, before));
      },
    });
    cases.push({
      kind: 'truncate',
      rel,
      apply: () => {
        const before = readFileSync(f);
        writable(f, () => truncateSync(f, Math.max(0, before.length - 1)));
        return () => writable(f, () => writeFileSync(f, before));
      },
    });
    cases.push({
      kind: 'append',
      rel,
      apply: () => {
        const before = readFileSync(f);
        writable(f, () => appendFileSync(f, '\n'));
        return () => writable(f, () => writeFileSync(f, before));
      },
    });
    cases.push({
      kind: 'rename',
      rel,
      apply: () => {
        const folder = join(f, '..');
        const dirMode = statSync(folder).mode & 0o777;
        const move = (from: string, to: string): void => {
          chmodSync(folder, 0o755);
          renameSync(from, to);
          chmodSync(folder, dirMode);
        };
        move(f, `${f}.moved`);
        return () => move(`${f}.moved`, f);
      },
    });
    cases.push({
      kind: 'delete',
      rel,
      apply: () => {
        const before = readFileSync(f);
        const mode = statSync(f).mode & 0o777;
        const folder = join(f, '..');
        const folderMode = statSync(folder).mode & 0o777;
        chmodSync(folder, 0o755);
        unlinkSync(f);
        chmodSync(folder, folderMode);
        return () => {
          const folder = join(f, '..');
          const dirMode = statSync(folder).mode & 0o777;
          chmodSync(folder, 0o755);
          writeFileSync(f, before);
          chmodSync(f, mode);
          chmodSync(folder, dirMode);
        };
      },
    });
  }
  for (const rel of ['stray.txt', 'rows/stray.jsonl']) {
    const f = join(unit, rel);
    cases.push({
      kind: 'stray',
      rel,
      apply: () => {
        const folder = join(f, '..');
        const dirMode = statSync(folder).mode & 0o777;
        chmodSync(folder, 0o755);
        writeFileSync(f, 'not part of the unit\n');
        chmodSync(folder, dirMode);
        return () => {
          chmodSync(folder, 0o755);
          rmSync(f);
          chmodSync(folder, dirMode);
        };
      },
    });
  }

  const tally = new Map<string, { tried: number; detected: number }>();
  const misses: string[] = [];
  for (const c of cases) {
    const undo = c.apply();
    let detected = false;
    try {
      // the last link of a hash chain cannot be proven missing from inside the unit: a reader who cites the
      // closed unit passes its closeout root (verify --expected-root), which is how a deleted closeout.json is caught
      const cite = c.kind === 'delete' && c.rel === 'closeout.json' ? ['--expected-root', closeoutRoot] : [];
      const r = await imep(['campaign', 'verify', unit, ...cite], dir);
      const lines = r.stderr.trim().split('\n');
      detected = r.code === 3 && lines.length === 1 && (lines[0] ?? '').includes(c.rel);
      if (!detected) misses.push(`${c.kind} ${c.rel}: exit ${r.code}, ${r.stderr.trim() || r.stdout.trim()}`);
    } finally {
      undo();
    }
    const t = tally.get(c.kind) ?? { tried: 0, detected: 0 };
    tally.set(c.kind, { tried: t.tried + 1, detected: t.detected + (detected ? 1 : 0) });
  }
  const after = await imep(['campaign', 'verify', unit], dir);
  let tried = 0;
  let detected = 0;
  for (const [kind, t] of tally) {
    tried += t.tried;
    detected += t.detected;
    console.log(`${kind.padEnd(9)} detected ${t.detected}/${t.tried} (verify exit 3 naming the file, one line)`);
  }
  console.log(
    `total: detected ${detected}/${tried}; unit verifies again after every undo: ${after.code === 0 ? 'yes' : 'NO'}`,
  );
  for (const m of misses) console.log(`MISSED ${m}`);
  if (detected !== tried || after.code !== 0) bad += 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`wall ${((performance.now() - t0) / 1000).toFixed(1)} s; result: ${bad === 0 ? 'PASS' : 'FAIL'}`);
process.exitCode = bad === 0 ? 0 : 1;
