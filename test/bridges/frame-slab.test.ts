import { describe, expect, it } from 'vitest';
import { FrameSlab, SLAB_BYTES } from '../../src/bridges/frame-slab.js';

describe('FrameSlab', () => {
  it('hands out disjoint, exactly sized frames and never reuses memory of an earlier frame', () => {
    const slab = new FrameSlab();
    const frames: Buffer[] = [];
    const sizes = [49_275, 58, 49_275, 1, 100_000, 49_275];
    for (let round = 0; round < 12; round++) {
      for (const [k, size] of sizes.entries()) {
        const f = slab.alloc(size);
        expect(f.length).toBe(size);
        f.fill((round * sizes.length + k) & 0xff);
        frames.push(f);
      }
    }
    // every frame still holds what was written into it: no later frame overlapped it
    frames.forEach((f, i) => expect(f.every((b) => b === (i & 0xff))).toBe(true));
    // frames on one slab are 8-byte aligned and in order; more than one slab was used
    const buffers = new Set(frames.map((f) => f.buffer));
    expect(buffers.size).toBeGreaterThan(1);
    for (const f of frames) expect(f.byteOffset % 8).toBe(0);
  });

  it('gives a frame larger than a quarter slab its own buffer', () => {
    const slab = new FrameSlab();
    const big = slab.alloc(SLAB_BYTES / 4 + 1);
    expect(big.byteOffset).toBe(0);
    expect(big.buffer.byteLength).toBe(SLAB_BYTES / 4 + 1);
    const small = slab.alloc(10);
    expect(small.buffer).not.toBe(big.buffer);
  });
});
