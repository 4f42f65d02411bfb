/**
 * Benchmark: plans of any size (issue 18 §4). A 1.2 M-row plan must be precommitted under 5 s and 500 MB RSS,
 * or refused in under 1 s with its estimate. The plan's representation (plan.json, hashed whole) is unchanged,
 * so above PLAN_ROWS_MAX it is refused; this bench measures, in one run:
 *   1. the refusal of a 1.2 M-row protocol by `imep campaign precommit` (a child process: wall time and
 *      peak RSS), against the baseline of the same CLI refusing a malformed file (process start + load);
 *   2. the per-row constants plan-size.ts estimates with (plan.json bytes, build + serialise + hash time,
 *      resident memory per row), measured on a 28,000-row plan built in a child process, beside the
 *      constants used;
 * and prints figures and ratios. Needs `npm run build` (dist/cli/main.js). No assertion on time.
 *
 *   npx tsx bench/plan-size.ts
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PLAN_BYTES_PER_ROW,
  PLAN_ROWS_MAX,
  PLAN_RSS_BYTES_PER_ROW,
  PLAN_SECONDS_PER_ROW,
} from '../src/protocol/plan-size.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-plan-size-'));
const base = readFileSync('protocols/shellgame-blackout.yaml', 'utf8');
/** The shipped blackout ladder with n units (14 episodes per unit: 7 condition slots × 2 attempts). */
function protocolWith(n: number): string {
  const file = join(dir, `blackout-${n}.yaml`);
  writeFileSync(
    file,
    base.replace(/^n: .*$/m, `n: ${n}`).replace('{ start: 610000, end: 610399 }', `{ start: 1, end: ${n} }`),
  );
  return file;
}

function timed(args: string[]): { seconds: number; rssMB: number; code: number | null; stderr: string } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { encoding: 'utf8' });
  const seconds = (performance.now() - t0) / 1000;
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('Command exited'));
  return { seconds, rssMB: Number(lines.at(-1)) / 1024, code: r.status, stderr: lines.slice(0, -1).join('\n') };
}

const bad = join(dir, 'bad.yaml');
writeFileSync(bad, 'version: 1\nid: [\n');
const baseline = timed(['dist/cli/main.js', 'campaign', 'precommit', bad, '--campaigns-dir', join(dir, 'c')]);
const big = timed([
  'dist/cli/main.js',
  'campaign',
  'precommit',
  protocolWith(85_715),
  '--campaigns-dir',
  join(dir, 'c'),
]);
console.log(
  `baseline (CLI refusing a malformed file): ${baseline.seconds.toFixed(2)} s, ${baseline.rssMB.toFixed(0)} MB RSS, exit ${baseline.code}`,
);
console.log(
  `1,200,010-row plan (n = 85,715): exit ${big.code} in ${big.seconds.toFixed(2)} s (${(big.seconds / baseline.seconds).toFixed(2)}× baseline), ${big.rssMB.toFixed(0)} MB RSS (${(big.rssMB / baseline.rssMB).toFixed(2)}× baseline)`,
);
console.log(`  ${big.stderr}`);
console.log(
  `  target: refused in < 1 s beyond the process start (here ${(big.seconds - baseline.seconds).toFixed(2)} s), < 500 MB RSS: ${big.code === 2 && big.seconds - baseline.seconds < 1 && big.rssMB < 500 ? 'met' : 'NOT met'}`,
);

// per-row constants, in a child so its RSS is the plan's
const probe = join(dir, 'probe.mts');
writeFileSync(
  probe,
  `
import { registerBuiltinKinds } from '${process.cwd()}/src/kinds/index.js';
import { loadProtocol } from '${process.cwd()}/src/protocol/load.js';
registerBuiltinKinds();
import { buildPlan } from '${process.cwd()}/src/protocol/plan.js';
import { canonicalBytes } from '${process.cwd()}/src/core/canonical-json.js';
registerBuiltinKinds();
const { protocol } = await loadProtocol(process.argv[2]);
const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
const plan = buildPlan(protocol);
const bytes = canonicalBytes(plan);
const s = (performance.now() - t0) / 1000;
const rows = plan.episodes.length;
console.log(JSON.stringify({ rows, bytesPerRow: bytes.length / rows, secondsPerRow: s / rows, rssPerRow: (process.memoryUsage().rss - rss0) / rows }));
`,
);
const r = spawnSync(process.execPath, ['--import', 'tsx', probe, protocolWith(2000)], { encoding: 'utf8' });
if (r.status !== 0) throw new Error(`the per-row probe failed: ${r.stderr}`);
const m = JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as {
  rows: number;
  bytesPerRow: number;
  secondsPerRow: number;
  rssPerRow: number;
};
console.log(`per-row constants on a ${m.rows}-row plan (measured / used by plan-size.ts):`);
console.log(
  `  plan.json bytes ${m.bytesPerRow.toFixed(0)} / ${PLAN_BYTES_PER_ROW} (${(m.bytesPerRow / PLAN_BYTES_PER_ROW).toFixed(2)}×)`,
);
console.log(
  `  build + serialise + hash ${(m.secondsPerRow * 1e6).toFixed(0)} µs / ${(PLAN_SECONDS_PER_ROW * 1e6).toFixed(0)} µs (${(m.secondsPerRow / PLAN_SECONDS_PER_ROW).toFixed(2)}×)`,
);
console.log(
  `  resident memory ${m.rssPerRow.toFixed(0)} B / ${PLAN_RSS_BYTES_PER_ROW} B (${(m.rssPerRow / PLAN_RSS_BYTES_PER_ROW).toFixed(2)}×)`,
);
console.log(
  `  at the limit (${PLAN_ROWS_MAX} rows) the measured constants give ${((m.rssPerRow * PLAN_ROWS_MAX) / 1e9).toFixed(2)} GB and ${(m.secondsPerRow * PLAN_ROWS_MAX).toFixed(0)} s`,
);
rmSync(dir, { recursive: true, force: true });
