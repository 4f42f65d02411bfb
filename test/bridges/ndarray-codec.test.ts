import fc from 'fast-check';
import { Packr, Unpackr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import {
  DTYPE_NAMES,
  DTYPES,
  WireNdArray,
  decodeNdArrayPayload,
  encodeNdArrayPayload,
  fromNumpyMap,
  ndarray,
  ndarraysEqual,
  type Dtype,
  type NdData,
} from '../../src/bridges/ndarray-codec.js';

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

/** An ndarray of `dtype` with random bytes (any bit pattern is a valid element). */
function arbNdArray(dtype: Dtype): fc.Arbitrary<WireNdArray> {
  return fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 4 }).chain((shape) => {
    const n = shape.reduce((a, b) => a * b, 1);
    return fc.uint8Array({ minLength: n * DTYPES[dtype].size, maxLength: n * DTYPES[dtype].size }).map((bytes) => {
      const copy = new Uint8Array(bytes.length);
      copy.set(bytes);
      const data = new DTYPES[dtype].ctor(copy.buffer, 0, n) as NdData;
      return ndarray(dtype, shape, data);
    });
  });
}

const arbAny = fc.constantFrom(...DTYPE_NAMES).chain(arbNdArray);

describe('ndarray codec (extension 17)', () => {
  it('lays out the payload as PROTOCOL.md says', () => {
    const a = ndarray('float32', [2, 1], Float32Array.from([1, -2]));
    const p = encodeNdArrayPayload(a);
    expect([...p.subarray(0, 4)]).toEqual([1, 9, 2, 0]);
    expect([...p.subarray(4, 12)]).toEqual([2, 0, 0, 0, 1, 0, 0, 0]);
    expect(Buffer.from(p.subarray(12)).equals(Buffer.from(new Uint8Array(Float32Array.from([1, -2]).buffer)))).toBe(
      true,
    );
  });

  it('has all 13 dtype codes', () => {
    expect(DTYPE_NAMES.map((d) => DTYPES[d].code).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
    ]);
  });

  it('round-trips every dtype through the payload (property, seeded)', () => {
    fc.assert(
      fc.property(arbAny, (a) => {
        const b = decodeNdArrayPayload(encodeNdArrayPayload(a));
        expect(ndarraysEqual(a, b)).toBe(true);
        expect(b.data.constructor).toBe(a.data.constructor);
      }),
      { seed: 20240917, numRuns: 300 },
    );
  });

  it('round-trips inside msgpack at any byte offset (view when aligned, copy otherwise)', () => {
    fc.assert(
      fc.property(arbAny, fc.string({ maxLength: 7 }), (a, pad) => {
        const bytes = packr.pack({ pad, a });
        const out = unpackr.unpack(bytes) as { a: WireNdArray };
        expect(out.a).toBeInstanceOf(WireNdArray);
        expect(ndarraysEqual(a, out.a)).toBe(true);
      }),
      { seed: 7, numRuns: 300 },
    );
  });

  it('returns a zero-copy view for aligned data and a copy for misaligned data', () => {
    const a = ndarray(
      'uint8',
      [4, 4, 3],
      new Uint8Array(48).map((_, i) => i),
    );
    const frame = Buffer.from(packr.pack({ a }));
    const out = unpackr.unpack(frame) as { a: WireNdArray };
    expect(out.a.data.buffer).toBe(frame.buffer);
    const f = ndarray('float32', [3], Float32Array.from([1, 2, 3]));
    for (const pad of ['', 'x', 'xx', 'xxx']) {
      const fr = Buffer.from(packr.pack({ pad, f }));
      const o = unpackr.unpack(fr) as { f: WireNdArray };
      expect(Array.from(o.f.data as Float32Array)).toEqual([1, 2, 3]);
      expect(o.f.data.byteOffset % 4).toBe(0);
      const shared = o.f.data.buffer === fr.buffer;
      expect(shared).toBe((fr.byteOffset + (fr.length - 12)) % 4 === 0);
    }
  });

  it('keeps float16 / bfloat16 raw bits in a Uint16Array with the dtype', () => {
    const h = ndarray('float16', [2], Uint16Array.from([0x3c00, 0x7e00]));
    const b = decodeNdArrayPayload(encodeNdArrayPayload(h));
    expect(b.dtype).toBe('float16');
    expect(b.data).toBeInstanceOf(Uint16Array);
    expect(Array.from(b.data as Uint16Array)).toEqual([0x3c00, 0x7e00]);
    const bf = decodeNdArrayPayload(encodeNdArrayPayload(ndarray('bfloat16', [], Uint16Array.from([0x3f80]))));
    expect(bf.dtype).toBe('bfloat16');
    expect(bf.shape).toEqual([]);
  });

  it('rejects malformed payloads', () => {
    const good = encodeNdArrayPayload(ndarray('int16', [2], Int16Array.from([1, 2])));
    const cases: [string, Uint8Array][] = [
      ['short', good.subarray(0, 3)],
      ['version', Uint8Array.from([2, ...good.subarray(1)])],
      ['dtype', Uint8Array.from([1, 99, ...good.subarray(2)])],
      ['reserved', Uint8Array.from([1, 4, 1, 7, ...good.subarray(4)])],
      ['ndim', Uint8Array.from([1, 4, 33, 0])],
      ['length', good.subarray(0, good.length - 1)],
    ];
    for (const [, p] of cases) expect(() => decodeNdArrayPayload(p)).toThrow();
    expect(() => ndarray('float32', [3], Float32Array.from([1, 2]))).toThrow(/holds 3/);
    expect(() => ndarray('float32', [2], Float64Array.from([1, 2]) as unknown as Float32Array)).toThrow(/Float32Array/);
  });

  it('decodes the openpi msgpack-numpy map form', () => {
    const data = new Uint8Array(Float32Array.from([1.5, -2]).buffer);
    const a = fromNumpyMap({ __ndarray__: true, data, dtype: '<f4', shape: [2] });
    expect(a).toBeInstanceOf(WireNdArray);
    expect(Array.from((a as WireNdArray).data as Float32Array)).toEqual([1.5, -2]);
    const b = fromNumpyMap({ __ndarray__: new Uint8Array([1, 2, 3]), dtype: '|u1', shape: [3] });
    expect((b as WireNdArray).dtype).toBe('uint8');
    expect(fromNumpyMap({ __npgeneric__: true, data: 3, dtype: '<i8' })).toBe(3);
    expect(fromNumpyMap({ a: 1 })).toBeUndefined();
    expect(() => fromNumpyMap({ __ndarray__: true, data, dtype: '>f4', shape: [2] })).toThrow(/not supported/);
    expect(() => fromNumpyMap({ __ndarray__: true, data, dtype: '<f4', shape: [3] })).toThrow(/bytes/);
  });
});
