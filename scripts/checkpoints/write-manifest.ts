/**
 * Writes model.json for a lite checkpoint folder produced by train.py (encode.onnx, act.onnx, train-report.json):
 * the I/O contract of the exported graphs, the bank, the SHA-256 and size of every file, and the training record
 * (recipe, seeds, hyperparameters, demonstration set). Then loads the folder through the runtime
 * (src/policies/checkpoint.ts), which checks the hashes and the contract against the real ONNX inputs/outputs;
 * on failure model.json is removed again and the script exits non-zero.
 *
 *   npx tsx scripts/checkpoints/write-manifest.ts --dir checkpoints/lite-memvla --name lite-memvla \
 *     --description "…"
 */
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ImepError, isImepError } from '../../src/core/errors.js';
import { REMEMBER_COLOR_PALETTE } from '../../src/sims/lite/remember-color.js';
import { sha256Hex } from '../../src/core/hash.js';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import { parseManifest, type CheckpointManifest } from '../../src/policies/manifest.js';

interface TrainReport {
  readonly recipe: string;
  readonly variant: 'memvla' | 'blind';
  readonly hyperparameters: { k: number; d: number; enc: number; seed: number; [key: string]: unknown };
  readonly seeds: Record<string, number>;
  readonly demos: { env: string; kwargs: Record<string, unknown>; choices: number; resolution: number; seeds: { from: number; count: number }; noise: { seed: number }; [key: string]: unknown };
  readonly [key: string]: unknown;
}

const RECIPE_FILES = ['build.sh', 'make-demos.ts', 'demo-tasks.ts', 'train.py', 'write-manifest.ts'] as const;
const RC_RECIPE_FILES = ['build.sh', 'make-demos.ts', 'demo-tasks.ts', 'train_rc.py', 'write-manifest.ts'] as const;

/** The structured PCMB bank the RememberColor checkpoints are trained for (protocols/remembercolor-substitution.yaml). */
export const RC_BANK = { capacity: 16, k: 4, gate: 0.45, mergeThreshold: 0.9, weights: { cognitive: 0.5, perceptual: 0.5 } } as const;

interface RcTrainReport {
  readonly recipe: string;
  readonly variant: 'memvla' | 'blind';
  readonly hyperparameters: { k: number; d: number; enc: number; keyDim: number; palette: number[][]; seed: number; [key: string]: unknown };
  readonly seeds: Record<string, number>;
  readonly demos: { env: string; kwargs: Record<string, unknown>; choices: number; resolution: number; seeds: { from: number; count: number }; noise: { seed: number }; [key: string]: unknown }[];
  readonly [key: string]: unknown;
}

function filesOf(dir: string): Record<string, { sha256: string; bytes: number }> {
  const files: Record<string, { sha256: string; bytes: number }> = {};
  for (const f of readdirSync(dir).sort()) {
    if (f === 'model.json' || !statSync(join(dir, f)).isFile()) continue;
    const bytes = readFileSync(join(dir, f));
    files[f] = { sha256: sha256Hex(bytes), bytes: bytes.length };
  }
  return files;
}

/** model.json of a RememberColor checkpoint from train_rc.py: structured PCMB bank, gated writes. */
export function liteRcManifest(dir: string, name: string, description: string): CheckpointManifest {
  const report = JSON.parse(readFileSync(join(dir, 'train-report.json'), 'utf8')) as RcTrainReport;
  const { k, d, enc, keyDim, palette } = report.hyperparameters;
  if (JSON.stringify(palette) !== JSON.stringify(REMEMBER_COLOR_PALETTE)) {
    throw new ImepError('E_CHECKPOINT_MISMATCH', 'train_rc.py PALETTE differs from REMEMBER_COLOR_PALETTE (src/sims/lite/remember-color.ts)', { file: join(dir, 'train-report.json'), field: 'hyperparameters.palette' });
  }
  const first = report.demos[0];
  if (first === undefined) throw new ImepError('E_CHECKPOINT_MISMATCH', 'no demonstration sets', { file: join(dir, 'train-report.json'), field: 'demos' });
  const res = first.resolution;
  const manifest = {
    format: 'imep-checkpoint',
    version: 1,
    name,
    description,
    backend: 'onnx',
    task: { env: report.demos.map((x) => x.env).join(' | '), kwargs: first.kwargs },
    graphs: {
      encode: {
        file: 'encode.onnx',
        inputs: [{ name: 'rgb', role: 'observation', field: 'rgb', dtype: 'uint8', shape: ['batch', res, res, 3] }],
        outputs: [
          { name: 'query_key', role: 'queryKey', dtype: 'float32', shape: ['batch', keyDim] },
          { name: 'write_candidate', role: 'writeCandidate', dtype: 'float32', shape: ['batch', d] },
          { name: 'write_gate', role: 'writeGate', dtype: 'float32', shape: ['batch', 1] },
          { name: 'encoding', role: 'carry', dtype: 'float32', shape: ['batch', enc] },
        ],
      },
      act: {
        file: 'act.onnx',
        inputs: [
          { name: 'encoding', role: 'carry', dtype: 'float32', shape: ['batch', enc] },
          { name: 'rgb', role: 'observation', field: 'rgb', dtype: 'uint8', shape: ['batch', res, res, 3] },
          { name: 'pose', role: 'observation', field: 'toolPosition', dtype: 'float32', shape: ['batch', 2] },
          { name: 'memory', role: 'memory', dtype: 'float32', shape: ['batch', k, d] },
          { name: 'memory_mask', role: 'memoryMask', dtype: 'float32', shape: ['batch', k] },
        ],
        outputs: [
          { name: 'action', role: 'action', dtype: 'float32', shape: ['batch', 2] },
          { name: 'decision_logits', role: 'decisionLogits', dtype: 'float32', shape: ['batch', palette.length] },
        ],
      },
    },
    bank: { kind: 'structured-pcmb', name: 'pcmb', ...RC_BANK, k, leaf: 'cognitiveValue', keys: 'queryKey', write: 'gated', order: 'read-before-write' },
    files: filesOf(dir),
    training: {
      recipe: 'scripts/checkpoints/build.sh (make-demos.ts → train_rc.py → write-manifest.ts)',
      recipeFiles: Object.fromEntries(RC_RECIPE_FILES.map((f) => [f, sha256Hex(readFileSync(join(import.meta.dirname, f)))])),
      variant: report.variant,
      memoryInputs:
        report.variant === 'blind'
          ? 'zeroed during training; the memory weight (decision head) initialised to zero and never updated'
          : 'the cue-frame record of the structured bank (the write candidate of a cue frame, 1 or 2 rows)',
      seeds: { ...report.seeds, demoNoise: first.noise.seed, ...Object.fromEntries(report.demos.map((x) => [`demoSeedFrom:${x.env}`, x.seeds.from])) },
      hyperparameters: report.hyperparameters,
      demos: report.demos,
      final: report['final'],
      torch: report['torch'],
    },
  };
  return parseManifest(manifest, join(dir, 'model.json'));
}

/** Capacity of the episode bank: at least the longest lite episode (90 steps), so it never consolidates. */
export const LITE_BANK_CAPACITY = 96;

export function liteManifest(dir: string, name: string, description: string): CheckpointManifest {
  const report = JSON.parse(readFileSync(join(dir, 'train-report.json'), 'utf8')) as TrainReport;
  const { k, d, enc } = report.hyperparameters;
  const { choices, resolution: res } = report.demos;
  const files = filesOf(dir);
  const manifest = {
    format: 'imep-checkpoint',
    version: 1,
    name,
    description,
    backend: 'onnx',
    task: { env: report.demos.env, kwargs: report.demos.kwargs },
    graphs: {
      encode: {
        file: 'encode.onnx',
        inputs: [{ name: 'rgb', role: 'observation', field: 'rgb', dtype: 'uint8', shape: ['batch', res, res, 3] }],
        outputs: [
          { name: 'query_key', role: 'queryKey', dtype: 'float32', shape: ['batch', d] },
          { name: 'write_candidate', role: 'writeCandidate', dtype: 'float32', shape: ['batch', d] },
          { name: 'encoding', role: 'carry', dtype: 'float32', shape: ['batch', enc] },
        ],
      },
      act: {
        file: 'act.onnx',
        inputs: [
          { name: 'encoding', role: 'carry', dtype: 'float32', shape: ['batch', enc] },
          { name: 'pose', role: 'observation', field: 'toolPosition', dtype: 'float32', shape: ['batch', 2] },
          { name: 'memory', role: 'memory', dtype: 'float32', shape: ['batch', k, d] },
          { name: 'memory_mask', role: 'memoryMask', dtype: 'float32', shape: ['batch', k] },
        ],
        outputs: [
          { name: 'action', role: 'action', dtype: 'float32', shape: ['batch', 2] },
          { name: 'decision_logits', role: 'decisionLogits', dtype: 'float32', shape: ['batch', choices] },
        ],
      },
    },
    bank: { kind: 'episode', name: 'perceptual', capacity: LITE_BANK_CAPACITY, k, consolidation: 'token-merge', leaf: 'feature', order: 'read-before-write' },
    files,
    training: {
      recipe: 'scripts/checkpoints/build.sh (make-demos.ts → train.py → write-manifest.ts)',
      /** SHA-256 of the recipe files when model.json was written. */
      recipeFiles: Object.fromEntries(
        RECIPE_FILES.map((f) => [f, sha256Hex(readFileSync(join(import.meta.dirname, f)))]),
      ),
      variant: report.variant,
      memoryInputs: report.variant === 'blind' ? 'zeroed during training; memory weights initialised to zero and never updated' : 'bank reads (read-before-write top-k), blocked in a fraction of episodes',
      seeds: { ...report.seeds, demoNoise: report.demos.noise.seed, demoSeedFrom: report.demos.seeds.from },
      demoSeeds: report.demos.seeds,
      hyperparameters: report.hyperparameters,
      demos: report.demos,
      final: report['final'],
      torch: report['torch'],
      seconds: report['seconds'],
    },
  };
  return parseManifest(manifest, join(dir, 'model.json'));
}

interface StateTrainReport {
  readonly recipe: string;
  readonly task: string;
  readonly variant: 'memvla' | 'blind';
  readonly contract: {
    encodeFields: [string, number[]][];
    actFields: [string, number[]][];
    actionDim: number;
    choices: number;
    capacity: number;
    opset: number;
  };
  readonly hyperparameters: { k: number; d: number; enc: number; seed: number; [key: string]: unknown };
  readonly seeds: Record<string, number>;
  readonly demos: { env: string; kwargs: Record<string, unknown>; [key: string]: unknown };
  readonly [key: string]: unknown;
}

const STATE_RECIPE_FILES = [
  'record-real-demos.sh',
  'train_state.py',
  'state_demos.py',
  'state_model.py',
  'train.py',
  'write-manifest.ts',
  'build-real.sh',
] as const;

/** model.json of a real-simulator state checkpoint from train_state.py: episode bank, attention read in act. */
export function stateManifest(dir: string, name: string, description: string): CheckpointManifest {
  const report = JSON.parse(readFileSync(join(dir, 'train-report.json'), 'utf8')) as StateTrainReport;
  const { k, d, enc } = report.hyperparameters;
  const c = report.contract;
  const obs = ([field, shape]: [string, number[]]) => ({
    name: field,
    role: 'observation',
    field,
    dtype: 'float32',
    shape: ['batch', ...shape],
  });
  const manifest = {
    format: 'imep-checkpoint',
    version: 1,
    name,
    description,
    backend: 'onnx',
    task: { env: report.demos.env, kwargs: report.demos.kwargs },
    graphs: {
      encode: {
        file: 'encode.onnx',
        inputs: c.encodeFields.map(obs),
        outputs: [
          { name: 'query_key', role: 'queryKey', dtype: 'float32', shape: ['batch', d] },
          { name: 'write_candidate', role: 'writeCandidate', dtype: 'float32', shape: ['batch', d] },
          { name: 'encoding', role: 'carry', dtype: 'float32', shape: ['batch', enc] },
        ],
      },
      act: {
        file: 'act.onnx',
        inputs: [
          { name: 'encoding', role: 'carry', dtype: 'float32', shape: ['batch', enc] },
          ...c.actFields.map(obs),
          { name: 'memory', role: 'memory', dtype: 'float32', shape: ['batch', k, d] },
          { name: 'memory_mask', role: 'memoryMask', dtype: 'float32', shape: ['batch', k] },
        ],
        outputs: [
          { name: 'action', role: 'action', dtype: 'float32', shape: ['batch', c.actionDim] },
          { name: 'decision_logits', role: 'decisionLogits', dtype: 'float32', shape: ['batch', c.choices] },
        ],
      },
    },
    bank: { kind: 'episode', name: 'perceptual', capacity: c.capacity, k, consolidation: 'token-merge', leaf: 'feature', order: 'read-before-write' },
    files: filesOf(dir),
    training: {
      recipe: 'scripts/checkpoints/build-real.sh (record-real-demos.sh → train_state.py → write-manifest.ts)',
      recipeFiles: Object.fromEntries(
        STATE_RECIPE_FILES.filter((f) => existsSync(join(import.meta.dirname, f))).map((f) => [f, sha256Hex(readFileSync(join(import.meta.dirname, f)))]),
      ),
      task: report.task,
      variant: report.variant,
      memoryInputs:
        report.variant === 'blind'
          ? 'blocked in every training episode (memory_mask 0); the decision head memory weight initialised to zero and frozen'
          : 'bank reads (read-before-write top-k by cosine), read by attention in act',
      seeds: report.seeds,
      hyperparameters: report.hyperparameters,
      demos: report.demos,
      final: report['final'],
      parity: report['parity'],
      torch: report['torch'],
    },
  };
  return parseManifest(manifest, join(dir, 'model.json'));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dir: { type: 'string' }, name: { type: 'string' }, description: { type: 'string', default: '' } } });
  if (values.dir === undefined || values.name === undefined) throw new Error('write-manifest: --dir and --name are required');
  const file = join(values.dir, 'model.json');
  const recipe = (JSON.parse(readFileSync(join(values.dir, 'train-report.json'), 'utf8')) as { recipe?: string }).recipe;
  const build =
    recipe === 'scripts/checkpoints/train_rc.py'
      ? liteRcManifest
      : recipe === 'scripts/checkpoints/train_state.py'
        ? stateManifest
        : liteManifest;
  const manifest = build(values.dir, values.name, values.description ?? '');
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  try {
    const ckpt = await loadCheckpoint(values.dir);
    console.log(`write-manifest: ${file} verified (${Object.keys(manifest.files).length} files, ran on ${ckpt.report.ran})`);
    await ckpt.release();
  } catch (e) {
    rmSync(file, { force: true });
    console.error(`write-manifest: ${isImepError(e) ? e.oneLine() : String(e)}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
