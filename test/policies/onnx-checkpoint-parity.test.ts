/**
 * The Python checkpoint runner (sim-bridge/imep_sim_bridge/onnx_checkpoint.py, onnxruntime for Python) against
 * ExternalMemoryPolicy (onnxruntime-node), step by step, on the same observations: checkpoints/lite-memvla with its
 * bank capacity lowered to 6 (model.json is not among the files it hashes), so token-merge consolidation runs on
 * most steps of a 30-step episode; 3 slots, decision steps from elapsed step 5, every 7th frame all zeros (identical
 * frames: equal similarities). Actions, decision logits, read contexts and identities must be byte-identical, for the
 * Python runner batched as IMEP batches and one slot at a time (as the policy host serves it).
 * Needs IMEP_HOSTED_ONNX=1 and IMEP_PYTHON (a venv with onnxruntime: scripts/sims/mikasa.sh test); skipped otherwise.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import { externalMemoryPolicy } from '../../src/policies/index.js';

const ON = process.env['IMEP_HOSTED_ONNX'] === '1' && process.env['IMEP_PYTHON'] !== undefined;
const ROOT = join(import.meta.dirname, '../..');
const B = 3;
const STEPS = 30;

/** Replays the steps with the Python runner; prints one JSON line per batch size. */
const REPLAY = `
import base64, json, sys
import numpy as np
from imep_sim_bridge.onnx_checkpoint import OnnxCheckpoint
folder, steps = sys.argv[1], json.load(open(sys.argv[2]))
for per in (${B}, 1):
    c = OnnxCheckpoint(folder, max_batch=${B}, decision_step=lambda s: s >= 5)
    for s in range(${B}):
        c.reset(s, f"ep{s}")
    out = []
    for step in steps:
        reqs = [(s, {"rgb": np.frombuffer(base64.b64decode(o["rgb"]), np.uint8).reshape(64, 64, 3),
                     "toolPosition": np.array(o["pose"], np.float32)}) for s, o in enumerate(step)]
        for i in range(0, ${B}, per):
            for o in c.step(reqs[i:i + per], read=lambda slot, ctx, items: items):
                out.append({"action": base64.b64encode(o.action.tobytes()).decode(),
                            "logits": base64.b64encode(o.decision_logits.tobytes()).decode(),
                            "read": o.read_report()})
    print(json.dumps(out))
`;

describe.skipIf(!ON)(
  'onnx_checkpoint.py = ExternalMemoryPolicy, byte for byte (IMEP_HOSTED_ONNX=1, IMEP_PYTHON)',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-onnx-parity-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('gives the same actions, logits and reads through token-merge consolidation', async () => {
      const folder = join(dir, 'ckpt');
      cpSync(join(ROOT, 'checkpoints/lite-memvla'), folder, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(folder, 'model.json'), 'utf8')) as { bank: { capacity: number } };
      manifest.bank.capacity = 6;
      writeFileSync(join(folder, 'model.json'), JSON.stringify(manifest));

      const ck = await loadCheckpoint(folder, {});
      const policy = externalMemoryPolicy(ck, { batchSize: B, decisionStep: (s) => s >= 5 });
      for (let s = 0; s < B; s++) await policy.resetSlot(s, { episode: `ep${s}` } as never);
      let x = 20261205;
      const next = (): number => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
      const steps: { rgb: string; pose: number[] }[][] = [];
      const want: { action: string; logits: string; read: unknown }[] = [];
      let merges = 0;
      for (let t = 0; t < STEPS; t++) {
        const obs = Array.from({ length: B }, () => {
          const rgb = new Uint8Array(64 * 64 * 3);
          if (t % 7 !== 6) for (let i = 0; i < rgb.length; i++) rgb[i] = next() >>> 24;
          return { rgb, pose: new Float32Array([(next() >>> 8) / 2 ** 24 - 0.5, (next() >>> 8) / 2 ** 24]) };
        });
        steps.push(obs.map((o) => ({ rgb: Buffer.from(o.rgb).toString('base64'), pose: Array.from(o.pose) })));
        const outs = await policy.inferBatch(
          obs.map((o, slot) => ({
            slot,
            obs: { rgb: { dtype: 'uint8', shape: [64, 64, 3], data: o.rgb }, toolPosition: o.pose },
          })) as never,
        );
        for (const o of outs) {
          const r = o.readouts as { decisionLogits: Float32Array; reads: unknown[] };
          const a = o.action.data as Float32Array;
          want.push({
            action: Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64'),
            logits: Buffer.from(r.decisionLogits.buffer, r.decisionLogits.byteOffset, 12).toString('base64'),
            read: r.reads[0],
          });
        }
        if (policy.bank(0).size < t + 1) merges += 1;
      }
      await policy.release();
      expect(merges).toBeGreaterThan(STEPS - 8); // consolidation ran on (almost) every step past capacity

      writeFileSync(join(dir, 'steps.json'), JSON.stringify(steps));
      const r = spawnSync(process.env['IMEP_PYTHON'] as string, ['-c', REPLAY, folder, join(dir, 'steps.json')], {
        cwd: ROOT,
        env: { ...process.env, PYTHONPATH: join(ROOT, 'sim-bridge') },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      const [batched, single] = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as typeof want);
      expect(want).toHaveLength(B * STEPS);
      expect(batched).toEqual(want);
      expect(single).toEqual(want);
    }, 120_000);
  },
);
