/**
 * What each onnxruntime-node session option gives the lite policy (checkpoints/lite-memvla on ShellGameTouch-lite,
 * strict, blackout 6, lockstep through ExternalMemoryPolicy): graph time per slot-step at batch 1 and batch 32
 * for the runtime's own session options (the baseline) and for one change at a time, as ratios to the baseline
 * measured in the same process (variants interleaved pass by pass, the median pass counts). Each variant's
 * actions and decision logits over all episodes are hashed and compared with the baseline's: "bits" says whether
 * the variant reproduces them exactly. Prints; asserts nothing.
 *
 *   npx tsx bench/onnx-session-options.ts            [EPISODES=64 REPEATS=5 CHECKPOINT=checkpoints/lite-memvla]
 */
import { createHash } from 'node:crypto';
import ort from 'onnxruntime-node';
import { makeLiteEnv } from '../src/sims/lite/registry.js';
import { loadCheckpoint } from '../src/policies/checkpoint.js';
import { runLockstep, type LockstepSubscriber } from '../src/runtime/lockstep.js';
import { ExternalMemoryPolicy } from '../src/policies/memory-policy.js';

const EPISODES = Number(process.env['EPISODES'] ?? 64);
const REPEATS = Number(process.env['REPEATS'] ?? 5);
const CHECKPOINT = process.env['CHECKPOINT'] ?? 'checkpoints/lite-memvla';

type Options = ort.InferenceSession.SessionOptions;
/** Each variant changes the runtime's session options (src/policies/onnx-backend.ts) in one respect. */
const VARIANTS: readonly { readonly name: string; readonly change: (o: Options) => Options }[] = [
  { name: 'runtime default (all, sequential, arena, mem-pattern, 1 intra / 1 inter thread)', change: (o) => o },
  { name: "graphOptimizationLevel 'disabled'", change: (o) => ({ ...o, graphOptimizationLevel: 'disabled' }) },
  { name: "graphOptimizationLevel 'basic'", change: (o) => ({ ...o, graphOptimizationLevel: 'basic' }) },
  { name: "graphOptimizationLevel 'extended'", change: (o) => ({ ...o, graphOptimizationLevel: 'extended' }) },
  {
    name: "executionMode 'parallel' (2 inter-op threads)",
    change: (o) => ({ ...o, executionMode: 'parallel', interOpNumThreads: 2 }),
  },
  { name: 'enableCpuMemArena false', change: (o) => ({ ...o, enableCpuMemArena: false }) },
  { name: 'enableMemPattern false', change: (o) => ({ ...o, enableMemPattern: false }) },
  { name: 'intraOpNumThreads 2', change: (o) => ({ ...o, intraOpNumThreads: 2 }) },
  {
    name: 'intraOpNumThreads 2, no spinning',
    change: (o) => ({ ...o, intraOpNumThreads: 2, extra: { session: { 'intra_op.allow_spinning': '0' } } }),
  },
];

interface Pass {
  readonly graphUs: number;
  readonly totalUs: number;
  readonly digest: string;
}

async function pass(variant: number, batch: number): Promise<Pass> {
  const change = (VARIANTS[variant] as (typeof VARIANTS)[number]).change;
  const ckpt = await loadCheckpoint(CHECKPOINT, {
    onnx: { createSession: (bytes, so) => ort.InferenceSession.create(bytes, change(so)) },
  });
  const policy = new ExternalMemoryPolicy(ckpt, { batchSize: batch });
  const hashes = new Map<number, ReturnType<typeof createHash>>();
  const recorder: LockstepSubscriber = {
    onStep(_slot, episode, _before, output) {
      const i = Number(episode.info.seed);
      let h = hashes.get(i);
      if (h === undefined) hashes.set(i, (h = createHash('sha256')));
      const a = output.action.data as Float32Array;
      h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      const l = output.readouts.decisionLogits;
      if (l !== undefined) h.update(new Uint8Array(l.buffer, l.byteOffset, l.byteLength));
    },
  };
  const episodes = Array.from({ length: EPISODES }, (_, i) => ({
    info: { episode: `o${i}`, seed: i },
    reset: { seed: i },
  }));
  const t0 = process.hrtime.bigint();
  await runLockstep(policy, () => makeLiteEnv('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }), episodes, {
    subscribers: [recorder],
  });
  const total = Number(process.hrtime.bigint() - t0) / 1e3;
  const t = policy.timings();
  await policy.release();
  const all = createHash('sha256');
  for (let i = 0; i < EPISODES; i++) all.update(hashes.get(i)?.digest('hex') ?? '-');
  return {
    graphUs: (t.encodeNs + t.actNs) / 1e3 / t.slotSteps,
    totalUs: total / t.slotSteps,
    digest: all.digest('hex'),
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const BATCHES = [1, 32] as const;
const runs = new Map<string, Pass[]>();
for (let v = 0; v < VARIANTS.length; v++) for (const b of BATCHES) await pass(v, b); // warm-up
for (let r = 0; r < REPEATS; r++) {
  for (let v = 0; v < VARIANTS.length; v++) {
    for (const b of BATCHES) {
      const key = `${v}|${b}`;
      runs.set(key, [...(runs.get(key) ?? []), await pass(v, b)]);
    }
  }
}
console.log(
  `onnx-session-options: ${CHECKPOINT}, ${EPISODES} episodes, median of ${REPEATS} interleaved passes; graph µs per slot-step (ratio to the runtime default, < 1 is faster)`,
);
const base = (b: number): Pass[] => runs.get(`0|${b}`) ?? [];
for (let v = 0; v < VARIANTS.length; v++) {
  const cells = BATCHES.map((b) => {
    const mine = runs.get(`${v}|${b}`) ?? [];
    const g = median(mine.map((p) => p.graphUs));
    const g0 = median(base(b).map((p) => p.graphUs));
    const same =
      mine.every((p) => p.digest === base(b)[0]?.digest) && base(b).every((p) => p.digest === base(1)[0]?.digest);
    return `b${b}: ${g.toFixed(1).padStart(5)} µs (${(g / g0).toFixed(2)}×) bits ${same ? 'same' : 'DIFFER'}`;
  });
  console.log(`  ${(VARIANTS[v] as (typeof VARIANTS)[number]).name.padEnd(84)} ${cells.join('   ')}`);
}
