/**
 * The TF.js backend behind the same checkpoint/contract/runtime path as ONNX: a tiny pair of layers models is
 * built here with tf.model, serialised through an in-memory save handler into checkpoint files, and run by
 * ExternalMemoryPolicy on the lite ShellGame.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { makeLiteEnvSync } from '../../src/sims/lite/registry.js';
import { sha256Hex } from '../../src/core/hash.js';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import { ExternalMemoryPolicy } from '../../src/policies/memory-policy.js';
import { slotPolicy } from '../../src/runtime/policy.js';
import { loadTf, serializeTfjsModel, type TfjsPackage } from '../../src/policies/tfjs-backend.js';
import { editManifest, imepRejection } from './helpers.js';

const K = 4,
  D = 8,
  E = 16;

function buildModels(): { encode: tf.LayersModel; act: tf.LayersModel } {
  const init = (seed: number) => tf.initializers.glorotUniform({ seed });
  const rgb = tf.input({ shape: [64, 64, 3], name: 'rgb', dtype: 'float32' });
  const pooled = tf.layers.averagePooling2d({ poolSize: 8 }).apply(rgb) as tf.SymbolicTensor;
  const flat = tf.layers.flatten().apply(pooled) as tf.SymbolicTensor;
  const enc = tf.layers
    .dense({ units: E, activation: 'relu', name: 'encoding', kernelInitializer: init(1) })
    .apply(flat) as tf.SymbolicTensor;
  const qk = tf.layers
    .dense({ units: D, name: 'query_key', kernelInitializer: init(2) })
    .apply(enc) as tf.SymbolicTensor;
  const wc = tf.layers
    .dense({ units: D, name: 'write_candidate', kernelInitializer: init(3) })
    .apply(enc) as tf.SymbolicTensor;
  const encode = tf.model({ inputs: rgb, outputs: [qk, wc, enc] });
  const encIn = tf.input({ shape: [E], name: 'encoding' });
  const pose = tf.input({ shape: [2], name: 'pose' });
  const mem = tf.input({ shape: [K, D], name: 'memory' });
  const mask = tf.input({ shape: [K], name: 'memory_mask' });
  const memFlat = tf.layers.flatten().apply(mem) as tf.SymbolicTensor;
  const cat = tf.layers.concatenate().apply([encIn, pose, memFlat, mask]) as tf.SymbolicTensor;
  const h = tf.layers
    .dense({ units: 16, activation: 'relu', kernelInitializer: init(4) })
    .apply(cat) as tf.SymbolicTensor;
  const action = tf.layers
    .dense({ units: 2, activation: 'tanh', name: 'action', kernelInitializer: init(5) })
    .apply(h) as tf.SymbolicTensor;
  const logits = tf.layers
    .dense({ units: 3, name: 'decision_logits', kernelInitializer: init(6) })
    .apply(h) as tf.SymbolicTensor;
  const act = tf.model({ inputs: [encIn, pose, mem, mask], outputs: [action, logits] });
  return { encode, act };
}

async function writeCheckpoint(): Promise<{ dir: string; models: { encode: tf.LayersModel; act: tf.LayersModel } }> {
  const models = buildModels();
  const dir = mkdtempSync(join(tmpdir(), 'imep-tfjs-'));
  const files = {
    ...(await serializeTfjsModel(tf, models.encode, 'encode')),
    ...(await serializeTfjsModel(tf, models.act, 'act')),
  };
  const listed: Record<string, { sha256: string; bytes: number }> = {};
  for (const [name, bytes] of Object.entries(files)) {
    writeFileSync(join(dir, name), bytes);
    listed[name] = { sha256: sha256Hex(bytes), bytes: bytes.length };
  }
  const manifest = {
    format: 'imep-checkpoint',
    version: 1,
    name: 'tfjs-tiny',
    description: 'test',
    backend: 'tfjs',
    graphs: {
      encode: {
        file: 'encode.tfjs.json',
        inputs: [{ name: 'rgb', role: 'observation', field: 'rgb', dtype: 'float32', shape: ['batch', 64, 64, 3] }],
        outputs: [
          { name: 'query_key', role: 'queryKey', dtype: 'float32', shape: ['batch', D] },
          { name: 'write_candidate', role: 'writeCandidate', dtype: 'float32', shape: ['batch', D] },
          { name: 'encoding', role: 'carry', dtype: 'float32', shape: ['batch', E] },
        ],
      },
      act: {
        file: 'act.tfjs.json',
        inputs: [
          { name: 'encoding', role: 'carry', dtype: 'float32', shape: ['batch', E] },
          { name: 'pose', role: 'observation', field: 'toolPosition', dtype: 'float32', shape: ['batch', 2] },
          { name: 'memory', role: 'memory', dtype: 'float32', shape: ['batch', K, D] },
          { name: 'memory_mask', role: 'memoryMask', dtype: 'float32', shape: ['batch', K] },
        ],
        outputs: [
          { name: 'action', role: 'action', dtype: 'float32', shape: ['batch', 2] },
          { name: 'decision_logits', role: 'decisionLogits', dtype: 'float32', shape: ['batch', 3] },
        ],
      },
    },
    bank: {
      kind: 'episode',
      name: 'perceptual',
      capacity: 96,
      k: K,
      consolidation: 'token-merge',
      leaf: 'feature',
      order: 'read-before-write',
    },
    files: listed,
  };
  writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest, null, 2));
  return { dir, models };
}

describe('TF.js backend', () => {
  it('loads a tiny layers-model checkpoint (pure-JS tfjs here), checks its contract and runs the memory loop', async () => {
    const { dir, models } = await writeCheckpoint();
    const ckpt = await loadCheckpoint(dir);
    expect(ckpt.report.backend).toBe('tfjs');
    expect(ckpt.report.ran).toMatch(/^@tensorflow\/tfjs(-node-gpu)?\//);
    const policy = new ExternalMemoryPolicy(ckpt, { batchSize: 2 });
    const p = slotPolicy(policy);
    const env = makeLiteEnvSync('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true });
    let r = env.resetSync({ seed: 4 });
    await p.reset({ episode: 'tfjs' });
    const first = await p.infer(r.obs);
    // Step 0 by hand: memory empty (mask 0).
    const rgb = r.obs['rgb'] as { data: Uint8Array };
    const x = tf.tensor(Float32Array.from(rgb.data), [1, 64, 64, 3]);
    const [, , e] = models.encode.predict(x) as tf.Tensor[];
    const [a, lg] = models.act.predict([
      e as tf.Tensor,
      tf.tensor([Array.from(r.obs['toolPosition'] as Float32Array)]),
      tf.zeros([1, K, D]),
      tf.zeros([1, K]),
    ]) as tf.Tensor[];
    expect(Array.from(first.action.data as Float32Array)).toEqual(Array.from(await (a as tf.Tensor).data()));
    expect(Array.from(first.readouts.decisionLogits ?? [])).toEqual(Array.from(await (lg as tf.Tensor).data()));
    let steps = 1;
    r = env.stepSync(first.action);
    while (!r.done && steps < 12) {
      const out = await p.infer(r.obs);
      expect(out.readouts.reads?.[0]?.identities.length).toBe(Math.min(steps, K));
      r = env.stepSync(out.action);
      steps++;
    }
    expect(policy.bank(0).size).toBe(steps);
    await policy.release();
  });

  it('refuses a TF.js contract mismatch and a tampered weights file like the ONNX ones', async () => {
    const a = await writeCheckpoint();
    editManifest(a.dir, (m) => {
      m.graphs.encode.inputs[0].dtype = 'uint8';
    });
    const err = await imepRejection(loadCheckpoint(a.dir));
    expect(err.field).toBe('graphs.encode.inputs[0].dtype');
    expect(err.oneLine()).toContain("declares rgb as uint8, but the graph's rgb is float32 (in encode.tfjs.json)");
    const b = await writeCheckpoint();
    writeFileSync(join(b.dir, 'act.weights.bin'), new Uint8Array(16));
    expect((await imepRejection(loadCheckpoint(b.dir))).field).toBe('files["act.weights.bin"].sha256');
  });

  it('prefers @tensorflow/tfjs-node-gpu when importable, falls back with a note, and fails when CUDA is required', async () => {
    const pure = await import('@tensorflow/tfjs');
    const without = async (s: TfjsPackage) => {
      if (s === '@tensorflow/tfjs-node-gpu') throw new Error(`Cannot find package '${s}'`);
      return pure;
    };
    const fallback = await loadTf({ importer: without });
    expect(fallback.pkg).toBe('@tensorflow/tfjs');
    expect(fallback.notes[0]).toContain('@tensorflow/tfjs-node-gpu not available');
    const withGpu = await loadTf({ importer: async () => pure });
    expect(withGpu.pkg).toBe('@tensorflow/tfjs-node-gpu');
    const err = await imepRejection(loadTf({ importer: without, require: 'cuda' }));
    expect(err.field).toBe('runtime.require');
  });
});
