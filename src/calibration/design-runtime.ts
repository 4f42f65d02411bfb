/**
 * The policies of a calibration suite: each checkpoint verified (SHA-256 of path/file against the suite)
 * and loaded once; the fact decoder of a checkpoint fitted once on the suite's fit band; and, per
 * design, a fresh runtime (ExternalMemoryPolicy, wrapped in the planted-effect wrapper when the design
 * plants one) for the ladder runner.
 *
 * Decoder fit: the plain checkpoint runs the fit band under the identity hook; the first read at elapsed
 * step ≥ the task's decision step with ≥ 1 item is summarised (fact-decoder.ts) and labelled with the
 * unit's fact, read by the HARNESS from the evaluator at reset (the policy never sees it). The fit
 * accuracy recorded is training accuracy on that band.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { makeLiteEnv } from '../sims/index.js';
import { ImepError } from '../core/index.js';
import { loadCheckpoint } from '../policies/checkpoint.js';
import { type LoadedCheckpoint, ExternalMemoryPolicy } from '../policies/index.js';
import { runLockstep } from '../runtime/index.js';
import { decodeFact, fitFactDecoder, summariseRead, type FactDecoderSpec, type FitExample } from './fact-decoder.js';
import type { LadderPolicy, LadderTask } from './ladder-run.js';
import { PlantedEffectPolicy } from './planted-effect-policy.js';
import type { Design, Suite, SuiteCheckpoint } from './suite-schema.js';

export interface FittedDecoder {
  readonly checkpoint: string;
  readonly spec: FactDecoderSpec;
  readonly fitUnits: number;
  readonly fitCorrect: number;
}

export async function openCheckpoint(c: SuiteCheckpoint, root: string, suiteFile: string): Promise<LoadedCheckpoint> {
  const dir = resolve(root, c.path);
  const file = resolve(dir, c.file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    throw new ImepError('E_CHECKPOINT_MISSING', `checkpoint ${c.name}: ${file} does not exist`, {
      file: suiteFile,
      field: 'checkpoints',
      hint: 'run from the repository root, or build the lite checkpoints (checkpoints/README.md)',
    });
  }
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== c.sha256) {
    throw new ImepError(
      'E_CHECKPOINT_MISMATCH',
      `checkpoint ${c.name}: ${c.path}/${c.file} has SHA-256 ${sha}, the suite binds ${c.sha256}`,
      {
        file: suiteFile,
        field: 'checkpoints',
        hint: 'the checkpoint changed since the suite was written: re-bind the hash deliberately (and re-freeze)',
      },
    );
  }
  return loadCheckpoint(dir);
}

export async function fitDecoder(
  ckpt: LoadedCheckpoint,
  name: string,
  suite: Suite,
  task: LadderTask,
  batchSize: number,
): Promise<FittedDecoder> {
  const policy = new ExternalMemoryPolicy(ckpt, { batchSize });
  const first = new Map<string, Float64Array>();
  policy.setReadHook((items, ctx) => {
    if (ctx.queryIndex - 1 >= task.pointStep && items.length > 0 && !first.has(ctx.episode)) {
      const s = summariseRead(items, task.leaf);
      if (s !== null) first.set(ctx.episode, s);
    }
    return items;
  });
  const { start, end } = suite.decoder.fitSeeds;
  const seeds = Array.from({ length: end - start + 1 }, (_, i) => start + i);
  const outs = await runLockstep(
    policy,
    () => makeLiteEnv(task.envId, task.kwargs),
    seeds.map((seed) => ({ info: { episode: `decoder-fit/${name}/${seed}`, seed, attempt: 1 }, reset: { seed } })),
  );
  const examples: FitExample[] = [];
  for (const o of outs) {
    const s = first.get(o.episode.info.episode);
    const fact = o.first.evaluator[task.factField];
    if (s !== undefined && typeof fact === 'number') examples.push({ summary: s, fact });
  }
  const spec = fitFactDecoder(examples, suite.decoder.classes, task.leaf);
  const fitCorrect = examples.filter((e) => decodeFact(spec, e.summary) === e.fact).length;
  return { checkpoint: name, spec, fitUnits: examples.length, fitCorrect };
}

/** A fresh runtime for one design (its own banks and wrapper state). */
export function designPolicy(
  design: Design,
  ckpt: LoadedCheckpoint,
  suite: Suite,
  task: LadderTask,
  decoder: FittedDecoder | undefined,
  batchSize: number,
): LadderPolicy {
  const inner = new ExternalMemoryPolicy(ckpt, { batchSize, decisionStep: (step) => step >= task.pointStep });
  const planted = design.planted;
  if (planted === undefined) return { policy: inner, bank: (s) => inner.bank(s) };
  if (planted.mode === 'fact-conditioned' && decoder === undefined)
    throw new ImepError('E_INTERNAL', `design ${design.id} needs a fitted decoder`);
  const wrapper = new PlantedEffectPolicy(inner, {
    delta: planted.delta,
    mode: planted.mode,
    targets: suite.planted.targets,
    decoder: decoder?.spec ?? null,
    fromStep: task.pointStep,
    poseField: suite.planted.poseField,
    seed: suite.planted.seed,
  });
  return { policy: wrapper, bank: (s) => inner.bank(s), latchOf: (s) => wrapper.latchOf(s) };
}
