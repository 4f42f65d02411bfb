import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeError, encodeMessage, parseReplyBody } from '../../src/bridges/envelope.js';
import { WireNdArray, ndarray, ndarraysEqual } from '../../src/bridges/ndarray-codec.js';

const raw = new Packr({ useRecords: false });
const enc = (v: unknown): Buffer => raw.pack(v);

function decodeOk(bytes: Uint8Array) {
  const r = decodeMessage(bytes);
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.message;
}

describe('envelope', () => {
  it('round-trips a step request with an ndarray action', () => {
    const action = ndarray('float32', [2], Float32Array.from([0.25, -1]));
    const e = encodeMessage({ kind: 'request', id: 7, op: 'step', body: { handle: 'h1', action } });
    expect(e.ok).toBe(true);
    const m = decodeOk((e as { bytes: Buffer }).bytes);
    expect(m.kind).toBe('request');
    if (m.kind !== 'request' || m.op !== 'step') throw new Error('kind');
    expect(m.id).toBe(7);
    expect(ndarraysEqual(m.body.action, action)).toBe(true);
  });

  it('sends plain {dtype, shape, data} objects and bare typed arrays as ndarrays; drops undefined', () => {
    const e = encodeMessage({
      kind: 'reply',
      id: 1,
      body: {
        obs: {
          rgb: { dtype: 'uint8', shape: [1, 1, 3], data: Uint8Array.from([1, 2, 3]) },
          pos: Float32Array.from([1]),
        },
        x: undefined,
      },
    });
    if (!e.ok) throw new Error(e.message);
    const m = decodeOk(e.bytes);
    if (m.kind !== 'reply') throw new Error('kind');
    const obs = m.body['obs'] as Record<string, WireNdArray>;
    expect(obs['rgb']).toBeInstanceOf(WireNdArray);
    expect(obs['rgb']!.shape).toEqual([1, 1, 3]);
    expect(obs['pos']!.dtype).toBe('float32');
    expect('x' in m.body).toBe(false);
  });

  it('refuses to encode unsendable values without throwing', () => {
    const e = encodeMessage({ kind: 'reply', id: 1, body: { when: new Date() } });
    expect(e.ok).toBe(false);
    const f = encodeMessage({
      kind: 'reply',
      id: 1,
      body: { a: { dtype: 'float32', shape: [3], data: new Float32Array(2) } },
    });
    expect(f.ok).toBe(false);
  });

  it('reports the documented codes for malformed messages', () => {
    const cases: [Uint8Array, string, number | null][] = [
      [Buffer.from([0xc1]), 'E_BAD_MESSAGE', null],
      [Buffer.from('garbage bytes'), 'E_BAD_MESSAGE', null],
      [enc([1, 2, 3]), 'E_BAD_MESSAGE', null],
      [enc({ v: 2, id: 5, op: 'ping', body: {} }), 'E_VERSION', 5],
      [enc({ id: 5, op: 'ping', body: {} }), 'E_BAD_MESSAGE', 5],
      [enc({ v: 1, id: 5, op: 'ping', body: {}, extra: 1 }), 'E_BAD_MESSAGE', 5],
      [enc({ v: 1, id: -1, op: 'ping', body: {} }), 'E_BAD_MESSAGE', null],
      [enc({ v: 1, id: 'x', op: 'ping', body: {} }), 'E_BAD_MESSAGE', null],
      [enc({ v: 1, id: 5, op: 'ping', body: [] }), 'E_BAD_MESSAGE', 5],
      [enc({ v: 1, id: 5, op: 'fly', body: {} }), 'E_UNKNOWN_OP', 5],
      [enc({ v: 1, id: 5, op: 'reset', body: { handle: 'h1', seed: -3, options: {} } }), 'E_BAD_MESSAGE', 5],
      [enc({ v: 1, id: 5, op: 'step', body: { handle: 'h1', action: [1, 2] } }), 'E_BAD_MESSAGE', 5],
      [enc({ v: 1, id: 5, op: 'make', body: { kwargs: {} } }), 'E_BAD_MESSAGE', 5],
      [enc({ v: 1, id: 5, op: 'close', body: { handle: '' } }), 'E_BAD_MESSAGE', 5],
      [enc({ v: 1, id: 5, op: '', body: {} }), 'E_BAD_MESSAGE', 5],
      [enc({ v: 1, id: 2 ** 53, op: 'ping', body: {} }), 'E_BAD_MESSAGE', null],
    ];
    for (const [bytes, code, id] of cases) {
      const r = decodeMessage(bytes);
      expect(r.ok, code).toBe(false);
      if (r.ok) continue;
      expect({ code: r.code, id: r.id }).toEqual({ code, id });
    }
    const r = decodeMessage([Buffer.from([0x80]), Buffer.from([0x80])]);
    expect(r.ok ? '' : r.code).toBe('E_BAD_MESSAGE');
  });

  it('names the faulty body field', () => {
    const r = decodeMessage(enc({ v: 1, id: 5, op: 'reset', body: { handle: 'h1', seed: 1.5, options: {} } }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(/^body\.seed:/);
  });

  it('treats an op the peer does not serve as E_UNKNOWN_OP before looking at its body', () => {
    const r = decodeMessage(enc({ v: 1, id: 4, op: 'memory.read', body: {} }), { serves: ['ping'] });
    expect(r).toMatchObject({ ok: false, code: 'E_UNKNOWN_OP', id: 4, op: 'memory.read' });
  });

  it('defaults omitted kwargs / options to {}', () => {
    const m = decodeOk(enc({ v: 1, id: 1, op: 'make', body: { env: 'x' } }));
    expect(m).toEqual({ kind: 'request', id: 1, op: 'make', body: { env: 'x', kwargs: {} } });
  });

  it('ignores unknown body keys', () => {
    const m = decodeOk(enc({ v: 1, id: 1, op: 'close', body: { handle: 'h2', later: true } }));
    expect(m).toEqual({ kind: 'request', id: 1, op: 'close', body: { handle: 'h2' } });
  });

  it('reads error replies, including id null', () => {
    const m = decodeOk(encodeError(null, 'E_BAD_MESSAGE', 'x'));
    expect(m).toEqual({ kind: 'error', id: null, code: 'E_BAD_MESSAGE', message: 'x' });
  });

  it('decodes Python-style maps with binary keys and openpi arrays', () => {
    // { b"v": 1, b"id": 3, b"op": b"reply"... } as Python msgpack with use_bin_type=True writes bytes keys
    const key = (s: string) => Buffer.from(s);
    const body = new Map<unknown, unknown>([
      [key('__ndarray__'), true],
      [key('data'), Buffer.from(new Uint8Array(Float32Array.from([3]).buffer))],
      [key('dtype'), '<f4'],
      [key('shape'), [1]],
    ]);
    const msg = new Map<unknown, unknown>([
      [key('v'), 1],
      [key('id'), 3],
      [key('op'), 'reply'],
      [key('body'), new Map<unknown, unknown>([[key('a'), body]])],
    ]);
    const m = decodeOk(new Packr({ useRecords: false, mapsAsObjects: false }).pack(msg));
    if (m.kind !== 'reply') throw new Error('kind');
    const a = m.body['a'] as WireNdArray;
    expect(a.dtype).toBe('float32');
    expect(Array.from(a.data as Float32Array)).toEqual([3]);
  });

  it('converts 64-bit integers within 2^53 and refuses larger ones', () => {
    // { v: 1, id: 1, op: "reply", body: { t: uint64 } } written by hand (0xcf = uint64)
    const ok = decodeOk(
      Buffer.from([
        0x84,
        0xa1,
        0x76,
        1,
        0xa2,
        0x69,
        0x64,
        1,
        0xa2,
        0x6f,
        0x70,
        0xa5,
        ...Buffer.from('reply'),
        0xa4,
        ...Buffer.from('body'),
        0x81,
        0xa1,
        0x74,
        0xcf,
        0,
        0,
        0,
        1,
        0,
        0,
        0,
        0,
      ]),
    );
    expect(ok.kind === 'reply' && ok.body['t']).toBe(2 ** 32);
    const r = decodeMessage(
      Buffer.from([
        0x84,
        0xa1,
        0x76,
        1,
        0xa2,
        0x69,
        0x64,
        1,
        0xa2,
        0x6f,
        0x70,
        0xa5,
        ...Buffer.from('reply'),
        0xa4,
        ...Buffer.from('body'),
        0x81,
        0xa1,
        0x74,
        0xcf,
        0xff,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
      ]),
    );
    expect(r.ok).toBe(false);
  });

  it('validates reply bodies by op', () => {
    expect(parseReplyBody('ping', { t: 3 }).ok).toBe(true);
    const bad = parseReplyBody('make', { handle: 'h1' });
    expect(bad.ok).toBe(false);
  });

  it('round-trips bodies holding many ndarrays at any nesting, frame after frame (property, seeded)', () => {
    const arbArray = fc
      .tuple(fc.constantFrom('uint8', 'float32', 'float64', 'int16', 'bool'), fc.integer({ min: 0, max: 300 }))
      .map(([dtype, n]) => {
        const bytes = Uint8Array.from(
          { length: n * ({ uint8: 1, float32: 4, float64: 8, int16: 2, bool: 1 } as const)[dtype] },
          (_, i) => (i * 31 + n) & 0xff,
        );
        const ctor = {
          uint8: Uint8Array,
          float32: Float32Array,
          float64: Float64Array,
          int16: Int16Array,
          bool: Uint8Array,
        }[dtype];
        return ndarray(dtype, [n], new ctor(bytes.buffer, 0, n));
      });
    const arbBody = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 5 }),
      fc.oneof(arbArray, fc.array(arbArray, { maxLength: 3 }), fc.string(), fc.integer()),
      { maxKeys: 5 },
    );
    fc.assert(
      fc.property(fc.array(arbBody, { minLength: 1, maxLength: 4 }), (bodies) => {
        const frames = bodies.map((body, i) => {
          const e = encodeMessage({ kind: 'reply', id: i, body });
          if (!e.ok) throw new Error(e.message);
          return e.bytes;
        });
        frames.forEach((frame, i) => {
          const m = decodeOk(frame);
          if (m.kind !== 'reply') throw new Error('kind');
          const same = (a: unknown, b: unknown): boolean => {
            if (a instanceof WireNdArray) return b instanceof WireNdArray && ndarraysEqual(a, b);
            if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, j) => same(x, b[j]));
            if (a !== null && typeof a === 'object')
              return Object.keys(a).every((k) =>
                same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
              );
            return Object.is(a, b);
          };
          expect(same(bodies[i], m.body)).toBe(true);
        });
      }),
      { seed: 31, numRuns: 300 },
    );
  });

  it('never throws on arbitrary bytes (property, seeded)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const r = decodeMessage(bytes);
        expect(typeof r.ok).toBe('boolean');
      }),
      { seed: 11, numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.anything(), (v) => {
        let bytes: Buffer;
        try {
          bytes = enc(v);
        } catch {
          return;
        }
        const r = decodeMessage(bytes);
        if (!r.ok) expect(['E_BAD_MESSAGE', 'E_VERSION', 'E_UNKNOWN_OP']).toContain(r.code);
      }),
      { seed: 12, numRuns: 1000 },
    );
  });
});
