/**
 * Benchmark: bounded refusals (issue 24). Each hostile protocol of test/support/hostile-protocols.ts is refused by
 * `imep protocol check` in a child process (wall time, CPU time user + sys, peak RSS); the baseline, measured in the same run, is the
 * same CLI checking the valid shipped protocol those files are built from. Target: every refusal of a file under
 * 1 MB within 2 s and bounded memory, judged on CPU time (wall time on a shared, loaded machine mostly measures the
 * queue). Before the fix (same machine, loaded): 4,000 bands ran out of memory after
 * 55 s (exit 134), 50,000 unknown keys took 26–40 s, 20,000 duplicated waves 8–45 s. Needs `npm run build`.
 * No assertion on time.
 *
 *   npx tsx bench/protocol-refusals.ts
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ATTACKS, VALID } from '../test/support/hostile-protocols.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-refusals-bench-'));

function check(
  name: string,
  text: string,
): { seconds: number; cpu: number; rssMB: number; code: number | null; line: string } {
  const file = join(dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.yaml`);
  writeFileSync(file, text);
  const t0 = performance.now();
  const r = spawnSync(
    '/usr/bin/time',
    ['-f', '%M %U %S', process.execPath, 'dist/cli/main.js', 'protocol', 'check', file],
    { encoding: 'utf8' },
  );
  const seconds = (performance.now() - t0) / 1000;
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('Command exited'));
  const [rssKB, user, sys] = (lines.at(-1) ?? '').split(' ').map(Number);
  return {
    seconds,
    cpu: (user ?? NaN) + (sys ?? NaN),
    rssMB: (rssKB ?? NaN) / 1024,
    code: r.status,
    line: (lines[0] ?? '').slice(0, 140),
  };
}

try {
  const runs = [check('valid', VALID), check('valid', VALID), check('valid', VALID)];
  const base = runs.sort((a, b) => a.cpu - b.cpu)[1]!;
  console.log(
    `baseline (imep protocol check on the valid blackout protocol, median of 3 by CPU): ${base.seconds.toFixed(2)} s wall, ${base.cpu.toFixed(2)} s CPU, ${base.rssMB.toFixed(0)} MB RSS, exit ${base.code}`,
  );
  console.log(
    '| hostile protocol | KB | exit | wall s | CPU s | CPU × baseline | CPU s beyond baseline | peak RSS MB | RSS × baseline |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  let met = true;
  for (const a of ATTACKS) {
    const text = a.text();
    const r = check(a.name, text);
    met &&= r.code === 2 && r.cpu - base.cpu < 2 && r.rssMB < 4 * base.rssMB;
    console.log(
      `| ${a.name} | ${(Buffer.byteLength(text) / 1024).toFixed(0)} | ${r.code} | ${r.seconds.toFixed(2)} | ${r.cpu.toFixed(2)} | ${(r.cpu / base.cpu).toFixed(2)} | ${(r.cpu - base.cpu).toFixed(2)} | ${r.rssMB.toFixed(0)} | ${(r.rssMB / base.rssMB).toFixed(2)} |`,
    );
  }
  console.log(
    `target (exit 2, < 2 s of CPU beyond the baseline, < 4× its RSS, for every file): ${met ? 'met' : 'NOT met'}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
