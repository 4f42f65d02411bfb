import { describe, expect, it } from 'vitest';
import type { RetrievedItem } from '../../src/banks/record.js';
import { tensorFrom } from '../../src/core/tensor.js';
import { itemDigest, selectedItemDigest } from '../../src/interventions/digest.js';

const identity = Object.freeze({ slot: 0, scope: 'ep', sourceEpisode: 'ep', timestep: 3, version: 0 });
const item = (
  values: number[],
  shape: number[] = [values.length],
  name = 'feature',
  id: RetrievedItem['identity'] = identity,
): RetrievedItem => ({
  identity: id,
  leaves: { [name]: tensorFrom('float32', values, shape) },
});

describe('selectedItemDigest (remembered per identity object) is always itemDigest of the bytes given', () => {
  it('repeats, then changed values, shape, leaf name, leaf count and digest length under the same identity', () => {
    const cases: RetrievedItem[] = [
      item([1, 2, 3, 4]),
      item([1, 2, 3, 4]),
      item([1, 2, 3, 5]),
      item([1, 2, 3, 4]),
      item([1, 2, 3, 4], [2, 2]),
      item([1, 2, 3, 4], [4], 'other'),
      item([1, 2, 3]),
      item([-0, 2, 3, 4]),
      { identity, leaves: { a: tensorFrom('float32', [1]), b: tensorFrom('float64', [2, 3]) } },
      { identity, leaves: { b: tensorFrom('float64', [2, 3]), a: tensorFrom('float32', [1]) } },
      item(Array.from({ length: 3000 }, (_, i) => i / 7)),
      item([1, 2, 3, 4], [4], 'feature', Object.freeze({ ...identity })),
    ];
    for (const it of cases) {
      expect(selectedItemDigest(it)).toBe(itemDigest(it));
      expect(selectedItemDigest(it, 8)).toBe(itemDigest(it, 8));
      expect(selectedItemDigest(it, 64)).toBe(itemDigest(it, 64));
    }
  });
  it('after a leaf mutated in place under the same identity', () => {
    const it = item([9, 8, 7]);
    const d0 = selectedItemDigest(it);
    (it.leaves['feature']!.data as Float32Array)[1] = 0;
    expect(selectedItemDigest(it)).toBe(itemDigest(it));
    expect(selectedItemDigest(it)).not.toBe(d0);
  });
});
