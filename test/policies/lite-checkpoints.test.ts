/**
 * Competence smoke tests of the committed lite checkpoints through the TS runtime on ShellGameTouch-lite
 * (strict, blackout from step 6), seeds 0–59 (demonstrations used seeds 100000+). The full band and Wilson
 * intervals are printed by scripts/checkpoints/measure.ts (checkpoints/README.md).
 */
import { describe, expect, it } from 'vitest';
import { measureCompetence, type ConditionResult } from '../../scripts/checkpoints/competence.js';
import { LITE_BLIND, LITE_MEMVLA } from './helpers.js';

const N = 60;
const rate = (r: ConditionResult | undefined): number => (r === undefined ? NaN : r.successes / r.n);

describe('lite checkpoints: competence', () => {
  it('lite-memvla needs its bank: memory ≫ blocked reads ≈ 1/3, and a different-fact substitution moves the decision', async () => {
    const [memory, blocked, different] = await measureCompetence({
      checkpoint: LITE_MEMVLA,
      task: 'shell',
      seedFrom: 0,
      count: N,
    });
    expect(rate(memory)).toBeGreaterThanOrEqual(0.9);
    expect(rate(blocked)).toBeGreaterThan(0.15);
    expect(rate(blocked)).toBeLessThan(0.55);
    expect(rate(memory) - rate(blocked)).toBeGreaterThan(0.4);
    // Positive control: with every read substituted by another episode's (different answer) records, the policy
    // goes where the donor's memory says.
    const followed = different?.episodes.filter((e) => e.decision !== null && e.decision === e.donorAnswer).length ?? 0;
    expect(followed / N).toBeGreaterThanOrEqual(0.8);
    expect(rate(different)).toBeLessThan(0.2);
    expect(different?.substitutedReads).toBeGreaterThan(0);
  });

  it('lite-blind does not depend on its bank: identical outcomes with memory, blocked and substituted reads', async () => {
    const [memory, blocked, different] = await measureCompetence({
      checkpoint: LITE_BLIND,
      task: 'shell',
      seedFrom: 0,
      count: N,
    });
    const key = (r: ConditionResult | undefined) => r?.episodes.map((e) => `${e.decision}/${e.success}/${e.steps}`);
    expect(key(blocked)).toEqual(key(memory));
    expect(key(different)).toEqual(key(memory));
    expect(rate(memory)).toBeGreaterThan(0.15);
    expect(rate(memory)).toBeLessThan(0.55);
  });
});
