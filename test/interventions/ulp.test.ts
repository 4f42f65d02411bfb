import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bfloat16ToNumber, halfToNumber, type FloatDtype, type FloatTensor } from '../../src/core/tensor.js';
import {
  nextDown,
  nextDownBits,
  nextUp,
  nextUpBits,
  stepTensorUlp,
  stepUlp,
  stepUlpBits,
  ULP_DIRECTIONS,
  type NarrowDtype,
  type UlpDirection,
} from '../../src/interventions/ulp.js';

fc.configureGlobal({ seed: 20260901, numRuns: 4000 });

/**
 * Independent oracle: IEEE binary formats as BigInt sign-magnitude integers. The finite values, in order,
 * are the integers −maxMag … maxMag (with ±0 both at 0), so a one-ULP step is ±1 on that ordinal.
 */
interface Fmt {
  readonly width: bigint;
  readonly expBits: bigint;
  readonly mantBits: bigint;
}
const FMT: Record<FloatDtype, Fmt> = {
  float16: { width: 16n, expBits: 5n, mantBits: 10n },
  bfloat16: { width: 16n, expBits: 8n, mantBits: 7n },
  float32: { width: 32n, expBits: 8n, mantBits: 23n },
  float64: { width: 64n, expBits: 11n, mantBits: 52n },
};
const signBit = (f: Fmt): bigint => 1n << (f.width - 1n);
const infMag = (f: Fmt): bigint => ((1n << f.expBits) - 1n) << f.mantBits;
const maxMag = (f: Fmt): bigint => infMag(f) - 1n;

function oracleStep(bits: bigint, f: Fmt, dir: UlpDirection): bigint {
  const neg = (bits & signBit(f)) !== 0n;
  const mag = bits & (signBit(f) - 1n);
  if (mag >= infMag(f)) return bits; // ±Inf, NaN: unchanged
  const ord = neg ? -mag : mag;
  const zeroSign = neg ? -1n : 1n;
  let d: bigint;
  if (dir === 'up') d = 1n;
  else if (dir === 'down') d = -1n;
  else if (dir === 'away') d = ord === 0n ? zeroSign : ord > 0n ? 1n : -1n;
  else d = ord === 0n ? zeroSign : ord > 0n ? -1n : 1n;
  let next = ord + d;
  if (next > maxMag(f) || next < -maxMag(f)) next = ord - d; // overflow → step the other way
  if (next === 0n) return neg ? signBit(f) : 0n; // landing on zero keeps the sign it came from
  return next > 0n ? next : signBit(f) | -next;
}

/** IEEE 754 nextUp on the ordinal. */
function oracleNextUp(bits: bigint, f: Fmt): bigint {
  const neg = (bits & signBit(f)) !== 0n;
  const mag = bits & (signBit(f) - 1n);
  if (mag > infMag(f)) return bits;
  if (mag === infMag(f)) return neg ? signBit(f) | maxMag(f) : bits;
  const ord = neg ? -mag : mag;
  const next = ord + 1n;
  if (next === 0n) return signBit(f); // −min subnormal → −0
  if (next > maxMag(f)) return infMag(f);
  return next > 0n ? next : signBit(f) | -next;
}
function oracleNextDown(bits: bigint, f: Fmt): bigint {
  const flip = (b: bigint): bigint => b ^ signBit(f);
  const mag = bits & (signBit(f) - 1n);
  if (mag > infMag(f)) return bits;
  return flip(oracleNextUp(flip(bits), f));
}

const ord = (bits: bigint, f: Fmt): bigint => ((bits & signBit(f)) !== 0n ? -(bits & (signBit(f) - 1n)) : bits);

/** Special patterns of each format: zeros, min subnormal, max subnormal, min normal, one, max finite, Inf, NaNs. */
function specials(f: Fmt): bigint[] {
  const base = [
    0n,
    1n,
    (1n << f.mantBits) - 1n,
    1n << f.mantBits,
    ((1n << (f.expBits - 1n)) - 1n) << f.mantBits,
    maxMag(f),
    infMag(f),
    infMag(f) + 1n,
    infMag(f) | (1n << (f.mantBits - 1n)),
    signBit(f) - 1n,
  ];
  return base.flatMap((m) => [m, m | signBit(f)]);
}

function bitsArb(f: Fmt): fc.Arbitrary<bigint> {
  return fc.oneof(fc.constantFrom(...specials(f)), fc.bigInt({ min: 0n, max: (1n << f.width) - 1n }));
}

const NARROW: readonly NarrowDtype[] = ['float16', 'bfloat16', 'float32'];

function tensorOfBits(dtype: FloatDtype, bits: readonly bigint[]): FloatTensor {
  const n = bits.length;
  if (dtype === 'float64') {
    const data = new Float64Array(n);
    const dv = new DataView(data.buffer);
    bits.forEach((b, i) => dv.setBigUint64(i * 8, b, true));
    return { dtype, shape: [n], data };
  }
  if (dtype === 'float32') {
    const data = new Float32Array(n);
    const dv = new DataView(data.buffer);
    bits.forEach((b, i) => dv.setUint32(i * 4, Number(b), true));
    return { dtype, shape: [n], data };
  }
  const data = new Uint16Array(bits.map(Number));
  return { dtype, shape: [n], data };
}

function bitsOfTensor(t: FloatTensor): bigint[] {
  const dv = new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const out: bigint[] = [];
  for (let i = 0; i < t.data.length; i++) {
    if (t.dtype === 'float64') out.push(dv.getBigUint64(i * 8, true));
    else if (t.dtype === 'float32') out.push(BigInt(dv.getUint32(i * 4, true)));
    else out.push(BigInt(dv.getUint16(i * 2, true)));
  }
  return out;
}

function valueOfBits(dtype: FloatDtype, b: bigint): number {
  if (dtype === 'float16') return halfToNumber(Number(b));
  if (dtype === 'bfloat16') return bfloat16ToNumber(Number(b));
  const dv = new DataView(new ArrayBuffer(8));
  if (dtype === 'float32') {
    dv.setUint32(0, Number(b), true);
    return dv.getFloat32(0, true);
  }
  dv.setBigUint64(0, b, true);
  return dv.getFloat64(0, true);
}

describe('ulp: 16-bit formats, exhaustively against the BigInt oracle', () => {
  for (const dtype of ['float16', 'bfloat16'] as const) {
    it(`${dtype}: stepUlpBits, nextUpBits and nextDownBits on all 65,536 patterns × 4 directions`, () => {
      const f = FMT[dtype];
      for (let b = 0; b <= 0xffff; b++) {
        const big = BigInt(b);
        expect(nextUpBits(b, dtype)).toBe(Number(oracleNextUp(big, f)));
        expect(nextDownBits(b, dtype)).toBe(Number(oracleNextDown(big, f)));
        for (const dir of ULP_DIRECTIONS) {
          const got = stepUlpBits(b, dtype, dir);
          if (got !== Number(oracleStep(big, f, dir)))
            throw new Error(`${dtype} ${b.toString(16)} ${dir}: got ${got.toString(16)}`);
        }
      }
    });
  }
});

describe('ulp: every finite leaf moves by exactly one ULP in its own dtype', () => {
  for (const dtype of ['float16', 'bfloat16', 'float32', 'float64'] as const) {
    it(`${dtype}: stepTensorUlp matches the oracle element by element and counts non-finite leaves`, () => {
      const f = FMT[dtype];
      fc.assert(
        fc.property(
          fc.array(bitsArb(f), { minLength: 1, maxLength: 24 }),
          fc.constantFrom(...ULP_DIRECTIONS),
          (bits, dir) => {
            const t = tensorOfBits(dtype, bits);
            const before = bitsOfTensor(t);
            const { tensor, nonFinite } = stepTensorUlp(t, dir);
            expect(tensor.dtype).toBe(dtype);
            expect(tensor.shape).toEqual(t.shape);
            expect(tensor.data).not.toBe(t.data);
            expect(bitsOfTensor(t)).toEqual(before); // input untouched
            const after = bitsOfTensor(tensor);
            let expectNonFinite = 0;
            after.forEach((a, i) => {
              const b = before[i] as bigint;
              expect(a).toBe(oracleStep(b, f, dir));
              const mag = b & (signBit(f) - 1n);
              if (mag >= infMag(f)) {
                expectNonFinite++;
                expect(a).toBe(b);
              } else {
                const d = ord(a, f) - ord(b, f);
                expect(d === 1n || d === -1n).toBe(true); // adjacent in the finite order
                expect((a & (signBit(f) - 1n)) < infMag(f)).toBe(true); // still finite
                expect(valueOfBits(dtype, a)).not.toBe(valueOfBits(dtype, b));
              }
            });
            expect(nonFinite).toBe(expectNonFinite);
          },
        ),
      );
    });
  }
});

describe('ulp: scalar value API', () => {
  for (const dtype of ['float16', 'bfloat16', 'float32', 'float64'] as const) {
    it(`${dtype}: nextUp / nextDown / stepUlp agree with the oracle on values`, () => {
      const f = FMT[dtype];
      fc.assert(
        fc.property(bitsArb(f), fc.constantFrom(...ULP_DIRECTIONS), (b, dir) => {
          const v = valueOfBits(dtype, b);
          const check = (got: number, want: bigint): void => {
            const w = valueOfBits(dtype, want);
            if (Number.isNaN(w)) expect(Number.isNaN(got)).toBe(true);
            else expect(Object.is(got, w)).toBe(true);
          };
          // NaN values lose their payload through a JS number; compare as NaN.
          check(nextUp(v, dtype), oracleNextUp(b, f));
          check(nextDown(v, dtype), oracleNextDown(b, f));
          check(stepUlp(v, dtype, dir), oracleStep(b, f, dir));
        }),
      );
    });
  }

  it('pins the documented edge cases', () => {
    const minSub32 = 2 ** -149;
    expect(nextUp(0, 'float32')).toBe(minSub32);
    expect(nextUp(-0, 'float32')).toBe(minSub32);
    expect(nextDown(0, 'float32')).toBe(-minSub32);
    expect(nextDown(-0, 'float32')).toBe(-minSub32);
    expect(Object.is(nextUp(-minSub32, 'float32'), -0)).toBe(true);
    expect(nextUp(3.4028234663852886e38, 'float32')).toBe(Infinity);
    expect(nextUp(-Infinity, 'float32')).toBe(-3.4028234663852886e38);
    expect(nextUp(Number.MAX_VALUE, 'float64')).toBe(Infinity);
    expect(nextUp(0, 'float64')).toBe(Number.MIN_VALUE);
    expect(nextUp(65504, 'float16')).toBe(Infinity);
    expect(nextUp(0, 'float16')).toBe(2 ** -24);
    expect(nextUp(0, 'bfloat16')).toBe(2 ** -133);
    // U never overflows: max finite steps toward zero in every direction that would leave the range.
    expect(stepUlp(65504, 'float16', 'away')).toBe(65472);
    expect(stepUlp(65504, 'float16', 'up')).toBe(65472);
    expect(stepUlp(-65504, 'float16', 'down')).toBe(-65472);
    expect(stepUlp(Number.MAX_VALUE, 'float64', 'away')).toBe(nextDown(Number.MAX_VALUE, 'float64'));
    // toward-zero from a zero steps away from zero keeping the sign.
    expect(stepUlp(0, 'float32', 'toward-zero')).toBe(minSub32);
    expect(stepUlp(-0, 'float32', 'toward-zero')).toBe(-minSub32);
    expect(stepUlp(-0, 'float32', 'up')).toBe(minSub32);
    // Non-finite values are unchanged.
    expect(stepUlp(Infinity, 'float32', 'away')).toBe(Infinity);
    expect(Number.isNaN(stepUlp(NaN, 'bfloat16', 'up'))).toBe(true);
    expect(stepUlp(1, 'float32', 'away')).toBe(1 + 2 ** -23);
    expect(stepUlp(1, 'float32', 'toward-zero')).toBe(1 - 2 ** -24);
    expect(stepUlp(1, 'float64', 'down')).toBe(1 - 2 ** -53);
  });

  it('rejects values not representable in the dtype and bad bit patterns', () => {
    expect(() => nextUp(0.1, 'float32')).toThrow(RangeError);
    expect(() => stepUlp(1 + 2 ** -20, 'float16', 'up')).toThrow(RangeError);
    expect(() => nextUpBits(0x10000, 'float16')).toThrow(RangeError);
    expect(() => stepUlpBits(-1, 'float32', 'up')).toThrow(RangeError);
    for (const d of NARROW) expect(() => nextDownBits(1.5, d)).toThrow(RangeError);
  });
});
