import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import {
  armBounds,
  armContrastBounds,
  blockBounds,
  contrastBounds,
  IDENTIFICATION_LABEL,
  rational,
  rationalToNumber,
  rationalToString,
  type Block,
  type ConstituentOutcome,
} from '../../src/stats/identification-bounds.js';

function expectDomain(fn: () => unknown, field: string): void {
  try {
    fn();
    expect.unreachable();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    expect((e as ImepError).code).toBe('E_STATS_DOMAIN');
    expect((e as ImepError).field).toBe(field);
  }
}

const OK: ConstituentOutcome[] = [1, 1, 1, 1];
const FAIL: ConstituentOutcome[] = [1, 0, 1, 1];
const UNRESOLVED: ConstituentOutcome[] = [1, 1, null, 1];

/**
 * An arm of 48 pair-repeat blocks in 24 source-pair clusters (two repeats each), four constituents per
 * block (two variants × reveal/override), with the given numbers of successful and unresolved blocks.
 */
function arm(successes: number, unresolved: number): Block[] {
  const blocks: Block[] = [];
  for (let i = 0; i < 48; i++) {
    const outcomes = i < successes ? OK : i < successes + unresolved ? UNRESOLVED : FAIL;
    blocks.push({ cluster: `pair-${Math.floor(i / 2)}`, outcomes });
  }
  return blocks;
}

describe('identification bounds', () => {
  it('classifies blocks: all succeed → 1, any observed 0 → 0, otherwise an unresolved constituent → [0, 1]', () => {
    expect(blockBounds(OK)).toEqual({ status: 'success', lower: 1, upper: 1 });
    expect(blockBounds(FAIL)).toEqual({ status: 'failure', lower: 0, upper: 0 });
    expect(blockBounds([null, 0])).toEqual({ status: 'failure', lower: 0, upper: 0 });
    expect(blockBounds(UNRESOLVED)).toEqual({ status: 'unresolved', lower: 0, upper: 1 });
    expect(blockBounds([null])).toEqual({ status: 'unresolved', lower: 0, upper: 1 });
  });

  // Update-sufficiency audit, Table 2: DeepSeek joint, frontier 45/48 vs structured H 19/48 with one
  // unresolved block → [0.520833, 0.541667] = [25/48, 26/48].
  it('reproduces the audit: 45/48 against 19/48 + 1 unresolved → [0.520833, 0.541667]', () => {
    const r = armContrastBounds(arm(45, 0), arm(19, 1));
    expect(r.label).toBe(IDENTIFICATION_LABEL);
    expect(r.label).toContain('not a confidence interval');
    expect(r.lower.toFixed(6)).toBe('0.520833');
    expect(r.upper.toFixed(6)).toBe('0.541667');
    expect(rationalToString(r.exact.lower)).toBe('25/48');
    expect(rationalToString(r.exact.upper)).toBe('13/24');
  });

  it('reproduces the audit: GLM joint 28/48 against 13/48 + 1 unresolved → [0.291667, 0.312500]', () => {
    const r = armContrastBounds(arm(28, 0), arm(13, 1));
    expect(r.lower.toFixed(6)).toBe('0.291667');
    expect(r.upper.toFixed(6)).toBe('0.312500');
    expect(rationalToString(r.exact.lower)).toBe('7/24');
    expect(rationalToString(r.exact.upper)).toBe('5/16');
  });

  it('the same numbers arise with the unresolved block in the other arm (44 + 1 unresolved vs 19/48)', () => {
    const r = armContrastBounds(arm(44, 1), arm(19, 0));
    expect(rationalToString(r.exact.lower)).toBe('25/48');
    expect(rationalToString(r.exact.upper)).toBe('13/24');
  });

  it('averages blocks within clusters, then clusters; an unclustered block is its own cluster (hand-computed)', () => {
    const blocks: Block[] = [
      { cluster: 'A', outcomes: [1] },
      { cluster: 'A', outcomes: [0] },
      { cluster: 'B', outcomes: [1, 1] },
      { cluster: 'C', outcomes: [null, 1] },
      { outcomes: [0] },
    ];
    // Clusters: A = 1/2, B = 1, C ∈ [0, 1], unclustered = 0 → L = (1/2 + 1 + 0 + 0)/4 = 3/8,
    // U = (1/2 + 1 + 1 + 0)/4 = 5/8. (The plain block mean would be [2/5, 3/5].)
    const r = armBounds(blocks);
    expect(rationalToString(r.exact.lower)).toBe('3/8');
    expect(rationalToString(r.exact.upper)).toBe('5/8');
    expect(r.lower).toBe(0.375);
    expect(r.upper).toBe(0.625);
    expect(r.counts).toEqual({ blocks: 5, clusters: 4, success: 2, failure: 2, unresolved: 1 });
  });

  it('weights clusters equally whatever their size (hand-computed)', () => {
    const blocks: Block[] = [
      { cluster: 'big', outcomes: [1] },
      { cluster: 'big', outcomes: [1] },
      { cluster: 'big', outcomes: [0] },
      { cluster: 'small', outcomes: [null] },
    ];
    // big = 2/3; small ∈ [0, 1] → [1/3, 5/6].
    const r = armBounds(blocks);
    expect(rationalToString(r.exact.lower)).toBe('1/3');
    expect(rationalToString(r.exact.upper)).toBe('5/6');
    const y = armBounds([{ outcomes: [1] }, { outcomes: [null] }, { outcomes: [0] }]); // [1/3, 2/3]
    const d = contrastBounds(r, y);
    expect(rationalToString(d.exact.lower)).toBe('-1/3'); // 1/3 − 2/3
    expect(rationalToString(d.exact.upper)).toBe('1/2'); // 5/6 − 1/3
    expect(d.lower).toBeCloseTo(-1 / 3, 15);
  });

  it('fully resolved arms give a point (L = U)', () => {
    const r = armBounds(arm(30, 0));
    expect(r.lower).toBe(r.upper);
    expect(rationalToString(r.exact.lower)).toBe('5/8');
  });

  it('validates input, naming the path', () => {
    expectDomain(() => armBounds([]), 'blocks');
    expectDomain(() => armBounds([{ outcomes: [] }]), 'blocks[0].outcomes');
    expectDomain(
      () => armBounds([{ outcomes: [1] }, { outcomes: [1, 2 as unknown as ConstituentOutcome] }]),
      'blocks[1].outcomes[1]',
    );
    expectDomain(() => rational(1n, 0n), 'den');
  });

  it('converts large rationals to the nearest double', () => {
    const big = rational(10n ** 40n + 1n, 3n * 10n ** 40n);
    expect(rationalToNumber(big)).toBeCloseTo(1 / 3, 15);
    expect(rationalToNumber(rational(-(10n ** 30n), 4n * 10n ** 30n))).toBe(-0.25);
  });

  it('L ≤ U, both in [0, 1], bracket every completion of the unresolved outcomes (property, seeded)', () => {
    const outcome = fc.constantFrom<ConstituentOutcome>(0, 1, null);
    const block = fc.record({
      outcomes: fc.array(outcome, { minLength: 1, maxLength: 4 }),
      cluster: fc.option(fc.constantFrom('p', 'q', 'r', 's'), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(block, { minLength: 1, maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 80, maxLength: 80 }),
        (blocks, fill) => {
          const clean: Block[] = blocks.map((b) =>
            b.cluster === undefined ? { outcomes: b.outcomes } : { outcomes: b.outcomes, cluster: b.cluster },
          );
          const r = armBounds(clean);
          expect(r.lower).toBeGreaterThanOrEqual(0);
          expect(r.upper).toBeLessThanOrEqual(1);
          expect(r.lower).toBeLessThanOrEqual(r.upper);
          let k = 0;
          const filled: Block[] = clean.map((b) => ({
            ...b,
            outcomes: b.outcomes.map((o) => (o === null ? (fill[k++ % fill.length] ? 1 : 0) : o)),
          }));
          const point = armBounds(filled);
          expect(point.lower).toBe(point.upper);
          expect(point.lower).toBeGreaterThanOrEqual(r.lower - 1e-15);
          expect(point.lower).toBeLessThanOrEqual(r.upper + 1e-15);
          const self = contrastBounds(r, r);
          expect(self.lower).toBeCloseTo(r.lower - r.upper, 15);
          expect(self.upper).toBeCloseTo(r.upper - r.lower, 15);
        },
      ),
      { seed: 2026, numRuns: 300 },
    );
  });
});
