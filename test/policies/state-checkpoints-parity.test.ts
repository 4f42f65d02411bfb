/**
 * The real-simulator checkpoints (scripts/checkpoints/train_state.py, torch 2.13.0 → ONNX opset 17): ONNX Runtime in
 * IMEP (onnxruntime-node, through loadCheckpoint, which verifies every file's SHA-256 first) computes what torch
 * computed on held-out observations, within 1e-5 on every output. parity.json holds the inputs (observations of the
 * validation episodes, memory as the runtime retrieves it) and torch's outputs, written at training time; it is one of
 * the files model.json hashes, so it cannot drift from the weights.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HostTensor, LoadedCheckpoint } from '../../src/policies/index.js';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';

const ROOT = join(import.meta.dirname, '..', '..', 'checkpoints');
const STATE_CHECKPOINTS = ['mikasa-rc3-memvla', 'mikasa-rc3-blind', 'libero-drawer-memvla', 'libero-drawer-blind'];

interface Packed {
  readonly shape: number[];
  readonly data: string;
}
interface ParityDoc {
  readonly tolerance: number;
  readonly rows: number;
  readonly encode: { inputs: Record<string, Packed>; outputs: Record<string, Packed> };
  readonly act: { inputs: Record<string, Packed>; outputs: Record<string, Packed> };
}

function f32(p: Packed): Float32Array {
  const b = Buffer.from(p.data, 'base64');
  const out = new Float32Array(b.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(4 * i);
  expect(out.length).toBe(p.shape.reduce((a, d) => a * d, 1));
  return out;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

const loaded: LoadedCheckpoint[] = [];
afterAll(async () => {
  for (const c of loaded) await c.release();
});

describe('real-simulator checkpoints: ONNX Runtime (node) = torch within 1e-5 on held-out observations', () => {
  it('every state checkpoint folder is committed with a parity.json listed in model.json', () => {
    const present = readdirSync(ROOT).filter((d) => existsSync(join(ROOT, d, 'parity.json')));
    expect(present.sort()).toEqual([...STATE_CHECKPOINTS].sort());
    for (const name of STATE_CHECKPOINTS) {
      const manifest = JSON.parse(readFileSync(join(ROOT, name, 'model.json'), 'utf8')) as {
        files: Record<string, unknown>;
      };
      expect(Object.keys(manifest.files)).toContain('parity.json');
    }
  });

  for (const name of STATE_CHECKPOINTS) {
    it(`${name}: encode and act outputs within the recorded tolerance (1e-5)`, async () => {
      const ckpt = await loadCheckpoint(join(ROOT, name), { onnx: { providers: ['cpu'] } });
      loaded.push(ckpt);
      const doc = JSON.parse(readFileSync(join(ROOT, name, 'parity.json'), 'utf8')) as ParityDoc;
      expect(doc.tolerance).toBe(1e-5);
      expect(doc.rows).toBeGreaterThanOrEqual(32);
      for (const graph of ['encode', 'act'] as const) {
        const feeds: Record<string, HostTensor> = {};
        for (const [input, p] of Object.entries(doc[graph].inputs))
          feeds[input] = { dtype: 'float32', shape: p.shape, data: f32(p) };
        const got = await ckpt.graphs[graph].run(feeds);
        for (const [output, p] of Object.entries(doc[graph].outputs)) {
          const g = got[output];
          expect(g, `${name} ${graph} output ${output}`).toBeDefined();
          expect([...(g as HostTensor).shape]).toEqual(p.shape);
          const d = maxAbsDiff((g as HostTensor).data as Float32Array, f32(p));
          expect(d, `${name} ${graph}.${output}: max |onnxruntime-node − torch|`).toBeLessThanOrEqual(doc.tolerance);
        }
      }
      // the outputs are not trivially equal: the act graph's decisions vary over the held-out rows
      const logits = f32(doc.act.outputs['decision_logits'] as Packed);
      expect(new Set(Array.from(logits).map((v) => v.toFixed(3))).size).toBeGreaterThan(1);
    });
  }
});
