import { describe, expect, it } from 'vitest';
import {
  COLORS,
  FrameAllocator,
  Raster,
  colorCentroid,
  pixelToWorldX,
  pixelToWorldY,
} from '../../../src/sims/lite/render.js';

function count(r: Raster, c: readonly [number, number, number]): number {
  let n = 0;
  for (let k = 0; k < r.data.length; k += 3)
    if (r.data[k] === c[0] && r.data[k + 1] === c[1] && r.data[k + 2] === c[2]) n++;
  return n;
}

describe('Raster', () => {
  it('clears every pixel to the colour (including non-grey colours)', () => {
    const r = new Raster(5, 3).clear([1, 2, 3]);
    expect(r.data.length).toBe(45);
    expect(count(r, [1, 2, 3])).toBe(15);
  });

  it('fills exactly the pixels whose centres lie in a rectangle', () => {
    // 8×8: pixel centres at x = -0.875, -0.625, ..., 0.875.
    const r = new Raster(8).clear(COLORS.table).fillRect(-0.5, -0.5, 0.5, 0.5, [9, 9, 9]);
    // centres in [-0.5, 0.5]: -0.375, -0.125, 0.125, 0.375 → 4 columns × 4 rows.
    expect(count(r, [9, 9, 9])).toBe(16);
    // top-left filled pixel is (col 2, row 2)
    const k = (2 * 8 + 2) * 3;
    expect([r.data[k], r.data[k + 1], r.data[k + 2]]).toEqual([9, 9, 9]);
    expect(r.data[(1 * 8 + 2) * 3]).toBe(COLORS.table[0]);
  });

  it('fills a disc whose pixel count matches the pixel-centre test', () => {
    const size = 64,
      cx = 0.13,
      cy = -0.21,
      rad = 0.3;
    const r = new Raster(size).clear([0, 0, 0]).fillCircle(cx, cy, rad, [255, 1, 2]);
    let expected = 0;
    for (let j = 0; j < size; j++) {
      for (let i = 0; i < size; i++) {
        const x = pixelToWorldX(i, size),
          y = pixelToWorldY(j, size);
        if ((x - cx) ** 2 + (y - cy) ** 2 <= rad * rad) expected++;
      }
    }
    expect(expected).toBeGreaterThan(200);
    expect(count(r, [255, 1, 2])).toBe(expected);
  });

  it('clips shapes at the frame border and never writes outside', () => {
    const r = new Raster(16)
      .clear([0, 0, 0])
      .fillCircle(0.99, 0.99, 0.5, [7, 7, 7])
      .fillRect(-3, -3, -0.9, 3, [8, 8, 8]);
    expect(r.data.length).toBe(16 * 16 * 3);
    expect(count(r, [7, 7, 7])).toBeGreaterThan(0);
    expect(count(r, [8, 8, 8])).toBe(16); // one column (centre −0.9375) × 16 rows
  });

  it('locates a colour by its centroid in world coordinates', () => {
    const r = new Raster(64).clear(COLORS.table).fillCircle(0.4, -0.3, 0.1, COLORS.ball);
    const c = colorCentroid(r.data, 64, 64, COLORS.ball);
    expect(c).not.toBeNull();
    expect(c?.x).toBeCloseTo(0.4, 1);
    expect(c?.y).toBeCloseTo(-0.3, 1);
    expect(colorCentroid(r.data, 64, 64, [1, 2, 3])).toBeNull();
  });
});

describe('FrameAllocator', () => {
  it('hands out zeroed, non-overlapping frames, starting a new slab when one is full', () => {
    const a = new FrameAllocator(6, 3);
    const frames = Array.from({ length: 7 }, () => a.next());
    expect(frames.map((f) => [f.length, f.byteOffset])).toEqual([
      [6, 0],
      [6, 6],
      [6, 12],
      [6, 0],
      [6, 6],
      [6, 12],
      [6, 0],
    ]);
    expect(frames[0]?.buffer).toBe(frames[2]?.buffer);
    expect(frames[3]?.buffer).not.toBe(frames[2]?.buffer);
    expect(frames.every((f) => f.every((v) => v === 0))).toBe(true);
    frames.forEach((f, i) => f.fill(i + 1));
    // writing one frame never touches another
    expect(frames.map((f) => Array.from(new Set(f)))).toEqual([[1], [2], [3], [4], [5], [6], [7]]);
  });

  it('copyOf copies the bytes into a fresh frame and refuses a wrong length', () => {
    const a = new FrameAllocator(4, 2);
    const src = Uint8Array.of(1, 2, 3, 4);
    const c = a.copyOf(src);
    src[0] = 9;
    expect(Array.from(c)).toEqual([1, 2, 3, 4]);
    expect(() => a.copyOf(Uint8Array.of(1, 2))).toThrow(/2 bytes/);
    expect(() => new FrameAllocator(0)).toThrow(/frame size/);
    expect(() => new FrameAllocator(4, 0)).toThrow(/slab size/);
  });

  it('sizes slabs to about 64 KiB: 5 frames of 64×64×3, one of 128×128×3', () => {
    const lengths = (a: FrameAllocator, n: number): number[] =>
      Array.from({ length: n }, () => a.next().buffer.byteLength);
    expect(lengths(new FrameAllocator(64 * 64 * 3), 1)).toEqual([5 * 64 * 64 * 3]);
    expect(lengths(new FrameAllocator(128 * 128 * 3), 2)).toEqual([128 * 128 * 3, 128 * 128 * 3]);
  });
});
