import { describe, expect, it } from 'vitest';
import { bytesOf, type ElementArray } from '../../src/core/typed-bytes.js';

const viaBuffer = (a: ElementArray): number[] => [...new Uint8Array(a.buffer, a.byteOffset, a.byteLength)];

describe('bytesOf equals the bytes of the array', () => {
  it('on small (on-heap) and large arrays of every element type, views at offsets, NaN payloads', () => {
    const ctors = [
      Float32Array,
      Float64Array,
      Uint16Array,
      Int16Array,
      Uint32Array,
      Int32Array,
      Uint8Array,
      Int8Array,
      Uint8ClampedArray,
    ];
    let seed = 7;
    const rnd = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) & 0xff;
    for (const C of ctors) {
      for (const n of [0, 1, 3, 8, 16, 17, 100]) {
        const raw = new Uint8Array(n * C.BYTES_PER_ELEMENT + 2 * C.BYTES_PER_ELEMENT).map(rnd);
        const view = new C(raw.buffer, C.BYTES_PER_ELEMENT, n) as ElementArray;
        const copy = new C(view as never) as ElementArray; // a fresh array (on-heap when small)
        expect([...bytesOf(view)]).toEqual(viaBuffer(view));
        expect([...bytesOf(copy)]).toEqual(viaBuffer(copy));
      }
    }
    const nan = new Float32Array(2);
    new Uint32Array(nan.buffer).set([0x7fc12345, 0xffa00001]);
    expect([...bytesOf(new Float32Array(nan))]).toEqual([...new Uint8Array(nan.buffer)]);
  });
});
