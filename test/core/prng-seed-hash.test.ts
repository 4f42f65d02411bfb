import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { seedToUint32 } from '../../src/core/prng.js';

/** The seed hash as first written: FNV-1a 64 in BigInt arithmetic over UTF-8 bytes, halves xor-folded. */
function fnv1a32Reference(text: string): number {
  let h = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * prime) & 0xffffffffffffffffn;
  }
  return Number((h >> 32n) ^ (h & 0xffffffffn)) >>> 0;
}

describe('seedToUint32 string hashing (uint32-halves FNV-1a) equals the BigInt reference', () => {
  it('on fixed seeds: empty, ASCII, multi-byte, astral, lone surrogates, long', () => {
    for (const s of [
      '',
      'a',
      'abc',
      '610000/tool',
      'héllo',
      '\u0800\uffff',
      '😀 x',
      '\ud800',
      'a\udc00b',
      'x'.repeat(5000),
    ]) {
      expect(seedToUint32(s)).toBe(fnv1a32Reference(`string:${s}`));
    }
    for (const x of [-1, 1.5, 2 ** 32, Number.NaN, -0.25])
      expect(seedToUint32(x)).toBe(fnv1a32Reference(`number:${String(x)}`));
  });
  it('on arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 64 }),
        (s) => seedToUint32(s) === fnv1a32Reference(`string:${s}`),
      ),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), (s) => seedToUint32(s) === fnv1a32Reference(`string:${s}`)),
      { numRuns: 3000 },
    );
  });
});
