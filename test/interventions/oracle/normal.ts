/**
 * FROZEN TEST ORACLE — a verbatim copy of src/interventions/normal.ts as of commit 53b2e2e (before the
 * speed-up). The optimised operators must reproduce it bit for bit (test/interventions/bit-identical.test.ts).
 * Do not optimise or edit this copy.
 */
/**
 * Standard normal draws by the Marsaglia–Tsang ziggurat (128 layers), fed by the seeded Prng.
 *
 * Each fast-path draw uses one uint32: the low 7 bits pick the layer and the upper 25 bits (signed) give
 * the abscissa, so layer and value never share bits (the correlation Doornik 2005 found in the original
 * RNOR). Tails and wedges fall back to `nextFloat`. Deterministic in the Prng stream.
 */
import type { Prng } from '../../../src/core/prng.js';

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

/** Uniform in (0, 1]. */
function openUniform(prng: Prng): number {
  return 1 - prng.nextFloat();
}

function slowPath(prng: Prng, hz: number, iz: number): number {
  for (;;) {
    const x = hz * (wn[iz] as number);
    if (iz === 0) {
      let xx: number, y: number;
      do {
        xx = -Math.log(openUniform(prng)) / R;
        y = -Math.log(openUniform(prng));
      } while (y + y < xx * xx);
      return hz > 0 ? R + xx : -R - xx;
    }
    const f0 = fn[iz] as number;
    if (f0 + prng.nextFloat() * ((fn[iz - 1] as number) - f0) < Math.exp(-0.5 * x * x)) return x;
    const u = prng.nextUint32();
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

/** Fills out[0..count) with standard normal draws. */
export function fillStandardNormal(prng: Prng, out: Float64Array, count: number = out.length): void {
  for (let i = 0; i < count; i++) {
    const u = prng.nextUint32();
    const iz = u & 127;
    const hz = (u | 0) >> 7;
    out[i] = Math.abs(hz) < (kn[iz] as number) ? hz * (wn[iz] as number) : slowPath(prng, hz, iz);
  }
}
