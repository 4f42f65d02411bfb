import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import {
  canonicalBytes,
  canonicalHash,
  canonicalJson,
  canonicalNumber,
  canonicalPrettyJson,
  toJsonValue,
} from '../../src/core/canonical-json.js';

describe('canonical JSON: goldens', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: { e: 2, d: { z: [], y: {} } } })).toBe(
      '{"a":[true,null,"x"],"b":1,"c":{"d":{"y":{},"z":[]},"e":2}}',
    );
  });

  it('matches the RFC 8785 sample object', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('orders keys by UTF-16 code units, not code points', () => {
    // U+1F600 is the surrogate pair D83D DE00, which sorts before U+FB33 in UTF-16 order.
    const value = { '\ufb33': 1, '\u{1f600}': 2, a: 3, '\u0080': 4, '€': 5, A: 6, '': 7 };
    expect(canonicalJson(value)).toBe('{"":7,"A":6,"a":3,"\u0080":4,"€":5,"\u{1f600}":2,"\ufb33":1}');
  });

  it('escapes only quote, backslash and control characters', () => {
    const s = '\u0000\u001f"\\\n\t\b\f\r/é\u{1f600}\u2028\u007f';
    expect(canonicalJson(s)).toBe('"\\u0000\\u001f\\"\\\\\\n\\t\\b\\f\\r/é\u{1f600}\u2028\u007f"');
  });

  it('writes numbers in shortest round-trip form', () => {
    const cases: Array<[number, string]> = [
      [0, '0'],
      [-0, '0'],
      [1, '1'],
      [-1.5, '-1.5'],
      [0.1, '0.1'],
      [0.30000000000000004, '0.30000000000000004'],
      [1 / 3, '0.3333333333333333'],
      [100, '100'],
      [1e21, '1e+21'],
      [1e20, '100000000000000000000'],
      [1e-7, '1e-7'],
      [0.000001, '0.000001'],
      [1e23, '1e+23'],
      [9007199254740992, '9007199254740992'],
      [295147905179352830000, '295147905179352830000'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [-1e-7, '-1e-7'],
    ];
    for (const [n, s] of cases) {
      expect(canonicalNumber(n)).toBe(s);
      expect(canonicalJson([n])).toBe(`[${s}]`);
    }
  });

  it('normalises -0 to 0 (documented) inside structures too', () => {
    expect(canonicalJson({ a: -0, b: [-0] })).toBe('{"a":0,"b":[0]}');
  });

  it('omits object members whose value is undefined', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it('encodes as UTF-8 and hashes those bytes', () => {
    const value = { é: '\u{1f600}', n: 1 };
    const bytes = canonicalBytes(value);
    expect(Buffer.from(bytes).equals(Buffer.from('{"n":1,"é":"\u{1f600}"}', 'utf8'))).toBe(true);
    expect(canonicalHash(value)).toBe(createHash('sha256').update(Buffer.from(bytes)).digest('hex'));
  });

  it('refuses values without a canonical form, naming the path', () => {
    const bad: Array<[unknown, string]> = [
      [{ a: [1, Number.NaN] }, '$.a[1]'],
      [{ x: Infinity }, '$.x'],
      [[-Infinity], '$[0]'],
      [{ s: 'a\ud800b' }, '$.s'],
      [{ '\udc00': 1 }, '$["\\udc00"]'],
      [[undefined], '$[0]'],
      [{ big: 1n }, '$.big'],
      [{ f: () => 1 }, '$.f'],
      [{ d: new Date(0) }, '$.d'],
      [{ m: new Map() }, '$.m'],
      [Symbol('s'), '$'],
    ];
    for (const [value, path] of bad) {
      let thrown: unknown;
      try {
        canonicalJson(value);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, path).toMatchObject({ code: 'E_INTERNAL', field: path });
      expect(() => canonicalJson(value, { code: 'E_PROTOCOL_INVALID' }), path).toThrow(
        expect.objectContaining({ code: 'E_PROTOCOL_INVALID', field: path }) as Error,
      );
    }
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cyclic/);
  });

  it('accepts null-prototype objects and shared (non-cyclic) references', () => {
    const o = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: 1 });
    const shared = { x: 1 };
    expect(canonicalJson({ o, p: [shared, shared] })).toBe('{"o":{"a":1,"b":2},"p":[{"x":1},{"x":1}]}');
  });
});

/** Rebuilds every object of `v` with its keys in reverse order. */
function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).reverse()) {
      Object.defineProperty(out, k, {
        value: reverseKeys((v as Record<string, unknown>)[k]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return v;
}

describe('canonical JSON: properties', () => {
  const json = fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 4 });

  it('JSON.parse(canonical(x)) deep-equals x (with -0 read as 0)', () => {
    fc.assert(
      fc.property(json, (x) => {
        const expected = JSON.parse(JSON.stringify(x)) as unknown; // JSON maps -0 to 0, as canonical does
        expect(JSON.parse(canonicalJson(x))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('is idempotent: canonical(parse(canonical(x))) = canonical(x)', () => {
    fc.assert(
      fc.property(json, (x) => {
        const once = canonicalJson(x);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
      }),
      { numRuns: 300 },
    );
  });

  it('does not depend on key insertion order', () => {
    fc.assert(
      fc.property(json, (x) => {
        expect(canonicalJson(reverseKeys(x))).toBe(canonicalJson(x));
      }),
      { numRuns: 200 },
    );
  });

  it('numbers round-trip exactly', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const back = JSON.parse(canonicalNumber(d)) as number;
        expect(Object.is(back, d) || (Object.is(d, -0) && back === 0)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('arbitrary UTF-16 strings are either refused (lone surrogate) or round-trip', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        let out: string | undefined;
        try {
          out = canonicalJson(s);
        } catch {
          expect(/\p{Cs}/u.test(s)).toBe(true); // a lone surrogate
          return;
        }
        expect(JSON.parse(out)).toBe(s);
      }),
      { numRuns: 500 },
    );
  });
});

describe('canonical JSON: pretty form and plain values', () => {
  it('pretty-prints with sorted keys and hashes only the compact form', () => {
    expect(canonicalPrettyJson({ b: [1, { d: 1, c: 2 }], a: {} })).toBe(
      '{\n  "a": {},\n  "b": [\n    1,\n    {\n      "c": 2,\n      "d": 1\n    }\n  ]\n}\n',
    );
    expect(toJsonValue({ b: undefined, a: -0 })).toEqual({ a: 0 });
  });
});
