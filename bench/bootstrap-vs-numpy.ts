/**
 * Benchmark: the 10,000-replicate task-stratified paired bootstrap of θ̄ on 2 tasks × 200 pairs × 3
 * conditions (A, S, T), IMEP's TypeScript implementation against a vectorized NumPy implementation of the
 * same resampling (bench/bootstrap_numpy.py, run with /usr/bin/python3 on the same data). Each side
 * reports its best of several timed runs (after warm-up); the ratio numpy_time / ts_time must be ≥ 1.
 *
 *   npx tsx bench/bootstrap-vs-numpy.ts [--runs 15] [--strict]
 *
 * --strict exits 1 when the ratio is below 1. Without NumPy the TS time alone is printed (exit 0).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Prng } from '../src/core/prng.js';
import { pairedBootstrap } from '../src/stats/bootstrap.js';
import { pairedDesign } from '../src/stats/paired-outcomes.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./bootstrap_numpy.py', import.meta.url));
const TASKS = 2,
  PAIRS = 200,
  REPLICATES = 10_000,
  DATA_SEED = 20260824;

const args = process.argv.slice(2);
const runsArg = args.indexOf('--runs');
const RUNS = runsArg >= 0 ? Number(args[runsArg + 1]) : 15;
const strict = args.includes('--strict');

// Data: per-unit outcomes with realistic rates (reference 0.8, sham 0.75, target 0.7).
const data = new Prng(DATA_SEED);
const A: number[] = [],
  S: number[] = [],
  T: number[] = [],
  task: number[] = [];
for (let t = 0; t < TASKS; t++) {
  for (let i = 0; i < PAIRS; i++) {
    A.push(data.nextFloat() < 0.8 ? 1 : 0);
    S.push(data.nextFloat() < 0.75 ? 1 : 0);
    T.push(data.nextFloat() < 0.7 ? 1 : 0);
    task.push(t);
  }
}
const design = pairedDesign({ outcomes: { A, S, T }, tasks: task.map((t) => `task${t}`) });
const estimand = { kind: 'thetaBar', reference: 'A', target: 'T', sham: 'S' } as const;

function runTs(seed: number): ReturnType<typeof pairedBootstrap> {
  return pairedBootstrap(design, estimand, { level: 'task-stratified', seed, replicates: REPLICATES });
}
for (let w = 0; w < 10; w++) runTs(1000 + w); // warm-up (JIT)
let tsBest = Infinity;
let last = runTs(0);
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  last = runTs(r);
  tsBest = Math.min(tsBest, performance.now() - t0);
}
const ci = last.intervals[0];
const fmt = (x: number): string => (100 * x).toFixed(2);
console.log(
  `design: ${TASKS} tasks x ${PAIRS} pairs x 3 conditions (A, S, T); ${REPLICATES} replicates, task-stratified θ̄`,
);
console.log(`θ̄ = ${fmt(last.estimate)} pp`);
console.log(
  `TS     best of ${RUNS}: ${tsBest.toFixed(2)} ms   (mean ${fmt(last.mean)} pp, SE ${fmt(last.se)} pp, 95% [${fmt(ci?.lower ?? NaN)}, ${fmt(ci?.upper ?? NaN)}] pp; prng ${last.record.prng.name} v${last.record.prng.version})`,
);

interface NumpyReport {
  error?: string;
  numpy_version?: string;
  best_ms?: number;
  mean?: number;
  se?: number;
  interval95?: [number, number];
}
let numpy: NumpyReport | undefined;
let why = '';
if (!existsSync(PYTHON)) why = `${PYTHON} not found`;
else {
  const out = spawnSync(PYTHON, [SCRIPT], {
    input: JSON.stringify({ A, S, T, task, replicates: REPLICATES, seed: 0, runs: RUNS }),
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (out.status !== 0) why = `python exited ${String(out.status)}: ${out.stderr.trim().split('\n').pop() ?? ''}`;
  else {
    numpy = JSON.parse(out.stdout.trim().split('\n').pop() ?? '{}') as NumpyReport;
    if (numpy.error === 'numpy-missing')
      why = 'NumPy is not installed for /usr/bin/python3 (apt-get install -y python3-numpy)';
  }
}
if (why !== '' || numpy?.best_ms === undefined) {
  console.log(`NumPy  not run: ${why || 'no timing reported'}. TS time only.`);
  process.exit(0);
}
const [lo, hi] = numpy.interval95 ?? [NaN, NaN];
console.log(
  `NumPy  best of ${RUNS}: ${numpy.best_ms.toFixed(2)} ms   (mean ${fmt(numpy.mean ?? NaN)} pp, SE ${fmt(numpy.se ?? NaN)} pp, 95% [${fmt(lo)}, ${fmt(hi)}] pp; numpy ${numpy.numpy_version})`,
);
const ratio = numpy.best_ms / tsBest;
console.log(`ratio numpy_time / ts_time = ${ratio.toFixed(2)}  (${ratio >= 1 ? 'PASS' : 'FAIL'}: requirement ≥ 1)`);
if (strict && ratio < 1) process.exitCode = 1;
