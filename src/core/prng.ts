/**
 * The named, versioned PRNG used for every random draw in IMEP (bootstrap, permutation, power,
 * interventions, donor assignment, lite simulators).
 *
 * Name: `xoshiro128**` version 1. State: four uint32 words, seeded by splitmix32 from a 32-bit seed,
 * or from a string/bigint seed through FNV-1a/64 folded to 32 bits. A recorded `{ name, version, seed }`
 * reproduces every draw bit for bit; changing any algorithm here requires bumping PRNG_VERSION.
 */
export const PRNG_NAME = 'xoshiro128**';
export const PRNG_VERSION = 1;

export type Seed = number | string;

export interface PrngSpec {
  readonly name: typeof PRNG_NAME;
  readonly version: typeof PRNG_VERSION;
  readonly seed: Seed;
}

const utf8 = new TextEncoder();

function fnv1a32(text: string): number {
  // FNV-1a 64-bit over UTF-8 bytes, folded (xor of halves) to 32 bits. The 64-bit state is kept as two
  // uint32 halves (hi, lo): h · 0x100000001b3 mod 2^64 = h · 0x1b3 + (h << 40), i.e.
  //   lo' = lo · 0x1b3 mod 2^32,  hi' = hi · 0x1b3 + ⌊lo · 0x1b3 / 2^32⌋ + (lo << 8)  mod 2^32
  // (lo · 0x1b3 < 2^41 is exact in a double) — the same value as BigInt arithmetic, without allocating.
  // ASCII text is its own UTF-8; anything else goes through TextEncoder (lone surrogates become U+FFFD).
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  const bytes = ascii ? null : utf8.encode(text);
  const n = bytes === null ? text.length : bytes.length;
  for (let i = 0; i < n; i++) {
    lo = (lo ^ (bytes === null ? text.charCodeAt(i) : (bytes[i] as number))) >>> 0;
    const p = lo * 0x1b3;
    hi = (Math.imul(hi, 0x1b3) + Math.floor(p / 4294967296) + (lo << 8)) >>> 0;
    lo = p >>> 0;
  }
  return (hi ^ lo) >>> 0;
}

/** Normalises any seed to a uint32. Non-integer or out-of-range numbers are hashed as strings. */
export function seedToUint32(seed: Seed): number {
  if (typeof seed === 'number' && Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff) return seed >>> 0;
  return fnv1a32(`${typeof seed}:${String(seed)}`);
}

export class Prng {
  readonly spec: PrngSpec;
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  private spareNormal: number | undefined;

  constructor(seed: Seed) {
    this.spec = { name: PRNG_NAME, version: PRNG_VERSION, seed };
    let x = seedToUint32(seed);
    const next = (): number => {
      // splitmix32
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** A child stream, deterministic in (parent seed, label); does not advance this stream. */
  fork(label: string | number): Prng {
    return new Prng(`${String(this.spec.seed)}/${String(label)}`);
  }

  /** Next uint32. */
  nextUint32(): number {
    const s0 = this.s0,
      s1 = this.s1,
      s2 = this.s2,
      s3 = this.s3;
    const m = Math.imul(s1, 5);
    const r = Math.imul((m << 7) | (m >>> 25), 9) >>> 0;
    const t = s1 << 9;
    let n2 = s2 ^ s0;
    let n3 = s3 ^ s1;
    const n1 = s1 ^ n2;
    const n0 = s0 ^ n3;
    n2 ^= t;
    n3 = (n3 << 11) | (n3 >>> 21);
    this.s0 = n0;
    this.s1 = n1;
    this.s2 = n2;
    this.s3 = n3;
    return r;
  }

  /**
   * Bulk draws: writes the next `count` uint32s of the stream to out[0..count) and returns `out`.
   * Exactly the values, in order, that `count` calls of nextUint32 would return, and the stream is left
   * where those calls would leave it (so calls and bulk fills interleave freely); the state is kept in
   * locals inside the loop. `count` defaults to out.length. (A subclass that overrides nextUint32 must
   * override this to match: the interventions' bulk paths draw through it.)
   */
  fillUint32(out: Uint32Array, count: number = out.length): Uint32Array {
    if (!(Number.isInteger(count) && count >= 0 && count <= out.length)) {
      throw new RangeError(`fillUint32: count=${count} out of range for length ${out.length}`);
    }
    let s0 = this.s0 | 0,
      s1 = this.s1 | 0,
      s2 = this.s2 | 0,
      s3 = this.s3 | 0;
    for (let i = 0; i < count; i++) {
      const m = Math.imul(s1, 5);
      out[i] = Math.imul((m << 7) | (m >>> 25), 9); // stored mod 2^32, as nextUint32's >>> 0
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
    }
    this.s0 = s0;
    this.s1 = s1;
    this.s2 = s2;
    this.s3 = s3;
    return out;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Unbiased integer in [0, n) for 1 <= n <= 2^32 (Lemire's nearly-divisionless method). */
  nextInt(n: number): number {
    if (!(n >= 1 && n <= 0x100000000 && Number.isInteger(n))) throw new RangeError(`nextInt: n=${n} out of range`);
    if (n === 0x100000000) return this.nextUint32();
    let x = this.nextUint32();
    let m = x * n; // exact: < 2^64 but as double may lose bits above 2^53 -> split
    let l = lowMul(x, n);
    if (l < n) {
      const t = (0x100000000 - n) % n;
      while (l < t) {
        x = this.nextUint32();
        m = x * n;
        l = lowMul(x, n);
      }
    }
    return highMul(x, n, m);
  }

  /** Standard normal by the polar Box–Muller method (pairs cached). */
  nextNormal(): number {
    if (this.spareNormal !== undefined) {
      const v = this.spareNormal;
      this.spareNormal = undefined;
      return v;
    }
    let u: number, v: number, s: number;
    do {
      u = this.nextFloat() * 2 - 1;
      v = this.nextFloat() * 2 - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0);
    const f = Math.sqrt((-2 * Math.log(s)) / s);
    this.spareNormal = v * f;
    return u * f;
  }

  /** Fisher–Yates shuffle in place; returns the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.nextInt(i + 1);
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }
}

/** Low 32 bits of x*n for uint32 x, n (n <= 2^32-1). */
function lowMul(x: number, n: number): number {
  return Math.imul(x, n) >>> 0;
}

/** High 32 bits of x*n for uint32 x, n; `approx` is the double product used as a fast path. */
function highMul(x: number, n: number, approx: number): number {
  if (approx < 9007199254740992) return Math.floor(approx / 4294967296);
  const xh = x >>> 16,
    xl = x & 0xffff;
  const nh = Math.floor(n / 65536),
    nl = n % 65536;
  const ll = xl * nl;
  const mid = xh * nl + xl * nh + Math.floor(ll / 65536);
  return xh * nh + Math.floor(mid / 65536);
}
