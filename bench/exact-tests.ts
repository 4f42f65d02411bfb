/**
 * Benchmark: the exact McNemar test and Clopper–Pearson bounds at n = b + c = 10^6, where the issue
 * requires each call to stay under 1 ms. Each case reports the median per-call time (µs) over many
 * individually timed calls after a JIT warm-up, and its ratio to a baseline measured in the same run:
 * one loop of 1,000 Math.log calls (so the figure is comparable across machines). The near-mean
 * cases are the slow ones (the positive-series branch of the incomplete beta).
 *
 *   npx tsx bench/exact-tests.ts [--calls 200] [--strict]
 *
 * --strict exits 1 when any median exceeds 1 ms. No assertion on time lives in the tests.
 */
import { clopperPearson } from '../src/stats/clopper-pearson.js';
import { mcnemarExact } from '../src/stats/mcnemar.js';

const args = process.argv.slice(2);
const callsArg = args.indexOf('--calls');
const CALLS = callsArg >= 0 ? Number(args[callsArg + 1]) : 200;
const strict = args.includes('--strict');
const LIMIT_US = 1000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

let sink = 0; // accumulates every result so that no call can be optimized away
function timeCalls(f: () => number, calls: number): number {
  for (let i = 0; i < 20; i++) sink += f(); // warm-up
  const us: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    sink += f();
    us.push((performance.now() - t0) * 1000);
  }
  return median(us);
}

// Baseline: 1,000 Math.log calls on varying arguments.
const baselineUs = timeCalls(
  () => {
    let s = 0;
    for (let i = 1; i <= 1000; i++) s += Math.log(i + sink * 1e-300);
    return s;
  },
  Math.max(CALLS, 200),
);

const N = 1_000_000;
const cases: [string, () => number][] = [
  ['mcnemar two-sided b=499000 c=501000 (2σ)', () => mcnemarExact(499_000, 501_000)],
  ['mcnemar two-sided b=499900 c=500100 (0.2σ)', () => mcnemarExact(499_900, 500_100)],
  ['mcnemar two-sided b=497000 c=503000 (6σ)', () => mcnemarExact(497_000, 503_000)],
  ['mcnemar one-sided b=500400 c=499600', () => mcnemarExact(500_400, 499_600, 'greater')],
  ['mcnemar two-sided b=10 c=999990', () => mcnemarExact(10, 999_990)],
  ['clopper-pearson 95% x=500000 n=1e6', () => clopperPearson(500_000, N, 0.95)[1]],
  ['clopper-pearson 95% x=100000 n=1e6', () => clopperPearson(100_000, N, 0.95)[1]],
  ['clopper-pearson 95% x=1000 n=1e6', () => clopperPearson(1000, N, 0.95)[1]],
  ['clopper-pearson 95% x=10 n=1e6', () => clopperPearson(10, N, 0.95)[1]],
  ['clopper-pearson 95% x=999990 n=1e6', () => clopperPearson(999_990, N, 0.95)[0]],
];

console.log(`baseline: 1,000 × Math.log = ${baselineUs.toFixed(2)} µs (median of ${Math.max(CALLS, 200)})`);
console.log(`median per call over ${CALLS} calls; limit ${LIMIT_US} µs`);
let worst = 0;
for (const [name, f] of cases) {
  const us = timeCalls(f, CALLS);
  worst = Math.max(worst, us);
  const verdict = us < LIMIT_US ? 'ok' : 'OVER 1 ms';
  console.log(
    `${name.padEnd(44)} ${us.toFixed(1).padStart(8)} µs  ${(us / baselineUs).toFixed(1).padStart(7)} × baseline  ${verdict}`,
  );
}
console.log(`slowest: ${worst.toFixed(1)} µs (${(worst / LIMIT_US).toFixed(3)} of the 1 ms limit)`);
if (strict && worst >= LIMIT_US) process.exit(1);
