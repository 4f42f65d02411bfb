/**
 * The bridge's msgpack encoder for outgoing frames. Two passes over a value already prepared by
 * `toWire` (nil, booleans, numbers, bigints, strings, arrays, plain maps, ndarrays): measure, then
 * write into one exactly sized buffer, so every element byte of an ndarray is copied once, straight
 * from the array, and each frame is its own allocation (ZeroMQ sends frames over 128 bytes zero-copy
 * and holds them until sent). It keeps no state between calls (msgpackr's packers share one
 * process-wide output buffer, which a reused scratch buffer would corrupt for its other users).
 *
 * Formats: integers in the smallest int format (up to uint64 / int64: safe integers beyond 32 bits
 * are integers, not floats); other numbers float64; strings str; maps / arrays with fix / 16 / 32
 * headers; ndarrays as ext 8 / 16 / 32 type 17 (never fixext, as msgpackr's encoder does for them too).
 */
import { DTYPES, NDARRAY_EXT_TYPE, WireNdArray, type Dtype } from './ndarray-codec.js';

/** Thrown for a value `toWire` would not produce. */
export class MsgpackWriteError extends Error {}

const MAX_32 = 0xffffffff;

function intSize(v: number): number {
  if (v >= 0) return v < 0x80 ? 1 : v <= 0xff ? 2 : v <= 0xffff ? 3 : v <= MAX_32 ? 5 : 9;
  return v >= -32 ? 1 : v >= -0x80 ? 2 : v >= -0x8000 ? 3 : v >= -0x80000000 ? 5 : 9;
}

function headerSize(n: number, fixLimit: number): number {
  return n < fixLimit ? 1 : n <= 0xffff ? 3 : 5;
}

function ndPayload(a: WireNdArray): number {
  return 4 + 4 * a.shape.length + a.data.byteLength;
}

function extHeader(len: number): number {
  return len <= 0xff ? 3 : len <= 0xffff ? 4 : 6;
}

function sizeOf(v: unknown): number {
  switch (typeof v) {
    case 'boolean':
      return 1;
    case 'number':
      return Number.isSafeInteger(v) ? intSize(v) : 9;
    case 'bigint':
      return 9;
    case 'string': {
      const n = Buffer.byteLength(v, 'utf8');
      return (n < 32 ? 1 : n <= 0xff ? 2 : n <= 0xffff ? 3 : 5) + n;
    }
    case 'object': {
      if (v === null) return 1;
      if (v instanceof WireNdArray) {
        const len = ndPayload(v);
        return extHeader(len) + len;
      }
      if (Array.isArray(v)) {
        let n = headerSize(v.length, 16);
        for (const x of v) n += sizeOf(x);
        return n;
      }
      const keys = Object.keys(v);
      let n = headerSize(keys.length, 16);
      for (const k of keys) n += sizeOf(k) + sizeOf((v as Record<string, unknown>)[k]);
      return n;
    }
    default:
      throw new MsgpackWriteError(`cannot encode a ${typeof v}`);
  }
}

class Writer {
  pos = 0;
  readonly view: DataView;
  constructor(readonly buf: Buffer) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  byte(b: number): void {
    this.buf[this.pos++] = b;
  }

  header(n: number, fix: number, fixLimit: number, t16: number, t32: number): void {
    if (n < fixLimit) this.byte(fix | n);
    else if (n <= 0xffff) {
      this.byte(t16);
      this.view.setUint16(this.pos, n);
      this.pos += 2;
    } else {
      this.byte(t32);
      this.view.setUint32(this.pos, n);
      this.pos += 4;
    }
  }

  int(v: number): void {
    const { view } = this;
    if (v >= 0) {
      if (v < 0x80) return this.byte(v);
      if (v <= 0xff) return (this.byte(0xcc), this.byte(v));
      if (v <= 0xffff) return (this.byte(0xcd), view.setUint16(this.pos, v), void (this.pos += 2));
      if (v <= MAX_32) return (this.byte(0xce), view.setUint32(this.pos, v), void (this.pos += 4));
      this.byte(0xcf);
      view.setBigUint64(this.pos, BigInt(v));
      this.pos += 8;
      return;
    }
    if (v >= -32) return this.byte(v & 0xff);
    if (v >= -0x80) return (this.byte(0xd0), view.setInt8(this.pos, v), void (this.pos += 1));
    if (v >= -0x8000) return (this.byte(0xd1), view.setInt16(this.pos, v), void (this.pos += 2));
    if (v >= -0x80000000) return (this.byte(0xd2), view.setInt32(this.pos, v), void (this.pos += 4));
    this.byte(0xd3);
    view.setBigInt64(this.pos, BigInt(v));
    this.pos += 8;
  }

  value(v: unknown): void {
    switch (typeof v) {
      case 'boolean':
        return this.byte(v ? 0xc3 : 0xc2);
      case 'number':
        if (Number.isSafeInteger(v)) return this.int(v);
        this.byte(0xcb);
        this.view.setFloat64(this.pos, v);
        this.pos += 8;
        return;
      case 'bigint':
        if (v >= 0n) {
          this.byte(0xcf);
          this.view.setBigUint64(this.pos, v);
        } else {
          this.byte(0xd3);
          this.view.setBigInt64(this.pos, v);
        }
        this.pos += 8;
        return;
      case 'string': {
        const n = Buffer.byteLength(v, 'utf8');
        if (n < 32) this.byte(0xa0 | n);
        else if (n <= 0xff) (this.byte(0xd9), this.byte(n));
        else this.header(n, 0, 0, 0xda, 0xdb);
        this.pos += this.buf.write(v, this.pos, n, 'utf8');
        return;
      }
      case 'object':
        if (v === null) return this.byte(0xc0);
        if (v instanceof WireNdArray) return this.ndarray(v);
        if (Array.isArray(v)) {
          this.header(v.length, 0x90, 16, 0xdc, 0xdd);
          for (const x of v) this.value(x);
          return;
        }
        {
          const keys = Object.keys(v);
          this.header(keys.length, 0x80, 16, 0xde, 0xdf);
          for (const k of keys) {
            this.value(k);
            this.value((v as Record<string, unknown>)[k]);
          }
        }
        return;
      default:
        throw new MsgpackWriteError(`cannot encode a ${typeof v}`);
    }
  }

  ndarray(a: WireNdArray): void {
    // a WireNdArray was checked when it was made (its constructor, or the decoder); sizeOf used the same fields
    const len = ndPayload(a);
    if (len <= 0xff) (this.byte(0xc7), this.byte(len));
    else this.header(len, 0, 0, 0xc8, 0xc9);
    this.byte(NDARRAY_EXT_TYPE);
    this.byte(1);
    this.byte(DTYPES[a.dtype as Dtype].code);
    this.byte(a.shape.length);
    this.byte(0);
    for (const d of a.shape) {
      this.view.setUint32(this.pos, d, true);
      this.pos += 4;
    }
    this.buf.set(new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength), this.pos);
    this.pos += a.data.byteLength;
  }
}

/** Where a frame's bytes come from: by default each frame of 4 kB or more gets its own buffer. */
export type FrameAllocator = (size: number) => Buffer;

const defaultAlloc: FrameAllocator = (size) => (size < 4096 ? Buffer.allocUnsafe(size) : Buffer.allocUnsafeSlow(size));

/** Encodes a `toWire`-prepared value into one exactly sized frame. */
export function encodeFrame(value: unknown, alloc: FrameAllocator = defaultAlloc): Buffer {
  const size = sizeOf(value);
  const buf = alloc(size);
  const w = new Writer(buf);
  w.value(value);
  if (w.pos !== size) throw new MsgpackWriteError(`internal: wrote ${w.pos} bytes, measured ${size}`);
  return buf;
}
