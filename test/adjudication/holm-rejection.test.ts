/**
 * A Holm family member is marked rejected by the rule a `p-below` criterion registers: its adjusted p lies BELOW
 * the family's α (the paper's "one-sided p < 0.05"), so the family table and the verdict never disagree. Exact
 * McNemar p-values are multiples of 2^−m, so the tie needs a dyadic α: 2^−4 with b = 4, c = 0 (p = 1/16 exactly).
 */
import { describe, expect, it } from 'vitest';
import { holmFamilyResults } from '../../src/adjudication/holm-families.js';
import type { EstimandResult } from '../../src/adjudication/index.js';
import type { Protocol } from '../../src/protocol/schema.js';
import { mcnemarExact } from '../../src/stats/index.js';

const family = (alpha: number, contrasts: string[]): Protocol =>
  ({
    holmFamilies: [{ id: 'f', alpha, test: 'mcnemar-exact-one-sided', contrasts, repairBudget: 0 }],
  }) as unknown as Protocol;
const paired = (id: string, b: number, c: number): EstimandResult =>
  ({
    id,
    status: 'available',
    conditions: { reference: 'A', intervention: 'X' },
    counts: { b, c },
  }) as unknown as EstimandResult;

describe('Holm family rejection', () => {
  it('an adjusted p equal to α is not rejected; one below it is', () => {
    expect(mcnemarExact(4, 0, 'greater')).toBe(1 / 16);
    const [tie] = holmFamilyResults(family(1 / 16, ['D']), [paired('D', 4, 0)], []);
    expect(tie?.members[0]).toMatchObject({ p: 1 / 16, adjusted: 1 / 16, rejected: false });
    const [below] = holmFamilyResults(family(1 / 16, ['D']), [paired('D', 5, 0)], []);
    expect(below?.members[0]).toMatchObject({ p: 1 / 32, adjusted: 1 / 32, rejected: true });
  });

  it('the adjusted value, not the raw p, decides: m = 2 doubles the smaller p onto α', () => {
    // p = 1/32 and 1/2: adjusted 2 · 1/32 = 1/16 = α (not rejected) and max(1/16, 1/2) = 1/2
    const [f] = holmFamilyResults(family(1 / 16, ['D1', 'D2']), [paired('D1', 5, 0), paired('D2', 1, 0)], []);
    expect(f?.members.map((m) => [m.adjusted, m.rejected])).toEqual([
      [1 / 16, false],
      [1 / 2, false],
    ]);
  });
});
