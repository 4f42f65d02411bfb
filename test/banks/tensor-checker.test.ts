import { describe, expect, it } from 'vitest';
import { TensorChecker } from '../../src/banks/validate.js';

/** TensorChecker skips the checks only for a tensor that cannot have changed since it passed. */
describe('TensorChecker', () => {
  it('re-checks whatever could have changed: an unfrozen shape, a swapped data array, a new dtype', () => {
    const c: TensorChecker = new TensorChecker();
    const shape = [4];
    const t = { dtype: 'float32', shape, data: new Float32Array(4) } as {
      dtype: string;
      shape: number[];
      data: Float32Array | Float64Array;
    };
    c.check(t as unknown, 'feature');
    shape[0] = 5; // not frozen: never cached, so the mutation is caught
    expect(() => c.check(t as unknown, 'feature')).toThrow(/does not hold 4 values/);
    const frozen = { dtype: 'float32', shape: Object.freeze([4]), data: new Float32Array(4) } as {
      dtype: string;
      shape: readonly number[];
      data: Float32Array | Float64Array;
    };
    c.check(frozen as unknown, 'feature');
    c.check(frozen as unknown, 'feature'); // cached: passes
    frozen.data = new Float32Array(3);
    expect(() => c.check(frozen as unknown, 'feature')).toThrow(/does not hold 3 values/);
    frozen.data = new Float64Array(4);
    expect(() => c.check(frozen as unknown, 'feature')).toThrow(/storage does not match dtype float32/);
    frozen.dtype = 'int8';
    expect(() => c.check(frozen as unknown, 'feature')).toThrow(/unknown dtype int8/);
    expect(() => c.check(null, 'feature')).toThrow(/not a tensor/);
  });
});
