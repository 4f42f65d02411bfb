/**
 * Which envelope fields were packed as msgpack floats. msgpackr decodes the float 1.0 and the integer 1 to the
 * same JavaScript number, but PROTOCOL.md makes `v` the integer 1 and `id` a uint: a peer sending `v: 1.0` or
 * `id: 7.0` speaks something else and is refused. This reads only the top-level map's keys and the type bytes
 * of their values (skipping each value by its length, without decoding it) and stops once `v` and `id` are seen.
 */

const FLOAT32 = 0xca;
const FLOAT64 = 0xcb;

/** The byte length of the msgpack header + payload at `at` that is not itself a container's items; -1 if truncated. */
function skipOne(b: Uint8Array, at: number, pending: { n: number }): number {
  const t = b[at];
  if (t === undefined) return -1;
  const u8 = (o: number): number => b[at + o] ?? 0;
  const u16 = (o: number): number => (u8(o) << 8) | u8(o + 1);
  const u32 = (o: number): number => ((u8(o) << 24) >>> 0) + (u8(o + 1) << 16) + (u8(o + 2) << 8) + u8(o + 3);
  if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) return 1;
  if (t >= 0x80 && t <= 0x8f) return ((pending.n += 2 * (t & 0x0f)), 1);
  if (t >= 0x90 && t <= 0x9f) return ((pending.n += t & 0x0f), 1);
  if (t >= 0xa0 && t <= 0xbf) return 1 + (t & 0x1f);
  switch (t) {
    case 0xc4:
    case 0xd9:
      return 2 + u8(1);
    case 0xc5:
    case 0xda:
      return 3 + u16(1);
    case 0xc6:
    case 0xdb:
      return 5 + u32(1);
    case 0xc7:
      return 3 + u8(1);
    case 0xc8:
      return 4 + u16(1);
    case 0xc9:
      return 6 + u32(1);
    case FLOAT32:
      return 5;
    case FLOAT64:
      return 9;
    case 0xcc:
    case 0xd0:
      return 2;
    case 0xcd:
    case 0xd1:
      return 3;
    case 0xce:
    case 0xd2:
      return 5;
    case 0xcf:
    case 0xd3:
      return 9;
    case 0xd4:
      return 3;
    case 0xd5:
      return 4;
    case 0xd6:
      return 6;
    case 0xd7:
      return 10;
    case 0xd8:
      return 18;
    case 0xdc:
      return ((pending.n += u16(1)), 3);
    case 0xdd:
      return ((pending.n += u32(1)), 5);
    case 0xde:
      return ((pending.n += 2 * u16(1)), 3);
    case 0xdf:
      return ((pending.n += 2 * u32(1)), 5);
    default:
      return -1; // 0xc1 (never used)
  }
}

/** The offset just past the whole value at `at` (a container with all its items), or -1 when malformed. */
function skipValue(b: Uint8Array, at: number): number {
  const pending = { n: 1 };
  let off = at;
  while (pending.n > 0) {
    pending.n -= 1;
    const len = skipOne(b, off, pending);
    if (len < 0 || off + len > b.length) return -1;
    off += len;
  }
  return off;
}

/** The string at `at` when it is a short msgpack str (keys `v`, `id`), else undefined. */
function shortKey(b: Uint8Array, at: number): string | undefined {
  const t = b[at];
  if (t === undefined || t < 0xa0 || t > 0xa2) return undefined;
  return String.fromCharCode(...b.subarray(at + 1, at + 1 + (t & 0x1f)));
}

/** The envelope keys among `v` / `id` whose values were packed as floats (empty for a well-formed frame). */
export function floatEnvelopeFields(frame: Uint8Array): Array<'v' | 'id'> {
  const t = frame[0];
  let count: number;
  let off: number;
  if (t !== undefined && t >= 0x80 && t <= 0x8f) [count, off] = [t & 0x0f, 1];
  else if (t === 0xde) [count, off] = [((frame[1] ?? 0) << 8) | (frame[2] ?? 0), 3];
  else return []; // not a map: reported by the decoder
  const out: Array<'v' | 'id'> = [];
  let seen = 0;
  for (let i = 0; i < count && seen < 2 && off >= 0; i++) {
    const key = shortKey(frame, off);
    off = skipValue(frame, off);
    if (off < 0) break;
    if (key === 'v' || key === 'id') {
      seen += 1;
      if (frame[off] === FLOAT32 || frame[off] === FLOAT64) out.push(key);
    }
    off = skipValue(frame, off);
  }
  return out;
}
