/**
 * msgpack-numpy in both dialects: round trips of arbitrary arrays and nested data (fast-check), the exact spelling
 * each dialect writes (bytes keys for openpi, str keys for vla-eval), dtype strings both ways, and the refusals
 * (big-endian, unsupported kinds, png images, non-msgpack frames, short data).
 */
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import {
  MsgpackNumpyError,
  dtypeOfNumpyStr,
  float16Bits,
  numpyDtypeStr,
  packWire,
  unpackWire,
  unpackWireMap,
  type NumpyDialect,
  type WireValue,
} from '../../../src/policies/servers/index.js';
import type { NdArray } from '../../../src/runtime/index.js';
import { asNd, bytesOf, comparable, nd } from './wire-cases.js';

const DIALECTS: readonly NumpyDialect[] = ['openpi', 'vla-eval'];

const CTORS = {
  uint8: Uint8Array,
  int8: Int8Array,
  uint16: Uint16Array,
  int16: Int16Array,
  uint32: Uint32Array,
  int32: Int32Array,
  float16: Uint16Array,
  float32: Float32Array,
  float64: Float64Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  bool: Uint8Array,
} as const;
const SIZES: Record<keyof typeof CTORS, number> = {
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  uint32: 4,
  int32: 4,
  float16: 2,
  float32: 4,
  float64: 8,
  int64: 8,
  uint64: 8,
  bool: 1,
};

const arbArray: fc.Arbitrary<NdArray> = fc
  .record({
    dtype: fc.constantFrom(...(Object.keys(CTORS) as (keyof typeof CTORS)[])),
    shape: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
  })
  .chain(({ dtype, shape }) => {
    const n = shape.reduce((a, b) => a * b, 1);
    return fc.uint8Array({ minLength: n * SIZES[dtype], maxLength: n * SIZES[dtype] }).map((bytes) => {
      const buf = new ArrayBuffer(bytes.byteLength);
      new Uint8Array(buf).set(bytes);
      if (dtype === 'bool') for (let i = 0; i < n; i++) new Uint8Array(buf)[i] = bytes[i]! & 1;
      return nd(dtype, shape, new CTORS[dtype](buf) as NdArray['data']);
    });
  });

const arbKey = fc.string({ maxLength: 12 }).filter((k) => k !== '__proto__' && !k.startsWith('__'));
const arbWire: fc.Arbitrary<WireValue> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    arbArray as fc.Arbitrary<WireValue>,
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(arbKey, tie('value'), { maxKeys: 4 }),
  ),
})).value as fc.Arbitrary<WireValue>;

describe('msgpack-numpy round trips', () => {
  for (const dialect of DIALECTS) {
    it(`${dialect}: any array of any supported dtype comes back with its dtype, shape and bytes`, () => {
      fc.assert(
        fc.property(arbArray, (a) => {
          const back = asNd(unpackWire(packWire(a, dialect)));
          expect(back.dtype).toBe(a.dtype);
          expect([...back.shape]).toEqual([...a.shape]);
          expect(bytesOf(back).equals(bytesOf(a))).toBe(true);
          expect(back.data.byteOffset % SIZES[a.dtype as keyof typeof SIZES]).toBe(0);
        }),
        { numRuns: 300 },
      );
    });
    it(`${dialect}: nested maps and lists of arrays and plain data come back equal`, () => {
      fc.assert(
        fc.property(fc.dictionary(arbKey, arbWire, { maxKeys: 5 }), (m) => {
          // -0 packs as the integer 0 (msgpackr writes integral doubles as ints), as Python's int would
          const norm = (v: unknown): unknown =>
            JSON.parse(JSON.stringify(comparable(v as WireValue), (_k, x) => (Object.is(x, -0) ? 0 : x)));
          expect(norm(unpackWireMap(packWire(m, dialect)))).toEqual(norm(m));
        }),
        { numRuns: 200 },
      );
    });
  }
});

describe('msgpack-numpy spelling', () => {
  const a = nd('float32', [2], Float32Array.from([1, 2]));
  const raw = new Packr({ useRecords: false, mapsAsObjects: false } as never);
  it('openpi writes the array map with BYTES keys, vla-eval with str keys, both with dtype.str and a shape list', () => {
    const op = raw.unpack(packWire(a, 'openpi')) as Map<unknown, unknown>;
    expect([...op.keys()].map((k) => (k instanceof Uint8Array ? `b:${Buffer.from(k).toString()}` : k))).toEqual([
      'b:__ndarray__',
      'b:data',
      'b:dtype',
      'b:shape',
    ]);
    const ve = raw.unpack(packWire(a, 'vla-eval')) as Map<unknown, unknown>;
    expect([...ve.keys()]).toEqual(['__ndarray__', 'data', 'dtype', 'shape']);
    for (const m of [op, ve]) {
      const vals = [...m.values()];
      expect(vals[0]).toBe(true);
      expect(Buffer.from(vals[1] as Uint8Array).toString('hex')).toBe('0000803f00000040');
      expect(vals[2]).toBe('<f4');
      expect(vals[3]).toEqual([2]);
    }
  });
  it('dtype strings both ways, one-byte types without byte order', () => {
    expect(numpyDtypeStr('float32')).toBe('<f4');
    expect(numpyDtypeStr('uint8')).toBe('|u1');
    expect(numpyDtypeStr('bool')).toBe('|b1');
    expect(numpyDtypeStr('int64')).toBe('<i8');
    expect(() => numpyDtypeStr('bfloat16')).toThrow(/bfloat16 has no numpy dtype/);
    expect(dtypeOfNumpyStr('<f8')).toBe('float64');
    expect(dtypeOfNumpyStr('|i1')).toBe('int8');
    expect(dtypeOfNumpyStr('<u1')).toBe('uint8');
    expect(dtypeOfNumpyStr('<f2')).toBe('float16');
    expect(() => dtypeOfNumpyStr('>f4', 'reply.actions')).toThrow(
      'reply.actions: big-endian numpy dtype ">f4": IMEP reads little-endian arrays only',
    );
    expect(() => dtypeOfNumpyStr('<U5')).toThrow(/numpy dtype "<U5" is not one IMEP reads/);
    expect(() => dtypeOfNumpyStr('<c8')).toThrow(/not one IMEP reads/);
  });
  it('float16Bits rounds like numpy (to nearest even, overflow to inf, subnormals)', () => {
    expect(float16Bits(1.5)).toBe(0x3e00);
    expect(float16Bits(-2)).toBe(0xc000);
    expect(float16Bits(65504)).toBe(0x7bff);
    expect(float16Bits(65520)).toBe(0x7c00);
    expect(float16Bits(2 ** -24)).toBe(0x0001);
    expect(float16Bits(2 ** -25)).toBe(0x0000);
    expect(float16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie → even
    expect(float16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie → even (up)
    expect(float16Bits(0.1)).toBe(0x2e66);
    expect(float16Bits(Number.NaN)).toBe(0x7e00);
    expect(float16Bits(-0)).toBe(0x8000);
  });
});

describe('msgpack-numpy refusals', () => {
  const packer = new Packr({ useRecords: false, variableMapSize: true } as never);
  const frame = (v: unknown): Uint8Array => packer.pack(v);
  it('a frame that is not msgpack', () => {
    expect(() => unpackWire(Buffer.from('not msgpack at all, just text'), 'reply')).toThrow(/reply: not msgpack/);
  });
  it('a reply that is not a map', () => {
    expect(() => unpackWireMap(frame([1, 2]), 'reply')).toThrow('reply: expected a msgpack map, got an array');
    expect(() => unpackWireMap(frame('Traceback'), 'reply')).toThrow('reply: expected a msgpack map, got a string');
  });
  it('an array whose data does not match its shape', () => {
    const m = { __ndarray__: true, data: Buffer.alloc(12), dtype: '<f4', shape: [2, 2] };
    expect(() => unpackWire(frame({ actions: m }), 'reply')).toThrow(
      'reply.actions: array [2,2] <f4 needs 16 bytes, "data" has 12',
    );
  });
  it('big-endian arrays and object dtypes', () => {
    const m = { __ndarray__: true, data: Buffer.alloc(4), dtype: '>f4', shape: [1] };
    expect(() => unpackWire(frame({ a: m }), 'reply')).toThrow(/reply\.a: big-endian numpy dtype ">f4"/);
    expect(() => unpackWire(frame({ a: { ...m, dtype: '|O' } }), 'reply')).toThrow(/"\|O" is not one IMEP reads/);
  });
  it('png / jpeg images (IMEP reads raw only)', () => {
    const img = { __image__: true, format: 'png', data: Buffer.alloc(8), shape: [2, 2, 3] };
    expect(() => unpackWire(frame({ img }), 'reply')).toThrow(
      /reply\.img: image in format "png": IMEP reads raw images only/,
    );
  });
  it('numpy scalars (openpi __npgeneric__) decode to 0-d arrays of their dtype', () => {
    const B = (k: string): Buffer => Buffer.from(k);
    const scalar = (data: unknown, dtype: string): Map<unknown, unknown> =>
      new Map<unknown, unknown>([
        [B('__npgeneric__'), true],
        [B('data'), data],
        [B('dtype'), dtype],
      ]);
    const m = unpackWireMap(
      frame({ f: scalar(0.5, '<f4'), b: scalar(true, '|b1'), i: scalar(2n ** 62n, '<i8'), h: scalar(1.5, '<f2') }),
    );
    expect(comparable(m)).toEqual({
      f: { dtype: 'float32', shape: [], hex: '0000003f' },
      b: { dtype: 'bool', shape: [], hex: '01' },
      i: { dtype: 'int64', shape: [], hex: '0000000000000040' },
      h: { dtype: 'float16', shape: [], hex: '003e' },
    });
    expect(() => unpackWire(frame({ f: scalar('x', '<f4') }), 'reply')).toThrow(
      'reply.f: numpy scalar of dtype float32 with data x',
    );
  });
  it('values packWire cannot send', () => {
    expect(() => packWire({ a: new Float32Array(2) as never }, 'openpi', 'observation')).toThrow(
      'observation.a: a bare typed array: wrap it as { dtype, shape, data }',
    );
    expect(() => packWire({ a: nd('float32', [3], new Float32Array(2)) }, 'openpi', 'observation')).toThrow(
      /observation\.a: shape \[3\] holds 3 elements, data has 2/,
    );
    expect(() => packWire({ a: nd('bfloat16', [1], new Uint16Array(1)) }, 'vla-eval', 'observation')).toThrow(
      'observation.a: dtype bfloat16 has no numpy dtype; send float32 instead',
    );
  });
  it('errors are MsgpackNumpyError with the path', () => {
    try {
      unpackWire(Buffer.from([0xc1]), 'frame');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(MsgpackNumpyError);
      expect((e as MsgpackNumpyError).path).toBe('frame');
    }
  });
});
