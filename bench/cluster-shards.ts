/**
 * Sharding pays on one machine too: the blackout ladder (protocols/shellgame-blackout.yaml reduced to
 * --n seeds, default 200: 7 condition runs × 2 attempts × n episodes) with the lite checkpoint. Both arms
 * start from a precommitted unit (`imep campaign precommit FILE`, timed and printed apart) and end with a
 * sealed unit, each command a fresh child process of the built CLI, as a user or SLURM starts them:
 *
 *   single:  `imep campaign run FILE`                          one process: run every episode, seal
 *   sharded: `imep cluster shard-run UNIT --shard I/2`, I = 0, 1 in parallel (what each SLURM array task
 *            runs; no SLURM here), then `imep cluster merge UNIT` (a third process: merge + seal)
 *
 * Both arms end with the same product, a sealed unit whose rows are byte-identical (checked); timed:
 *
 *   single   one process: start-up (node, modules), open and hash the protocol, build the plan, load the
 *            checkpoint (ORT sessions), run 7n·2 episodes, wait for the last row to be durable (every row
 *            fdatasync'd with its side lines before the next), complete the run, seal (SHA-256 manifest,
 *            Merkle root, signature), then print the unit's status — which verifies the sealed unit again
 *            (a few tens of ms that the sharded arm does not spend)
 *   sharded  two such processes side by side, each running the units of its shard into <unit>.shards/
 *            (same start-up, same durability), then a third: start-up, read and check every shard line
 *            (canonical form, planned episode, coverage), write the merged rows, timings and traces into
 *            the formal run (fdatasync per chunk), complete the run, seal
 *
 * Wall time on a shared machine swings with other load, so the CPU time of the imep processes (user +
 * system, all threads, from the kernel's accounting of reaped children) is printed too: it does not
 * depend on what else runs, and sharded CPU ÷ single CPU is the part of the ratio the code controls.
 *
 * The arms alternate for --reps rounds (default 3; each round a fresh unit per arm; round r starts with
 * the single arm when r is even) and the medians are compared, since a shared 2-core machine's load swings
 * more than the effect. Prints each round, the median wall times, sharded / single (target ≤ 0.65 on a
 * 2-core machine), the median of the per-round ratios, the same ratio with the precommit counted in both
 * arms, the median CPU seconds of each arm, and checks that the merged rows are byte-identical to the
 * single-process rows.
 *
 * And what bounds the ratio here: how many cores the single process keeps busy (its CPU ÷ its wall time; V8
 * compiles and collects garbage on its own threads, so one `imep campaign run` is more than one core's work
 * per second), its CPU split into main thread and other threads (/proc/PID/task, sampled), and the lower
 * bound of the sharded arm on this machine: the shards' CPU seconds spread over every core, plus the merge's
 * wall time — no scheduling does better, so that bound ÷ single is the best ratio the present CPU costs allow.
 *
 *   npx tsx bench/cluster-shards.ts [--n N] [--batch B] [--reps R] [--cli dist/cli/main.js] [--keep]
 *
 * --cli runs another build of the CLI (e.g. one built apart with `tsc --outDir`, to compare code versions
 * on the same campaign; its folder must sit directly in the package root so checkpoints resolve).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PACKAGE_ROOT } from '../src/campaign/campaign-setup.js';
import { defaultLauncher } from '../src/cluster/launcher.js';
import { registerBuiltinKinds } from '../src/kinds/index.js';

registerBuiltinKinds();

const { values } = parseArgs({
  options: {
    n: { type: 'string' },
    batch: { type: 'string' },
    reps: { type: 'string' },
    keep: { type: 'boolean' },
    cli: { type: 'string' },
  },
});
const n = Number(values.n ?? '200');
const batch = values.batch ?? '32';
const SHARDS = 2;
const reps = Number(values.reps ?? '3');

const sha = createHash('sha256')
  .update(readFileSync(join(PACKAGE_ROOT, 'checkpoints/lite-memvla/model.json')))
  .digest('hex');
const text = readFileSync(join(PACKAGE_ROOT, 'protocols/shellgame-blackout.yaml'), 'utf8')
  .replace(/sha256: \S+/, `sha256: ${sha}`)
  .replace(/- \{ start: 610000, end: 610399 \}/, `- { start: 610000, end: ${610000 + n - 1} }`)
  .replace(/^n: 400$/m, `n: ${n}`);
const dir = mkdtempSync(join(tmpdir(), 'imep-bench-shards-'));
const file = join(dir, 'blackout.yaml');
writeFileSync(file, text);
const launcher = values.cli === undefined ? defaultLauncher() : [process.execPath, resolve(values.cli)];

const CLK_TCK = 100; // Linux USER_HZ (getconf CLK_TCK)

/** CPU seconds (user + system) of this process's reaped children so far; null where /proc is missing. */
function childCpu(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / CLK_TCK; // fields 16 cutime and 17 cstime
  } catch {
    return null;
  }
}

const cpuSince = (at: number | null): number | null => {
  const now = childCpu();
  return at === null || now === null ? null : now - at;
};

/**
 * CPU seconds (user + system) of each thread of process `pid`, sampled every 50 ms until it exits: the last
 * sample of each thread (a thread's final few ms, and threads living < 50 ms, are missed). Main thread: tid = pid.
 * Returns a stop function giving { main, others } seconds; null where /proc is missing.
 */
function sampleThreads(pid: number): () => { main: number; others: number } | null {
  const last = new Map<number, number>();
  let ok = true;
  const sample = (): void => {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        last.set(Number(tid), (Number(f[11]) + Number(f[12])) / CLK_TCK); // fields 14 utime and 15 stime
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ESRCH') ok = false;
    }
  };
  sample();
  const timer = setInterval(sample, 50);
  return () => {
    clearInterval(timer);
    if (!ok || last.size === 0) return null;
    let others = 0;
    for (const [tid, cpu] of last) if (tid !== pid) others += cpu;
    return { main: last.get(pid) ?? 0, others };
  };
}

function imep(args: readonly string[], onSpawn?: (pid: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(launcher[0]!, [...launcher.slice(1), ...args], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (onSpawn !== undefined && child.pid !== undefined) onSpawn(child.pid);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`imep ${args.join(' ')} exited ${code}: ${err.trim()}`)),
    );
  });
}

function unitIn(campaigns: string): string {
  const name = readdirSync(campaigns).find((x) => x.startsWith('shellgame-blackout-') && !x.endsWith('.shards'));
  if (name === undefined) throw new Error(`no unit in ${campaigns}`);
  return join(campaigns, name);
}

async function precommit(campaigns: string): Promise<{ unit: string; ms: number }> {
  const t = performance.now();
  await imep(['campaign', 'precommit', file, '--campaigns-dir', campaigns]);
  return { unit: unitIn(join(dir, campaigns)), ms: performance.now() - t };
}

interface Arm {
  readonly precommitMs: number;
  readonly ms: number;
  /** CPU seconds of the arm's imep processes (precommit excluded); null without /proc. */
  readonly cpu: number | null;
  readonly rows: Buffer;
  readonly detail: string;
  /** Single arm: CPU seconds of the process's main thread and of its other threads (sampled); else null. */
  readonly threads: { main: number; others: number } | null;
  /** Sharded arm: CPU seconds of the two shard processes, and the merge's wall ms; else null. */
  readonly shards: { cpu: number; mergeMs: number } | null;
}

async function singleArm(r: number): Promise<Arm> {
  const pre = await precommit(`single-${r}`);
  const c = childCpu();
  const t = performance.now();
  let stop: (() => { main: number; others: number } | null) | undefined;
  await imep(
    ['campaign', 'run', file, '--campaigns-dir', `single-${r}`, '--batch', batch],
    (pid) => (stop = sampleThreads(pid)),
  );
  const ms = performance.now() - t;
  const cpu = cpuSince(c);
  const threads = stop?.() ?? null;
  const threadDetail =
    threads === null ? '' : `: main thread ${threads.main.toFixed(2)} + other threads ${threads.others.toFixed(2)}`;
  return {
    precommitMs: pre.ms,
    ms,
    cpu,
    rows: readFileSync(join(pre.unit, 'rows/rows.jsonl')),
    detail: cpu === null ? '' : `CPU ${cpu.toFixed(2)} s${threadDetail}`,
    threads,
    shards: null,
  };
}

async function shardedArm(r: number): Promise<Arm> {
  const pre = await precommit(`sharded-${r}`);
  const c = childCpu();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: SHARDS }, (_, i) =>
      imep(['cluster', 'shard-run', pre.unit, '--shard', `${i}/${SHARDS}`, '--batch', batch]),
    ),
  );
  const t1 = performance.now();
  const c1 = childCpu();
  await imep(['cluster', 'merge', pre.unit]);
  const ms = performance.now() - t;
  const cpu = cpuSince(c);
  const shardCpu = c1 === null || c === null ? null : c1 - c;
  const cpuDetail =
    cpu === null || shardCpu === null
      ? ''
      : `; CPU ${cpu.toFixed(2)} s = shards ${shardCpu.toFixed(2)} + merge ${(cpu - shardCpu).toFixed(2)}`;
  const mergeMs = performance.now() - t1;
  return {
    precommitMs: pre.ms,
    ms,
    cpu,
    rows: readFileSync(join(pre.unit, 'rows/rows.jsonl')),
    detail: `shards ${s(t1 - t)} + merge and seal ${s(mergeMs)}${cpuDetail}`,
    threads: null,
    shards: shardCpu === null ? null : { cpu: shardCpu, mergeMs },
  };
}

const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const median = (xs: readonly number[]): number => {
  const v = [...xs].sort((a, b) => a - b);
  const m = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
};

console.log(
  `blackout ladder, n = ${n}: ${7 * 2 * n} episodes, batch ${batch}, CLI ${launcher.slice(1).join(' ')}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()[0]?.toFixed(2)} at start, ${reps} rounds`,
);
const singles: Arm[] = [];
const shardeds: Arm[] = [];
let identical = true;
for (let r = 0; r < reps; r++) {
  const order = r % 2 === 0 ? (['single', 'sharded'] as const) : (['sharded', 'single'] as const);
  for (const arm of order)
    (arm === 'single' ? singles : shardeds).push(arm === 'single' ? await singleArm(r) : await shardedArm(r));
  const a = singles[r]!;
  const b = shardeds[r]!;
  identical &&= a.rows.equals(b.rows);
  console.log(
    `round ${r + 1}: single ${s(a.ms)}${a.detail === '' ? '' : ` (${a.detail})`}; sharded ${s(b.ms)} (${b.detail}); ratio ${(b.ms / a.ms).toFixed(3)}; load ${loadavg()[0]?.toFixed(2)}`,
  );
}
const single = median(singles.map((a) => a.ms));
const sharded = median(shardeds.map((a) => a.ms));
const pre = median([...singles, ...shardeds].map((a) => a.precommitMs));
console.log(`median precommit (each arm, not in the ratio): ${s(pre)}`);
console.log(`median single process (run + seal):                     ${s(single)}`);
console.log(`median ${SHARDS} shards in parallel + merge and seal:        ${s(sharded)}`);
const cpus1 = singles.map((a) => a.cpu);
const cpus2 = shardeds.map((a) => a.cpu);
if (!cpus1.includes(null) && !cpus2.includes(null)) {
  const c1 = median(cpus1 as number[]);
  const c2 = median(cpus2 as number[]);
  console.log(
    `median CPU (user + system, all imep processes of the arm): single ${c1.toFixed(2)} s; sharded ${c2.toFixed(2)} s (${(c2 / c1).toFixed(3)} × single)`,
  );
  console.log(`cores the single process keeps busy (its CPU ÷ its wall time): ${(c1 / (single / 1000)).toFixed(2)}`);
}
const threads = singles.map((a) => a.threads);
if (!threads.includes(null)) {
  const ts = threads as { main: number; others: number }[];
  console.log(
    `single process by thread (sampled every 50 ms, median): main thread ${median(ts.map((x) => x.main)).toFixed(2)} s, other threads ${median(ts.map((x) => x.others)).toFixed(2)} s ` +
      '(V8 platform workers: concurrent JIT compilation and GC; libuv pool: file I/O incl. fdatasync)',
  );
}
// The floor of the sharded arm on this machine: the shards cannot finish before their CPU seconds are spread over
// every core, and the merge starts after them. What the code could still win is the gap between this and the ratio.
const shardStats = shardeds.map((a) => a.shards);
if (!shardStats.includes(null)) {
  const st = shardStats as { cpu: number; mergeMs: number }[];
  const floor = median(st.map((x) => x.cpu / cpus().length + x.mergeMs / 1000));
  console.log(
    `lower bound of the sharded arm on ${cpus().length} cores (shards' CPU ÷ cores + merge wall, median): ${floor.toFixed(2)} s = ${(floor / (single / 1000)).toFixed(3)} × single`,
  );
}
console.log(`merged rows byte-identical to the single-process rows: ${identical ? 'yes' : 'NO'}`);
const perRound = median(shardeds.map((b, i) => b.ms / singles[i]!.ms));
console.log(
  `sharded / single = ${(sharded / single).toFixed(3)} (target ≤ 0.65); median of the per-round ratios ${perRound.toFixed(3)}; with the precommit in both arms ${((sharded + pre) / (single + pre)).toFixed(3)}`,
);
if (!values.keep) rmSync(dir, { recursive: true, force: true });
else console.log(`kept ${dir}`);
if (!identical) process.exitCode = 1;
