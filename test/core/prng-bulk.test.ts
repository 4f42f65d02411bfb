import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Prng } from '../../src/core/prng.js';
import { referenceXoshiro } from '../support/reference-xoshiro.js';

fc.configureGlobal({ seed: 20261108, numRuns: 300 });

describe('Prng.fillUint32: the same stream as nextUint32, in bulk', () => {
  it('gives exactly the values of repeated nextUint32 calls, for any count', () => {
    for (const count of [0, 1, 2, 3, 7, 64, 4095, 4096, 4097, 100_000]) {
      const a = new Prng(`fill/${count}`),
        b = new Prng(`fill/${count}`);
      const out = a.fillUint32(new Uint32Array(count));
      for (let i = 0; i < count; i++)
        if (out[i] !== b.nextUint32()) throw new Error(`count ${count}: draw ${i} differs`);
      expect(a.nextUint32()).toBe(b.nextUint32()); // and leaves the stream at the same place
    }
  });

  it('matches the independent BigInt xoshiro128** reference', () => {
    const out = new Prng(1).fillUint32(new Uint32Array(16));
    expect(Array.from(out)).toEqual(referenceXoshiro(1, 16));
  });

  it('interleaves freely with nextUint32, nextFloat, nextInt, nextNormal and shuffle', () => {
    const opArb = fc.oneof(
      fc.record({
        op: fc.constant('fill' as const),
        n: fc.integer({ min: 0, max: 40 }),
        extra: fc.integer({ min: 0, max: 5 }),
      }),
      fc.record({ op: fc.constantFrom('u32' as const, 'float' as const, 'normal' as const) }),
      fc.record({ op: fc.constant('int' as const), n: fc.integer({ min: 1, max: 0xffffffff }) }),
      fc.record({ op: fc.constant('shuffle' as const), n: fc.integer({ min: 0, max: 30 }) }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.string()), fc.array(opArb, { maxLength: 40 }), (seed, ops) => {
        const bulk = new Prng(seed),
          single = new Prng(seed);
        const got: number[] = [],
          want: number[] = [];
        for (const o of ops) {
          switch (o.op) {
            case 'fill': {
              // a longer array with a sentinel tail: only out[0..n) is written
              const out = new Uint32Array(o.n + o.extra).fill(0xdeadbeef);
              bulk.fillUint32(out, o.n);
              got.push(...out);
              for (let i = 0; i < o.n; i++) want.push(single.nextUint32());
              for (let i = 0; i < o.extra; i++) want.push(0xdeadbeef);
              break;
            }
            case 'u32':
              got.push(bulk.nextUint32());
              want.push(single.nextUint32());
              break;
            case 'float':
              got.push(bulk.nextFloat());
              want.push(single.nextFloat());
              break;
            case 'normal':
              got.push(bulk.nextNormal());
              want.push(single.nextNormal());
              break;
            case 'int':
              got.push(bulk.nextInt(o.n));
              want.push(single.nextInt(o.n));
              break;
            case 'shuffle': {
              const xs = Array.from({ length: o.n }, (_, i) => i);
              got.push(...bulk.shuffle([...xs]));
              want.push(...single.shuffle([...xs]));
              break;
            }
          }
        }
        got.push(bulk.nextUint32());
        want.push(single.nextUint32());
        expect(got).toEqual(want);
      }),
    );
  });

  it('fills the whole array by default, returns it, and rejects bad counts without drawing', () => {
    const a = new Prng(5),
      b = new Prng(5);
    const out = new Uint32Array(9);
    expect(a.fillUint32(out)).toBe(out);
    expect(Array.from(out)).toEqual(Array.from({ length: 9 }, () => b.nextUint32()));
    for (const bad of [-1, 1.5, 10, Number.NaN]) expect(() => a.fillUint32(out, bad)).toThrow(RangeError);
    expect(a.nextUint32()).toBe(b.nextUint32());
  });

  it('forks are unaffected by bulk draws of the parent', () => {
    const a = new Prng('fork'),
      b = new Prng('fork');
    a.fillUint32(new Uint32Array(1000));
    expect(a.fork('x').nextUint32()).toBe(b.fork('x').nextUint32());
  });
});
