/**
 * Standard normal draws by the Marsaglia–Tsang ziggurat (128 layers), fed by the seeded Prng.
 *
 * Each fast-path draw uses one uint32: the low 7 bits pick the layer and the upper 25 bits (signed) give
 * the abscissa, so layer and value never share bits (the correlation Doornik 2005 found in the original
 * RNOR). Tails and wedges fall back to `nextFloat`. Deterministic in the Prng stream.
 *
 * `fillStandardNormal` takes its draws in bulk (Prng.fillUint32) and runs the one-draw fast path in a tight
 * loop; its values and its use of the stream are exactly those of repeated `standardNormal` calls.
 */
import type { Prng } from '../core/index.js';

const LAYERS = 128;
const R = 3.442619855899;
const V = 9.91256303526217e-3;
const SCALE = 2 ** 24; // |hz| < 2^24

const kn = new Float64Array(LAYERS);
const wn = new Float64Array(LAYERS);
const fn = new Float64Array(LAYERS);
(() => {
  let dn = R;
  let tn = dn;
  const q = V / Math.exp(-0.5 * dn * dn);
  kn[0] = (dn / q) * SCALE;
  kn[1] = 0;
  wn[0] = q / SCALE;
  wn[LAYERS - 1] = dn / SCALE;
  fn[0] = 1;
  fn[LAYERS - 1] = Math.exp(-0.5 * dn * dn);
  for (let i = LAYERS - 2; i >= 1; i--) {
    dn = Math.sqrt(-2 * Math.log(V / dn + Math.exp(-0.5 * dn * dn)));
    kn[i + 1] = (dn / tn) * SCALE;
    tn = dn;
    fn[i] = Math.exp(-0.5 * dn * dn);
    wn[i] = dn / SCALE;
  }
})();

/** What the ziggurat draws from: a Prng, or a `BufferedDraws` reading a Prng's bulk draws. */
interface UniformSource {
  nextUint32(): number;
  nextFloat(): number;
}

/** Uniform in (0, 1]. */
function openUniform(src: UniformSource): number {
  return 1 - src.nextFloat();
}

function slowPath(src: UniformSource, hz: number, iz: number): number {
  for (;;) {
    const x = hz * (wn[iz] as number);
    if (iz === 0) {
      let xx: number, y: number;
      do {
        xx = -Math.log(openUniform(src)) / R;
        y = -Math.log(openUniform(src));
      } while (y + y < xx * xx);
      return hz > 0 ? R + xx : -R - xx;
    }
    const f0 = fn[iz] as number;
    if (f0 + src.nextFloat() * ((fn[iz - 1] as number) - f0) < Math.exp(-0.5 * x * x)) return x;
    const u = src.nextUint32();
    iz = u & 127;
    hz = (u | 0) >> 7;
    if (Math.abs(hz) < (kn[iz] as number)) return hz * (wn[iz] as number);
  }
}

/** One standard normal draw. */
export function standardNormal(prng: Prng): number {
  const u = prng.nextUint32();
  const iz = u & 127;
  const hz = (u | 0) >> 7;
  if (Math.abs(hz) < (kn[iz] as number)) return hz * (wn[iz] as number);
  return slowPath(prng, hz, iz);
}

/**
 * A Prng's next draws read from a bulk buffer: buf[p..end) first, then the Prng itself. Filled with no more
 * draws than are certain to be used, it hands out exactly the Prng's own stream.
 */
class BufferedDraws implements UniformSource {
  buf: Uint32Array = new Uint32Array(0);
  p = 0;
  end = 0;
  prng: Prng | undefined;

  nextUint32(): number {
    if (this.p < this.end) return this.buf[this.p++] as number;
    return (this.prng as Prng).nextUint32();
  }

  /** As Prng.nextFloat: 27 + 26 bits of two draws. */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }
}

/** Draws per bulk fill. */
const CHUNK = 4096;
const draws = new Uint32Array(CHUNK);
const buffered = new BufferedDraws();

/**
 * Fills out[0..count) and returns Σ out[0..count), added left to right from 0 (the sum the caller would
 * get looping over the draws afterwards). Every normal takes at least one draw, so a chunk of
 * min(count − i, CHUNK) bulk draws is never more than the draws will use: the stream ends exactly where
 * `count` standardNormal calls would leave it, with the same values. The fast path — one draw per normal —
 * runs in a tight loop over the chunk; a draw that leaves it (≈2.8%: 1/128 are the top layer, whose kn is 0) goes to the general ziggurat through
 * `BufferedDraws`, whose extra draws continue from the buffer, then (once it is spent) from the Prng.
 */
function fillNormals(prng: Prng, out: Float64Array, n: number): number {
  const count = Math.ceil(n); // the loop `for (i = 0; i < n; i++)` runs ceil(n) times
  const src = buffered;
  let sum = 0;
  let i = 0;
  while (i < count) {
    const take = count - i < CHUNK ? count - i : CHUNK;
    prng.fillUint32(draws, take);
    let k = 0;
    while (k < take) {
      // Fast path, one draw per normal, until a draw needs the general ziggurat.
      let u = 0;
      for (; k < take; k++) {
        u = draws[k] as number;
        const iz = u & 127;
        const hz = (u | 0) >> 7;
        if (!(Math.abs(hz) < (kn[iz] as number))) break;
        const z = hz * (wn[iz] as number);
        out[i++] = z;
        sum += z;
      }
      if (k === take) break;
      src.buf = draws;
      src.p = k + 1;
      src.end = take;
      src.prng = prng;
      const z = slowPath(src, (u | 0) >> 7, u & 127);
      k = src.p;
      src.prng = undefined;
      out[i++] = z;
      sum += z;
    }
  }
  return sum;
}

/** Fills out[0..count) with standard normal draws (the same values and stream use as `count` standardNormal calls). */
export function fillStandardNormal(prng: Prng, out: Float64Array, count: number = out.length): void {
  fillNormals(prng, out, count);
}

/**
 * As fillStandardNormal, returning Σ out[0..count) accumulated left to right from 0 (bit-identical to summing
 * the filled array afterwards, without the extra pass).
 */
export function fillStandardNormalSum(prng: Prng, out: Float64Array, count: number = out.length): number {
  return fillNormals(prng, out, count);
}
