/**
 * Lite-policy throughput on the CPU: slot-steps/s of checkpoints/lite-memvla driving ShellGameTouch-lite
 * (strict, blackout from step 6) episodes in lockstep at batch 1 vs batch 32, and where the time goes:
 *   graph   ONNX Runtime session.run of encode + act (timed inside ExternalMemoryPolicy)
 *   sim     the lite simulator's reset/step (timed around each call)
 *   other   everything else: feeds, bank query/hook/write, output slicing, lockstep loop — the orchestrator
 * Prints the ratio batch-32 / batch-1 throughput (the issue expects ≥ 5×) and the orchestrator share; asserts nothing.
 * All three are wall times, so another process competing for the CPUs inflates every one of them: the bench prints
 * the 1-minute load average before and after the timed passes and flags a run whose load exceeded the core count.
 *
 *   npx tsx bench/policy-throughput.ts            [EPISODES=256 REPEATS=5 INTRA_OP=1 CHECKPOINT=checkpoints/lite-memvla]
 */
import { availableParallelism, loadavg } from 'node:os';
import { makeLiteEnv } from '../src/bridges/lite/registry.js';
import type { NdArray, ResetRequest, SimEnvironment, StepResult } from '../src/bridges/sim-environment.js';
import { loadCheckpoint } from '../src/policies/checkpoint.js';
import { runLockstep } from '../src/policies/lockstep.js';
import { ExternalMemoryPolicy } from '../src/policies/memory-policy.js';

const EPISODES = Number(process.env['EPISODES'] ?? 256);
const CHECKPOINT = process.env['CHECKPOINT'] ?? 'checkpoints/lite-memvla';
const INTRA_OP = Number(process.env['INTRA_OP'] ?? 1);

class TimedEnv implements SimEnvironment {
  static ns = 0n;
  constructor(private readonly inner: SimEnvironment) {}
  get spec() {
    return this.inner.spec;
  }
  async reset(r: ResetRequest): Promise<StepResult> {
    const t = process.hrtime.bigint();
    const out = await this.inner.reset(r);
    TimedEnv.ns += process.hrtime.bigint() - t;
    return out;
  }
  async step(a: NdArray): Promise<StepResult> {
    const t = process.hrtime.bigint();
    const out = await this.inner.step(a);
    TimedEnv.ns += process.hrtime.bigint() - t;
    return out;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Run {
  readonly batch: number;
  readonly slotSteps: number;
  readonly calls: number;
  readonly seconds: number;
  readonly graph: number;
  readonly sim: number;
  readonly successes: number;
}

async function run(batch: number, seedFrom: number): Promise<Run> {
  const ckpt = await loadCheckpoint(CHECKPOINT, { onnx: { intraOpThreads: INTRA_OP } });
  const policy = new ExternalMemoryPolicy(ckpt, { batchSize: batch });
  const episodes = Array.from({ length: EPISODES }, (_, i) => ({ info: { episode: `b${batch}-${seedFrom + i}` }, reset: { seed: seedFrom + i } }));
  const envFor = (): SimEnvironment => new TimedEnv(makeLiteEnv('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }));
  TimedEnv.ns = 0n;
  const t0 = process.hrtime.bigint();
  const outcomes = await runLockstep(policy, envFor, episodes);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const t = policy.timings();
  await policy.release();
  return {
    batch,
    slotSteps: t.slotSteps,
    calls: t.calls,
    seconds,
    graph: (t.encodeNs + t.actNs) / 1e9,
    sim: Number(TimedEnv.ns) / 1e9,
    successes: outcomes.filter((o) => o.last.evaluator['success'] === true).length,
  };
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const us = (s: number, n: number): string => `${((s / n) * 1e6).toFixed(1)} µs`;

// Warm-up (JIT, allocation paths), then REPEATS timed passes per batch size, interleaved; the median pass counts.
const REPEATS = Number(process.env['REPEATS'] ?? 5);
for (let i = 0; i < 2; i++) for (const batch of [1, 32]) await run(batch, 10_000);
const loadBefore = loadavg()[0] as number;
const passes = new Map<number, Run[]>([[1, []], [32, []]]);
for (let i = 0; i < REPEATS; i++) for (const batch of [1, 32]) passes.get(batch)?.push(await run(batch, 0));
const median = (rs: Run[]): Run => [...rs].sort((a, b) => a.seconds - b.seconds)[Math.floor(rs.length / 2)] as Run;
const results: Run[] = [1, 32].map((b) => median(passes.get(b) ?? []));
const loadAfter = loadavg()[0] as number;
console.log(`policy-throughput: ${CHECKPOINT}, ${EPISODES} episodes of ShellGameTouch-lite (strict, blackout 6), ONNX Runtime CPU, ${INTRA_OP} intra-op thread(s), median of ${REPEATS} passes`);
for (const r of results) {
  const other = r.seconds - r.graph - r.sim;
  console.log(
    `  batch ${String(r.batch).padStart(2)}: ${(r.slotSteps / r.seconds).toFixed(0).padStart(7)} slot-steps/s  (${r.slotSteps} slot-steps, ${r.calls} batched calls, ${r.successes}/${EPISODES} successes)` +
      `  per slot-step: total ${us(r.seconds, r.slotSteps)}, graph ${us(r.graph, r.slotSteps)}, sim ${us(r.sim, r.slotSteps)}, orchestrator ${us(other, r.slotSteps)} = ${pct(other / r.seconds)} of step time`,
  );
}
const [b1, b32] = results as [Run, Run];
console.log(`  throughput ratio batch 32 / batch 1: ${((b32.slotSteps / b32.seconds) / (b1.slotSteps / b1.seconds)).toFixed(2)}×`);
const cores = availableParallelism();
const busy = Math.max(loadBefore, loadAfter) > cores;
console.log(`  1-min load average ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)} on ${cores} cores${busy ? ' — OTHER PROCESSES COMPETED FOR THE CPUs: wall times are inflated, rerun on an idle machine' : ''}`);
