/**
 * OnnxGraph reuses an input's ort.Tensor while the caller feeds the same buffer with the same shape (the memory
 * policy refills its buffers in place every step). The reuse must never serve stale contents: runs over a reused,
 * refilled buffer equal runs over fresh copies, bit for bit, and a new buffer or shape is picked up.
 */
import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import type { HostTensor } from '../../src/policies/backend.js';
import { LITE_MEMVLA } from './helpers.js';

function fill(b: Float32Array, seed: number): Float32Array {
  let x = seed >>> 0;
  for (let i = 0; i < b.length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    b[i] = x / 2 ** 32 - 0.5;
  }
  return b;
}

const hex = (t: HostTensor | undefined): string => {
  const d = t?.data as Float32Array;
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('hex');
};

describe('OnnxGraph input reuse', () => {
  it('a refilled buffer gives what a fresh copy gives; new buffers and batch sizes are picked up', async () => {
    const ckpt = await loadCheckpoint(LITE_MEMVLA);
    const act = ckpt.graphs.act;
    const feedsOf = (B: number, bufs: Float32Array[]): Record<string, HostTensor> => ({
      encoding: { dtype: 'float32', shape: [B, 32], data: bufs[0] as Float32Array },
      pose: { dtype: 'float32', shape: [B, 2], data: bufs[1] as Float32Array },
      memory: { dtype: 'float32', shape: [B, 4, 8], data: bufs[2] as Float32Array },
      memory_mask: { dtype: 'float32', shape: [B, 4], data: bufs[3] as Float32Array },
    });
    const sizes = (B: number): number[] => [B * 32, B * 2, B * 32, B * 4];
    const reused = sizes(2).map((n) => new Float32Array(n));
    const seen = new Set<string>();
    for (let step = 0; step < 4; step++) {
      reused.forEach((b, i) => fill(b, 100 * step + i));
      reused[3]?.fill(step % 2);
      const a = await act.run(feedsOf(2, reused));
      const b = await act.run(
        feedsOf(
          2,
          reused.map((x) => x.slice()),
        ),
      );
      expect(hex(a['action'])).toBe(hex(b['action']));
      expect(hex(a['decision_logits'])).toBe(hex(b['decision_logits']));
      seen.add(hex(a['action']));
    }
    expect(seen.size).toBe(4); // every refill changed the answer, so none was served stale
    // a batch of one over new buffers, then back to the batch-of-two buffers
    const one = sizes(1).map((n, i) => fill(new Float32Array(n), 7 + i));
    const r1 = await act.run(feedsOf(1, one));
    expect(r1['action']?.shape[0]).toBe(1);
    const again = await act.run(feedsOf(2, reused));
    const fresh = await act.run(
      feedsOf(
        2,
        reused.map((x) => x.slice()),
      ),
    );
    expect(hex(again['action'])).toBe(hex(fresh['action']));
    await ckpt.release();
  });

  it('an output fed to the next graph, changed by its holder in between, and one array fed under two shapes are read as they are now', async () => {
    const ckpt = await loadCheckpoint(LITE_MEMVLA);
    const { encode, act } = ckpt.graphs;
    const rgb = new Uint8Array(2 * 64 * 64 * 3);
    for (let i = 0; i < rgb.length; i++) rgb[i] = (i * 31) & 255;
    const enc = await encode.run({ rgb: { dtype: 'uint8', shape: [2, 64, 64, 3], data: rgb } });
    const encoding = enc['encoding'] as HostTensor;
    const pose = fill(new Float32Array(4), 3);
    const memory = fill(new Float32Array(64), 4);
    const mask = new Float32Array([1, 1, 0, 0, 1, 0, 0, 0]);
    const feeds = (e: Float32Array, m: Float32Array): Record<string, HostTensor> => ({
      encoding: { dtype: 'float32', shape: [2, 32], data: e },
      pose: { dtype: 'float32', shape: [2, 2], data: pose },
      memory: { dtype: 'float32', shape: [2, 4, 8], data: m },
      memory_mask: { dtype: 'float32', shape: [2, 4], data: mask },
    });
    const data = encoding.data as Float32Array;
    const first = await act.run(feeds(data, memory));
    expect(hex(first['action'])).toBe(hex((await act.run(feeds(data.slice(), memory.slice())))['action']));
    data.fill(0.25); // the holder changes the output array: the next run must see the change
    const changed = await act.run(feeds(data, memory));
    expect(hex(changed['action'])).toBe(hex((await act.run(feeds(data.slice(), memory.slice())))['action']));
    expect(hex(changed['action'])).not.toBe(hex(first['action']));
    // the memory array (64 values) fed as the encoding [2, 32] too: each input gets its own shape
    const twice = await act.run(feeds(memory, memory));
    expect(hex(twice['action'])).toBe(hex((await act.run(feeds(memory.slice(), memory.slice())))['action']));
    await ckpt.release();
  });
});
