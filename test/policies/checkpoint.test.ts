import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import { LITE_MEMVLA, copyCheckpoint, editManifest, imepRejection } from './helpers.js';

/** Loads a tampered copy and returns the one-line error. */
async function refusal(edit: (dir: string) => void) {
  const dir = copyCheckpoint(LITE_MEMVLA);
  edit(dir);
  const err = await imepRejection(loadCheckpoint(dir));
  expect(err.oneLine()).not.toContain('\n');
  return { err, dir, line: err.oneLine() };
}

describe('checkpoint loading: hashes and contract', () => {
  it('loads the committed lite checkpoint, verifies it and records where it ran', async () => {
    const ckpt = await loadCheckpoint(LITE_MEMVLA);
    try {
      expect(ckpt.manifest.name).toBe('lite-memvla');
      // Every seed of the recipe is recorded.
      expect(ckpt.manifest.training?.seeds).toMatchObject({
        torch: 1,
        numpy: 1,
        python: 1,
        demoNoise: 7,
        demoSeedFrom: 100000,
      });
      expect(ckpt.graphs.encode.signature.inputs.map((i) => i.name)).toEqual(['rgb']);
      expect(ckpt.graphs.act.signature.outputs.map((o) => o.name)).toEqual(['action', 'decision_logits']);
      // No CUDA provider in this install: the default cuda→cpu chain ran on the CPU and says why.
      expect(ckpt.report.backend).toBe('onnx');
      expect(ckpt.report.requested).toEqual(['cuda', 'cpu']);
      expect(ckpt.report.ran).toBe('cpu');
      expect(ckpt.report.notes.join(' | ')).toMatch(/cuda requested but unavailable/);
      expect(ckpt.report.cudaVisibleDevices).toBe(process.env['CUDA_VISIBLE_DEVICES'] ?? null);
      expect(Object.keys(ckpt.manifest.files).every((f) => readFileSync(join(LITE_MEMVLA, f)).length < 1_000_000)).toBe(
        true,
      );
    } finally {
      await ckpt.release();
    }
  });

  it('refuses a file whose SHA-256 differs, naming model.json and files["act.onnx"].sha256', async () => {
    const { err, dir } = await refusal((d) => {
      const f = join(d, 'act.onnx');
      const b = readFileSync(f);
      b[b.length - 5] = (b[b.length - 5] ?? 0) ^ 1;
      writeFileSync(f, b);
    });
    expect(err.code).toBe('E_CHECKPOINT_MISMATCH');
    expect(err.file).toBe(join(dir, 'model.json'));
    expect(err.field).toBe('files["act.onnx"].sha256');
    expect(err.oneLine()).toMatch(
      /model\.json: files\["act\.onnx"\]\.sha256: act\.onnx has sha256 [0-9a-f]{64}, model\.json says [0-9a-f]{64}/,
    );
  });

  it('refuses a listed file that is missing', async () => {
    const { err } = await refusal((d) => rmSync(join(d, 'encode.onnx')));
    expect(err.code).toBe('E_CHECKPOINT_MISSING');
    expect(err.field).toBe('files["encode.onnx"]');
  });

  it('refuses a missing folder or model.json', async () => {
    expect((await imepRejection(loadCheckpoint('/nonexistent/imep-ckpt'))).code).toBe('E_CHECKPOINT_MISSING');
    const { err } = await refusal((d) => rmSync(join(d, 'model.json')));
    expect(err.code).toBe('E_CHECKPOINT_MISSING');
    expect(err.file?.endsWith('model.json')).toBe(true);
  });

  it('refuses a wrong input name, naming the field and the real names', async () => {
    const { err, line } = await refusal((d) =>
      editManifest(d, (m) => {
        m.graphs.encode.inputs[0].name = 'image';
      }),
    );
    expect(err.code).toBe('E_CHECKPOINT_MISMATCH');
    expect(err.field).toBe('graphs.encode.inputs[0].name');
    expect(line).toContain('declares input "image", but the graph\'s inputs are "rgb" (in encode.onnx)');
  });

  it('refuses a wrong input dtype', async () => {
    const { err, line } = await refusal((d) =>
      editManifest(d, (m) => {
        m.graphs.encode.inputs[0].dtype = 'float32';
      }),
    );
    expect(err.field).toBe('graphs.encode.inputs[0].dtype');
    expect(line).toContain("declares rgb as float32, but the graph's rgb is uint8");
  });

  it('refuses a wrong input shape, and a fixed dimension where the graph has the batch axis', async () => {
    const a = await refusal((d) =>
      editManifest(d, (m) => {
        m.graphs.encode.inputs[0].shape = ['batch', 32, 32, 3];
      }),
    );
    expect(a.err.field).toBe('graphs.encode.inputs[0].shape');
    expect(a.line).toContain('declares rgb with shape ["batch", 32, 32, 3], but the graph\'s is ["batch", 64, 64, 3]');
    const b = await refusal((d) =>
      editManifest(d, (m) => {
        m.graphs.act.inputs[1].shape = ['batch', 3];
      }),
    );
    expect(b.err.field).toBe('graphs.act.inputs[1].shape');
  });

  it('refuses a graph output the contract does not declare, and a declared output the graph lacks', async () => {
    const a = await refusal((d) =>
      editManifest(d, (m) => {
        m.graphs.act.outputs.pop();
      }),
    );
    expect(a.err.field).toBe('graphs.act.outputs');
    expect(a.line).toContain('the graph has output "decision_logits"');
    const b = await refusal((d) =>
      editManifest(d, (m) => {
        m.graphs.act.outputs[1].name = 'logits';
      }),
    );
    expect(b.err.field).toBe('graphs.act.outputs[1].name');
  });

  it('refuses a model.json that breaks the schema or disagrees with its own bank', async () => {
    const a = await refusal((d) =>
      editManifest(d, (m) => {
        m.backend = 'pytorch';
      }),
    );
    expect(a.err.field).toBe('backend');
    const b = await refusal((d) =>
      editManifest(d, (m) => {
        m.bank.k = 5;
      }),
    );
    expect(b.err.field).toBe('graphs.act.inputs[2].shape');
    expect(b.line).toContain('memory must be [batch, k=5, d=8]');
    const c = await refusal((d) =>
      editManifest(d, (m) => {
        delete m.files['act.onnx'];
      }),
    );
    expect(c.err.field).toBe('graphs.act.file');
    const e = await refusal((d) =>
      editManifest(d, (m) => {
        m.files['encode.onnx'].sha256 = 'xyz';
      }),
    );
    expect(e.err.field).toBe('files["encode.onnx"].sha256');
    const f = await refusal((d) => writeFileSync(join(d, 'model.json'), '{ not json'));
    expect(f.err.field).toBe('(root)');
  });

  it('swapping the two graph files is caught by the contract, not silently run', async () => {
    const { err } = await refusal((d) =>
      editManifest(d, (m) => {
        m.graphs.encode.file = 'act.onnx';
        m.graphs.act.file = 'encode.onnx';
      }),
    );
    expect(err.code).toBe('E_CHECKPOINT_MISMATCH');
    expect(err.field).toBe('graphs.encode.inputs[0].name');
  });
});
