import fc from 'fast-check';
import { Packr, Unpackr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../src/bridges/msgpack-writer.js';
import { WireNdArray, ndarray, ndarraysEqual } from '../../src/bridges/ndarray-codec.js';

const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

describe('msgpack writer', () => {
  it('decodes (msgpackr) to the value it encoded (property, seeded)', () => {
    const arbValue = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.integer({ min: -(2 ** 31), max: 2 ** 32 }),
        fc.maxSafeInteger(),
        fc.double({ noNaN: true }),
        fc.string({ maxLength: 300 }),
        fc.array(tie('value'), { maxLength: 20 }),
        fc.dictionary(
          fc.string({ maxLength: 40 }).filter((k) => k !== '__proto__'),
          tie('value'),
          { maxKeys: 20 },
        ),
      ),
    })).value;
    fc.assert(
      fc.property(arbValue, (v) => {
        const decoded = unpackr.unpack(encodeFrame(v)) as unknown;
        const norm = (x: unknown): unknown =>
          typeof x === 'bigint'
            ? Number(x)
            : Object.is(x, -0)
              ? 0
              : Array.isArray(x)
                ? x.map(norm)
                : x !== null && typeof x === 'object'
                  ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, norm(y)]))
                  : x;
        expect(norm(decoded)).toEqual(norm(v));
      }),
      { seed: 41, numRuns: 500 },
    );
  });

  it('uses the smallest integer formats and 64-bit integers beyond 32 bits', () => {
    expect([...encodeFrame(5)]).toEqual([5]);
    expect([...encodeFrame(-1)]).toEqual([0xff]);
    expect([...encodeFrame(200)]).toEqual([0xcc, 200]);
    expect([...encodeFrame(2 ** 32)]).toEqual([0xcf, 0, 0, 0, 1, 0, 0, 0, 0]);
    expect([...encodeFrame(-(2 ** 40))].slice(0, 1)).toEqual([0xd3]);
    expect([...encodeFrame(0.5)]).toEqual([...new Packr().pack(0.5)]);
    expect(encodeFrame('x'.repeat(40))[0]).toBe(0xd9);
    expect(encodeFrame(Array.from({ length: 20 }, () => 0))[0]).toBe(0xdc);
  });

  it('writes ndarrays as extension 17 that msgpackr (and the codec) read back', () => {
    for (const n of [0, 3, 200, 70_000]) {
      const a = ndarray(
        'uint8',
        [n],
        new Uint8Array(n).map((_, i) => i & 0xff),
      );
      const f = ndarray('float64', [2, 1], Float64Array.of(1.5, -2));
      const out = unpackr.unpack(encodeFrame({ a, f, s: 'x' })) as { a: WireNdArray; f: WireNdArray };
      expect(ndarraysEqual(out.a, a)).toBe(true);
      expect(ndarraysEqual(out.f, f)).toBe(true);
    }
  });

  it('gives each frame its own memory', () => {
    const a = encodeFrame({ x: 'first' });
    const b = encodeFrame({ x: 'second' });
    expect(unpackr.unpack(a)).toEqual({ x: 'first' });
    expect(unpackr.unpack(b)).toEqual({ x: 'second' });
  });
});
