/**
 * Canary scan (issue 9, information isolation). Every evaluator-only value a simulator reports — seed,
 * success, reward, terminated, truncated, task, attempt ordinal, the oracle cup and the task's readouts —
 * is replaced by a unique canary (CanaryEnv), and the seeds themselves are canaries (a seed band no other
 * number in the campaign shares). A recording wrapper of the runner policy (RecordingRunnerPolicy) keeps a
 * copy of every byte the policy receives across a whole campaign: each observation field (captureField,
 * as RecordingPolicy does), each reset's EpisodeInfo, and every memory tensor the bank read hands back to
 * the network. The scan then looks for every canary in every encoding a leak could take: decimal and hex
 * text (UTF-8 and UTF-16LE), int32 / uint32 / int64 and float32 / float64, little- and big-endian.
 * Positive controls (leaky envs) show the scan finds a canary smuggled into each channel.
 */
import { createHash } from 'node:crypto';
import type { ReadHook, RetrievedItem } from '../../../src/banks/record.js';
import { makeLiteEnv } from '../../../src/sims/lite/registry.js';
import type { NdArray, ObsValue, ResetRequest, SimEnvironment, StepResult } from '../../../src/runtime/environment.js';
import { RowSink, type EnvProvider, type PolicyProvider, type RunnerPolicy } from '../../../src/campaign/index.js';
import { runPlan } from '../../../src/campaign/run-plan.js';
import { checkpointPolicyProvider } from '../../../src/campaign/checkpoint-policy.js';
import { Prng } from '../../../src/core/prng.js';
import { captureField } from '../../../src/policies/recording-policy.js';
import { buildPlan, parseProtocol } from '../../../src/protocol/index.js';
import { ROOT, smallBlackoutYaml } from './cli.js';
import { join } from 'node:path';

/** A canary: a value, and every byte pattern under which it could leak. */
export interface Canary {
  readonly field: string;
  readonly value: number | string;
  readonly patterns: readonly { readonly encoding: string; readonly bytes: Buffer }[];
}

const le32i = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v | 0);
  return b;
};
const be32i = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v | 0);
  return b;
};
const le64i = (v: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(BigInt(v));
  return b;
};
const be64i = (v: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(v));
  return b;
};
const lef32 = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeFloatLE(v);
  return b;
};
const bef32 = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeFloatBE(v);
  return b;
};
const lef64 = (v: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return b;
};
const bef64 = (v: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
};
const text = (s: string): { encoding: string; bytes: Buffer }[] => [
  { encoding: 'utf8', bytes: Buffer.from(s, 'utf8') },
  { encoding: 'utf16le', bytes: Buffer.from(s, 'utf16le') },
];

/** Every encoding of a number (or string) a leak could use. */
export function canaryOf(field: string, value: number | string): Canary {
  if (typeof value === 'string') return { field, value, patterns: text(value) };
  const p: { encoding: string; bytes: Buffer }[] = [];
  if (Number.isInteger(value)) {
    p.push({ encoding: 'int32le', bytes: le32i(value) }, { encoding: 'int32be', bytes: be32i(value) });
    p.push({ encoding: 'int64le', bytes: le64i(value) }, { encoding: 'int64be', bytes: be64i(value) });
    p.push(...text(String(value)).map((t) => ({ ...t, encoding: `decimal-${t.encoding}` })));
    p.push(...text(value.toString(16)).map((t) => ({ ...t, encoding: `hex-${t.encoding}` })));
  } else {
    p.push(...text(String(value)).map((t) => ({ ...t, encoding: `decimal-${t.encoding}` })));
    p.push(...text(String(Math.fround(value))).map((t) => ({ ...t, encoding: `decimal-f32-${t.encoding}` })));
    p.push(...text(value.toFixed(6)).map((t) => ({ ...t, encoding: `fixed6-${t.encoding}` })));
  }
  p.push({ encoding: 'float32le', bytes: lef32(value) }, { encoding: 'float32be', bytes: bef32(value) });
  p.push({ encoding: 'float64le', bytes: lef64(value) }, { encoding: 'float64be', bytes: bef64(value) });
  return { field, value, patterns: p };
}

/** Canary values for the evaluator-only fields, drawn from the project PRNG: none shares a byte pattern with another. */
export function canaryValues(seed: string, fields: readonly string[]): Map<string, number | string> {
  const prng = new Prng(seed);
  const out = new Map<string, number | string>();
  for (const f of fields) {
    if (f === 'task') out.set(f, `CANARY-task-${prng.nextUint32().toString(16)}`);
    else if (f === 'reward' || f === 'success')
      out.set(f, 0.25 + prng.nextFloat() / 2); // a float no frame or action is likely to hold
    else out.set(f, 0x10000000 + prng.nextInt(0x60000000)); // integers in [2^28, 2^31): 4 high-entropy bytes
  }
  return out;
}

/** A SimEnvironment whose evaluator-only values are canaries (the attempt ordinal: one canary per attempt). */
export class CanaryEnv implements SimEnvironment {
  private attempt = 1;
  constructor(
    private readonly inner: SimEnvironment,
    private readonly values: ReadonlyMap<string, number | string>,
    private readonly leak?: (r: StepResult, values: ReadonlyMap<string, number | string>) => StepResult,
  ) {}
  get spec(): SimEnvironment['spec'] {
    return this.inner.spec;
  }
  private wrap(r: StepResult, seed: number | null): StepResult {
    const evaluator: Record<string, ObsValue | NdArray> = {};
    for (const k of Object.keys(r.evaluator)) {
      if (k === 'seed' && seed !== null) evaluator[k] = seed;
      else if (k === 'attempt') evaluator[k] = this.values.get(`attempt${this.attempt}`) as number;
      else {
        const v = this.values.get(k);
        if (v === undefined) throw new Error(`no canary for evaluator field ${k}`);
        evaluator[k] = v;
      }
    }
    const out = { ...r, evaluator };
    return this.leak ? this.leak(out, this.values) : out;
  }
  private seed = 0;
  async reset(req: ResetRequest): Promise<StepResult> {
    this.seed = req.seed;
    this.attempt = Number(req.options?.['attempt'] ?? 1);
    return this.wrap(await this.inner.reset(req), req.seed);
  }
  async step(a: NdArray): Promise<StepResult> {
    return this.wrap(await this.inner.step(a), this.seed);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Every byte a runner policy receives: observations, EpisodeInfo, and the memory the bank read returns. */
export class RecordingRunnerPolicy implements RunnerPolicy {
  readonly chunks: Buffer[] = [];
  readonly counts = {
    observationFields: 0,
    episodeInfos: 0,
    memoryTensors: 0,
    observationBytes: 0,
    infoBytes: 0,
    memoryBytes: 0,
  };
  constructor(private readonly inner: RunnerPolicy) {}
  get maxBatch(): number {
    return this.inner.maxBatch;
  }
  slotMemory(slot: number): ReturnType<RunnerPolicy['slotMemory']> {
    return this.inner.slotMemory(slot);
  }
  setReadHook(hook: ReadHook): void {
    const wrapped: ReadHook = (items, ctx) => {
      const out = hook(items, ctx);
      this.memory(out);
      return out;
    };
    this.inner.setReadHook(wrapped);
  }
  private memory(items: readonly RetrievedItem[]): void {
    for (const it of items) {
      for (const t of Object.values(it.leaves)) {
        const b = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
        this.chunks.push(Buffer.from(b));
        this.counts.memoryTensors += 1;
        this.counts.memoryBytes += b.length;
      }
      const id = Buffer.from(JSON.stringify(it.identity));
      this.chunks.push(id);
      this.counts.memoryBytes += id.length;
    }
  }
  resetSlot(slot: number, info: Parameters<RunnerPolicy['resetSlot']>[1]): ReturnType<RunnerPolicy['resetSlot']> {
    const b = Buffer.from(JSON.stringify(info));
    this.chunks.push(b);
    this.counts.episodeInfos += 1;
    this.counts.infoBytes += b.length;
    return this.inner.resetSlot(slot, info);
  }
  inferBatch(reqs: Parameters<RunnerPolicy['inferBatch']>[0]): ReturnType<RunnerPolicy['inferBatch']> {
    for (const r of reqs) {
      for (const name of Object.keys(r.obs)) {
        const f = captureField(name, r.obs[name] as ObsValue | NdArray);
        this.chunks.push(Buffer.from(name, 'utf8'), Buffer.from(f.bytes));
        this.counts.observationFields += 1;
        this.counts.observationBytes += f.bytes.length;
      }
    }
    return this.inner.inferBatch(reqs);
  }
}

export interface ScanResult {
  readonly bytesReceived: number;
  readonly uniqueChunks: number;
  readonly bytesScanned: number;
  readonly canaries: number;
  readonly patterns: number;
  readonly hits: readonly { field: string; value: number | string; encoding: string }[];
}

/** Scans the distinct received chunks (deduplicated by SHA-256) for every pattern of every canary. */
export function scan(chunks: readonly Buffer[], canaries: readonly Canary[]): ScanResult {
  const seen = new Set<string>();
  const unique: Buffer[] = [];
  let received = 0;
  for (const c of chunks) {
    received += c.length;
    const h = createHash('sha256').update(c).digest('hex');
    if (!seen.has(h)) {
      seen.add(h);
      unique.push(c);
    }
  }
  // one buffer, chunks separated by 16 zero-free bytes so no match spans two chunks… unless a pattern holds them
  const sep = Buffer.from('\u0001|chunk-break|\u0001');
  const all = Buffer.concat(unique.flatMap((c) => [c, sep]));
  const hits: ScanResult['hits'][number][] = [];
  let patterns = 0;
  for (const c of canaries) {
    for (const p of c.patterns) {
      patterns += 1;
      if (all.indexOf(p.bytes) !== -1) hits.push({ field: c.field, value: c.value, encoding: p.encoding });
    }
  }
  return {
    bytesReceived: received,
    uniqueChunks: unique.length,
    bytesScanned: all.length,
    canaries: canaries.length,
    patterns,
    hits,
  };
}

export const CANARY_SEED = 'imep-reliability/canary/v1';
export const EVALUATOR_FIELDS = [
  'success',
  'reward',
  'terminated',
  'truncated',
  'task',
  'attempt1',
  'attempt2',
  'ballCup',
  'firstVisit',
  'decisionCorrect',
  'lastTouch',
  'blackout',
];

export interface CanaryCampaign {
  readonly rows: number;
  readonly planned: number;
  /** Rows whose episode failed (a leak function that throws would show here). */
  readonly failedRows: number;
  readonly seeds: readonly number[];
  readonly canaries: readonly Canary[];
  readonly counts: RecordingRunnerPolicy['counts'];
  readonly result: ScanResult;
}

/**
 * Runs the blackout ladder (n seeds from a canary seed band) with the lite checkpoint through the
 * recording wrapper and canary envs, then scans. `leak` (positive controls) rewrites each step result.
 */
export async function canaryCampaign(
  n: number,
  leak?: (r: StepResult, values: ReadonlyMap<string, number | string>) => StepResult,
): Promise<CanaryCampaign> {
  const values = canaryValues(CANARY_SEED, EVALUATOR_FIELDS);
  const seedStart = 0x10000000 + new Prng(`${CANARY_SEED}/seeds`).nextInt(0x60000000);
  const { protocol } = parseProtocol(smallBlackoutYaml(n, { start: seedStart }), 'canary.yaml');
  const plan = buildPlan(protocol);
  const base = await checkpointPolicyProvider(join(ROOT, 'checkpoints/lite-memvla'));
  const recorders: RecordingRunnerPolicy[] = [];
  const provider: PolicyProvider = {
    description: `recording(${base.description})`,
    async policyFor(task, batch) {
      const r = new RecordingRunnerPolicy(await base.policyFor(task, batch));
      recorders.push(r);
      return r;
    },
    release: () => base.release(),
  };
  const envs: EnvProvider = (t) => new CanaryEnv(makeLiteEnv(t.envId, t.kwargs), values, leak);
  const rows: unknown[] = [];
  const sink = new RowSink(
    {
      appendRow: async (r) => void rows.push(r),
      appendTiming: async () => undefined,
      appendTrace: async () => undefined,
    },
    plan.episodes.map((e) => e.seq),
  );
  try {
    await runPlan({ protocol, episodes: plan.episodes, policies: provider, envs, batchSize: 8, sink });
    await sink.drain();
  } finally {
    await provider.release();
  }
  const seeds = [...new Set(plan.episodes.map((e) => e.seed))];
  const canaries = [...[...values].map(([f, v]) => canaryOf(f, v)), ...seeds.map((s) => canaryOf('seed', s))];
  const chunks = recorders.flatMap((r) => r.chunks);
  const counts = {
    observationFields: 0,
    episodeInfos: 0,
    memoryTensors: 0,
    observationBytes: 0,
    infoBytes: 0,
    memoryBytes: 0,
  };
  for (const r of recorders) for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += r.counts[k];
  return {
    rows: rows.length,
    planned: plan.episodes.length,
    failedRows: rows.filter((r) => (r as { status: string }).status !== 'ok').length,
    seeds,
    canaries,
    counts,
    result: scan(chunks, canaries),
  };
}

export function formatCanary(c: CanaryCampaign): string[] {
  const r = c.result;
  const mb = (b: number): string => `${(b / 1e6).toFixed(2)} MB`;
  return [
    `canary scan: blackout ladder, ${c.seeds.length} canary seeds (${c.seeds[0]}…), ${c.rows}/${c.planned} episodes (${c.failedRows} failed), lite checkpoint; ${r.canaries} canaries (every evaluator-only field, both attempt ordinals, every seed) × encodings = ${r.patterns} byte patterns`,
    `received by the policy: ${mb(r.bytesReceived)} (observations ${mb(c.counts.observationBytes)} in ${c.counts.observationFields} fields, episode infos ${c.counts.infoBytes} B in ${c.counts.episodeInfos}, memory ${mb(c.counts.memoryBytes)} in ${c.counts.memoryTensors} tensors); scanned ${mb(r.bytesScanned)} (${r.uniqueChunks} distinct chunks)`,
    `canary hits: ${r.hits.length}${r.hits.length ? ` — ${r.hits.map((h) => `${h.field}=${h.value} as ${h.encoding}`).join(', ')}` : ''}`,
  ];
}
