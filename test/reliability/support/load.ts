/**
 * Load: K concurrent lite simulator servers (`imep sim serve lite` processes, bridge-pool.ts) driven by one
 * orchestrator (this process) for a bounded time: blackout-ladder campaigns (precommit → run → seal) one
 * after the other, each in a fresh campaigns folder removed afterwards, slot s on server s mod K, one policy
 * runtime (the lite checkpoint) loaded once. RSS of the orchestrator and of every server is sampled every
 * `sampleMs`. Growth is measured after a warm-up: the largest RSS after warm-up minus the median RSS of the
 * first post-warm-up window (and a least-squares slope in MB/min).
 */
import { readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { checkpointPolicyProvider } from '../../../src/campaign/checkpoint-policy.js';
import { runCampaign } from '../../../src/campaign/campaign.js';
import { type PolicyProvider } from '../../../src/campaign/index.js';
import { BridgePool } from './bridge-pool.js';
import { RELIABILITY_KEYS_DIR, ROOT, smallBlackoutYaml } from './cli.js';

export interface LoadOptions {
  readonly servers: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly n: number;
  readonly batch: number;
  readonly sampleMs: number;
  /** V8 flags for the server processes (e.g. ['--max-old-space-size=64']); none: the product's defaults. */
  readonly serverNodeFlags?: readonly string[];
}

export interface Sample {
  readonly t: number;
  readonly orchestrator: number;
  readonly servers: readonly number[];
  /** The orchestrator's V8 heap in use right after a full GC (at most every HEAP_EVERY_S seconds; NaN otherwise). */
  readonly heapAfterGc: number;
}

export interface Growth {
  /** Median RSS (MB) over the first post-warm-up window. */
  readonly baseMb: number;
  /** Median RSS (MB) over the last window. */
  readonly endMb: number;
  readonly maxMb: number;
  /** endMb − baseMb: what stayed (a GC sawtooth inside a window does not count). */
  readonly growthMb: number;
  readonly slopeMbPerMin: number;
}

export interface LoadReport {
  readonly campaigns: number;
  readonly episodes: number;
  readonly steps: number;
  readonly samples: readonly Sample[];
  readonly orchestrator: Growth;
  readonly heap: Growth;
  readonly servers: readonly Growth[];
  readonly restarts: number;
  readonly seconds: number;
}

function rssOfPid(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

const MB = 1024 * 1024;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[(s.length - 1) >> 1] as number);
};

/** Seconds between the full GCs that measure the heap after GC (windows are ≥ 5 s, so each holds at least two). */
const HEAP_EVERY_S = 2;

export function growthOf(points: readonly { t: number; v: number }[], warmup: number, windowS: number): Growth {
  const after = points.filter((p) => p.t >= warmup && Number.isFinite(p.v));
  const base = median(after.filter((p) => p.t < warmup + windowS).map((p) => p.v));
  const tEnd = Math.max(...after.map((p) => p.t));
  const end = median(after.filter((p) => p.t > tEnd - windowS).map((p) => p.v));
  const max = Math.max(...after.map((p) => p.v));
  const n = after.length;
  const mt = after.reduce((a, p) => a + p.t, 0) / n;
  const mv = after.reduce((a, p) => a + p.v, 0) / n;
  const cov = after.reduce((a, p) => a + (p.t - mt) * (p.v - mv), 0);
  const vt = after.reduce((a, p) => a + (p.t - mt) ** 2, 0);
  return {
    baseMb: base / MB,
    endMb: end / MB,
    maxMb: max / MB,
    growthMb: (end - base) / MB,
    slopeMbPerMin: vt > 0 ? ((cov / vt) * 60) / MB : 0,
  };
}

export async function runLoad(o: LoadOptions): Promise<LoadReport> {
  process.env['IMEP_KEYS_DIR'] ??= RELIABILITY_KEYS_DIR;
  const dir = mkdtempSync(join(tmpdir(), 'imep-rel-load-'));
  const file = join(dir, 'p.yaml');
  writeFileSync(file, smallBlackoutYaml(o.n));
  const pool = await BridgePool.start(o.servers, { stepMs: 30_000 }, [], o.serverNodeFlags ?? []);
  const base = await checkpointPolicyProvider(join(ROOT, 'checkpoints/lite-memvla'));
  const shared: PolicyProvider = {
    description: base.description,
    policyFor: (t, b) => base.policyFor(t, b),
    release: async () => undefined,
  };
  const samples: Sample[] = [];
  const t0 = performance.now();
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // A full GC (for the heap after GC) at most every HEAP_EVERY_S seconds, by the clock rather than every n-th sample:
  // under load the timer drifts, and a count-based schedule could leave a whole window without one (growth NaN).
  let lastGcAt = -Infinity;
  const sample = (): void => {
    let heapAfterGc = NaN;
    const now = (performance.now() - t0) / 1000;
    if (now - lastGcAt >= HEAP_EVERY_S) {
      lastGcAt = now;
      gc();
      heapAfterGc = process.memoryUsage().heapUsed;
    }
    samples.push({
      t: (performance.now() - t0) / 1000,
      orchestrator: process.memoryUsage().rss,
      servers: pool.pids().map(rssOfPid),
      heapAfterGc,
    });
  };
  sample();
  const timer = setInterval(sample, o.sampleMs);
  let campaigns = 0;
  let episodes = 0;
  let steps = 0;
  try {
    while ((performance.now() - t0) / 1000 < o.seconds) {
      const campaignsDir = join(dir, `c${campaigns}`);
      const unit = await runCampaign(file, {
        campaignsDir,
        batchSize: o.batch,
        envs: pool.envs(),
        policies: async () => shared,
        progress: null,
        say: () => undefined,
        operator: { id: 'reliability', source: 'explicit' },
      });
      const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');
      episodes += rows.length;
      for (const l of rows) steps += (JSON.parse(l) as { steps: number }).steps;
      campaigns += 1;
      rmSync(campaignsDir, { recursive: true, force: true });
    }
  } finally {
    clearInterval(timer);
    sample();
    await base.release();
    await pool.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  const seconds = (performance.now() - t0) / 1000;
  const window = Math.max(5, (seconds - o.warmupSeconds) / 5);
  return {
    campaigns,
    episodes,
    steps,
    samples,
    orchestrator: growthOf(
      samples.map((s) => ({ t: s.t, v: s.orchestrator })),
      o.warmupSeconds,
      window,
    ),
    heap: growthOf(
      samples.map((s) => ({ t: s.t, v: s.heapAfterGc })),
      o.warmupSeconds,
      window,
    ),
    servers: pool.pids().map((_, i) =>
      growthOf(
        samples.map((s) => ({ t: s.t, v: s.servers[i] ?? NaN })),
        o.warmupSeconds,
        window,
      ),
    ),
    restarts: pool.restarts,
    seconds,
  };
}

export function formatLoad(r: LoadReport, o: LoadOptions, bounds: typeof LOAD_BOUNDS = LOAD_BOUNDS): string[] {
  const f = (x: number): string => x.toFixed(1);
  const worst = r.servers.reduce((a, g) => (g.growthMb > a.growthMb ? g : a), r.servers[0] as Growth);
  const every = Math.max(1, Math.floor(r.samples.length / 12));
  const series = r.samples.filter((_, i) => i % every === 0 || i === r.samples.length - 1);
  return [
    `load: ${o.servers} lite servers (imep sim serve lite) driven by one orchestrator for ${f(r.seconds)} s: ${r.campaigns} campaigns (blackout ladder n=${o.n}, precommit + run + seal each), ${r.episodes} episodes, ${r.steps} bridged steps (${Math.round(r.steps / r.seconds)} steps/s), batch ${o.batch}, restarts ${r.restarts}`,
    `RSS over time (s: orchestrator MB / servers min–max MB): ${series.map((s) => `${Math.round(s.t)}: ${f(s.orchestrator / MB)} / ${f(Math.min(...s.servers) / MB)}–${f(Math.max(...s.servers) / MB)}`).join('; ')}`,
    `after ${o.warmupSeconds} s warm-up (windows of ${f(Math.max(5, (r.seconds - o.warmupSeconds) / 5))} s): orchestrator first-window median ${f(r.orchestrator.baseMb)} MB, last-window median ${f(r.orchestrator.endMb)} MB, max ${f(r.orchestrator.maxMb)} MB; growth ${f(r.orchestrator.growthMb)} MB (bound ${bounds.orchestratorMb} MB), slope ${r.orchestrator.slopeMbPerMin.toFixed(2)} MB/min`,
    `orchestrator V8 heap after a full GC: first window ${f(r.heap.baseMb)} MB, last window ${f(r.heap.endMb)} MB, growth ${f(r.heap.growthMb)} MB (bound ${bounds.heapMb} MB)`,
    `servers (${(o.serverNodeFlags ?? []).join(' ') || 'default V8 flags'}): last-window medians ${r.servers.map((g) => f(g.endMb)).join(' ')} MB; largest growth ${f(worst.growthMb)} MB (bound ${bounds.serverMb} MB); slopes ${r.servers.map((g) => g.slopeMbPerMin.toFixed(1)).join(' ')} MB/min`,
  ];
}

/**
 * The stated bounds, growth after warm-up (last-window median − first-window median): orchestrator RSS
 * < 64 MB and its V8 heap after a full GC < 16 MB; each server's RSS < 24 MB with its old space capped at
 * 48 MB (LOAD_SERVER_FLAGS) — with V8's default limit a server's heap grows lazily toward it (measured:
 * +55 MB in 5 minutes, flat at ~88 MB under the cap), so the cap is what makes RSS a leak signal: a
 * leaking server would exceed it and die (a restart, which fails the check) or keep growing.
 */
export const LOAD_BOUNDS = { orchestratorMb: 64, heapMb: 16, serverMb: 24 };
export const LOAD_SERVER_FLAGS: readonly string[] = ['--max-old-space-size=48'];

export function loadWithinBounds(r: LoadReport): boolean {
  return (
    r.orchestrator.growthMb < LOAD_BOUNDS.orchestratorMb &&
    r.heap.growthMb < LOAD_BOUNDS.heapMb &&
    r.servers.every((g) => g.growthMb < LOAD_BOUNDS.serverMb) &&
    r.restarts === 0
  );
}
