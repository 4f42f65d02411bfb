/**
 * numberToBfloat16 rounds a double once, to the nearest bfloat16 (ties to even), checked against an independent
 * reference that picks between the two bfloat16 neighbours of the value by exact comparison with their midpoint
 * (bfloat16 values and their midpoints are exact doubles). The hard cases are doubles just off a midpoint,
 * which a rounding through float32 (RNE) would move onto it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bfloat16ToNumber, numberToBfloat16 } from '../../src/core/tensor.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The bfloat16 bits of a finite non-negative double by exact comparison (reference, no float32 rounding). */
function referenceMagnitude(a: number): number {
  // the largest bfloat16 magnitude ≤ a: truncate the float32 rounded toward zero, found by stepping down
  f32[0] = a;
  let lo = (u32[0] as number) >>> 16;
  while (lo > 0 && bfloat16ToNumber(lo) > a) lo -= 1;
  while (lo < 0x7f80 && bfloat16ToNumber(lo + 1) <= a) lo += 1;
  if (lo >= 0x7f80) return 0x7f80;
  const below = bfloat16ToNumber(lo);
  if (below === a) return lo;
  // next magnitude up; from the largest finite it is the overflow threshold 2^128 (RNE to infinity at the midpoint)
  const above = lo === 0x7f7f ? 2 ** 128 : bfloat16ToNumber(lo + 1);
  const mid = below / 2 + above / 2;
  if (a < mid) return lo;
  if (a > mid) return lo + 1 === 0x7f80 ? 0x7f80 : lo + 1;
  const up = (lo & 1) === 0 ? lo : lo + 1;
  return up >= 0x7f80 ? 0x7f80 : up;
}

function reference(value: number): number {
  const sign = value < 0 || Object.is(value, -0) ? 0x8000 : 0;
  if (Math.abs(value) === Infinity) return sign | 0x7f80;
  return sign | referenceMagnitude(Math.abs(value));
}

describe('numberToBfloat16: one correct rounding of the double', () => {
  it('rounds a double just above a midpoint up, not to the midpoint and then to even', () => {
    // 1 + 2^-8 is the midpoint between 1.0 (0x3f80) and 1.0078125 (0x3f81); float32 RNE lands on it
    expect(numberToBfloat16(1 + 2 ** -8 + 2 ** -30)).toBe(0x3f81);
    expect(numberToBfloat16(1 + 2 ** -8 - 2 ** -30)).toBe(0x3f80);
    expect(numberToBfloat16(1 + 2 ** -8)).toBe(0x3f80); // the exact midpoint: ties to even
    expect(numberToBfloat16(1 + 3 * 2 ** -8)).toBe(0x3f82); // 0x3f81 | 0x3f82 midpoint: to even
    expect(numberToBfloat16(-(1 + 2 ** -8 + 2 ** -30))).toBe(0xbf81);
  });

  it('keeps exact values, zeros, infinities, NaN, the largest finite value and the overflow threshold', () => {
    expect(numberToBfloat16(0)).toBe(0);
    expect(numberToBfloat16(-0)).toBe(0x8000);
    expect(numberToBfloat16(Infinity)).toBe(0x7f80);
    expect(numberToBfloat16(-Infinity)).toBe(0xff80);
    expect(numberToBfloat16(Number.NaN) & 0x7fc0).toBe(0x7fc0);
    expect(numberToBfloat16(bfloat16ToNumber(0x7f7f))).toBe(0x7f7f);
    expect(bfloat16ToNumber(0x7f7f)).toBe(2 ** 128 - 2 ** 120); // the largest finite
    expect(numberToBfloat16(2 ** 128 - 2 ** 119)).toBe(0x7f80); // the midpoint above it: ties to even = Inf
    expect(numberToBfloat16(2 ** 128 - 2 ** 119 - 2 ** 90)).toBe(0x7f7f);
    expect(numberToBfloat16(2 ** 128 - 2 ** 119 + 2 ** 90)).toBe(0x7f80);
    expect(numberToBfloat16(1e300)).toBe(0x7f80);
    expect(numberToBfloat16(2 ** -133)).toBe(0x0001); // smallest bfloat16 subnormal
    expect(numberToBfloat16(2 ** -134)).toBe(0); // half of it: ties to even (0)
    expect(numberToBfloat16(2 ** -134 + 2 ** -160)).toBe(0x0001);
    expect(numberToBfloat16(1e-300)).toBe(0);
    for (let bits = 0; bits < 0x7f80; bits += 97) expect(numberToBfloat16(bfloat16ToNumber(bits))).toBe(bits);
  });

  it('matches the exact reference near every kind of midpoint and on random doubles (seeded)', () => {
    // a bfloat16 midpoint (any binade, subnormals included) plus a small signed offset in units of its spacing
    const nearMidpoint = fc
      .tuple(
        fc.integer({ min: 0, max: 0x7f7e }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.integer({ min: 10, max: 60 }),
        fc.boolean(),
      )
      .map(([bits, frac, scale, negative]) => {
        const lo = bfloat16ToNumber(bits);
        const hi = bfloat16ToNumber(bits + 1);
        const v = lo / 2 + hi / 2 + frac * (hi - lo) * 2 ** -scale;
        return negative ? -v : v;
      });
    const anyDouble = fc.double({ noNaN: true });
    fc.assert(
      fc.property(fc.oneof(nearMidpoint, anyDouble), (v) => {
        expect(numberToBfloat16(v)).toBe(reference(v));
      }),
      { seed: 20261203, numRuns: 20000 },
    );
  });
});
