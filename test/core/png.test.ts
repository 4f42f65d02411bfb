/** src/core/png.ts: a valid 8-bit RGB PNG (signature, IHDR, CRCs, filter-0 rows in IDAT) and nearest-neighbour downsampling. */
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, downsampleRgb, encodePngRgb } from '../../src/core/png.js';

function chunks(png: Buffer): { type: string; data: Buffer; crc: number }[] {
  const out: { type: string; data: Buffer; crc: number }[] = [];
  for (let o = 8; o < png.length;) {
    const len = png.readUInt32BE(o);
    out.push({
      type: png.toString('ascii', o + 4, o + 8),
      data: png.subarray(o + 8, o + 8 + len),
      crc: png.readUInt32BE(o + 8 + len),
    });
    o += 12 + len;
  }
  return out;
}

describe('encodePngRgb', () => {
  it('writes the signature, IHDR, one IDAT of filter-0 rows and IEND, each with its CRC-32', () => {
    const rgb = Uint8Array.from({ length: 3 * 2 * 3 }, (_, i) => (i * 37) % 256);
    const png = encodePngRgb(3, 2, rgb);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const cs = chunks(png);
    expect(cs.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    for (const c of cs) expect(c.crc).toBe((crc32(c.data, crc32(Buffer.from(c.type, 'ascii'))) ^ 0xffffffff) >>> 0);
    const ihdr = cs[0]!.data;
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9], ihdr[10], ihdr[11], ihdr[12]]).toEqual([
      3, 2, 8, 2, 0, 0, 0,
    ]);
    const raw = inflateSync(cs[1]!.data);
    expect([...raw]).toEqual([0, ...rgb.subarray(0, 9), 0, ...rgb.subarray(9)]);
    // the same pixels, the same bytes
    expect(encodePngRgb(3, 2, rgb).equals(png)).toBe(true);
  });

  it('crc32 of "123456789" is the standard check value', () => {
    expect((crc32(Buffer.from('123456789')) ^ 0xffffffff) >>> 0).toBe(0xcbf43926);
  });

  it('refuses a size that does not match the data', () => {
    expect(() => encodePngRgb(2, 2, new Uint8Array(11))).toThrow(/expected 12/);
  });

  it('downsampleRgb keeps every k-th pixel', () => {
    const rgb = Uint8Array.from({ length: 4 * 4 * 3 }, (_, i) => i);
    const d = downsampleRgb(4, 4, rgb, 2);
    expect([d.width, d.height]).toEqual([2, 2]);
    expect([...d.rgb]).toEqual([0, 1, 2, 6, 7, 8, 24, 25, 26, 30, 31, 32]);
  });
});
