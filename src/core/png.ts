/**
 * A minimal PNG encoder for 8-bit RGB images (colour type 2, no interlace, filter 0 on every row), on
 * node:zlib's deflate at a fixed level: the same pixels give the same bytes on every machine with the
 * same zlib. Pure apart from zlib; no dependency.
 */
import { deflateSync } from 'node:zlib';

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes: Uint8Array, start = 0xffffffff): number {
  let c = start;
  for (let i = 0; i < bytes.length; i++) c = (CRC_TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return c;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE((crc32(data, crc32(head.subarray(4))) ^ 0xffffffff) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** Encodes `rgb` (row-major, 3 bytes per pixel, length width × height × 3) as a PNG file. */
export function encodePngRgb(width: number, height: number, rgb: Uint8Array): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new RangeError(`bad PNG size ${width}×${height}`);
  if (rgb.length !== width * height * 3)
    throw new RangeError(`PNG data holds ${rgb.length} bytes, expected ${width * height * 3}`);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const stride = width * 3;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) raw.set(rgb.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  const idat = deflateSync(raw, { level: 9 });
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', new Uint8Array(0))]);
}

/** Keeps every k-th pixel of an RGB image in each direction (nearest neighbour). */
export function downsampleRgb(
  width: number,
  height: number,
  rgb: Uint8Array,
  k: number,
): { width: number; height: number; rgb: Uint8Array } {
  if (k === 1) return { width, height, rgb: Uint8Array.from(rgb) };
  const w = Math.ceil(width / k);
  const h = Math.ceil(height / k);
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const src = (y * k * width + x * k) * 3;
      out.set(rgb.subarray(src, src + 3), (y * w + x) * 3);
    }
  return { width: w, height: h, rgb: out };
}
