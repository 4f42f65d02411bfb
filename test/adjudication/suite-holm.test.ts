/**
 * A suite's per-task p-below criteria decide on the Holm-adjusted p of their family over the tasks, by hand:
 * one-sided exact McNemar p = 2^−b at c = 0, so b = 6, 5, 0 give p = 1/64, 1/32, 1; Holm (m = 3) adjusts them to
 * 3/64 = 0.046875, max(3/64, 2 · 1/32) = 1/16 = 0.0625 and 1. At α = 0.05 ShellGameTouch holds, RememberColor3 does
 * NOT (its raw p 1/32 would have held unadjusted), RememberColor5 does not; the pooled criterion (b = 11) holds.
 * The per-task estimands count that task's units only, and the independent cross-check agrees with all of it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicateUnit, type Adjudication, type AvailableEstimand } from '../../src/adjudication/index.js';
import { crossCheckUnit } from '../../src/crosscheck/index.js';
import { mcnemarExact } from '../../src/stats/index.js';
import { protocolHash, ProtocolSchema } from '../../src/protocol/index.js';
import { removeTree, tempDir } from '../evidence/helpers.js';
import { buildSealedUnit, clock, REVIEWER } from './fixtures.js';
import { COMPETENCE, suiteInput, suiteOutcome } from './suite-fixture.js';
import type { EpisodeContext, RowSpec } from './fixtures.js';

let root: string;
let a: Adjudication;
beforeAll(async () => {
  root = await tempDir('imep-suite-holm-');
  const dir = join(root, 'suite');
  await buildSealedUnit(dir, suiteInput(), suiteOutcome, { id: 'suite' });
  a = (await adjudicateUnit(dir, { operator: REVIEWER, now: clock })).adjudication;
  expect((await crossCheckUnit(dir, { operator: REVIEWER, now: clock })).outcome).toBe('agrees');
});
afterAll(async () => removeTree(root));

const verdict = (id: string) => a.verdicts.find((v) => v.criterion === id);

describe('a suite adjudicated', () => {
  it('the frozen protocol (protocol.json, precommitted) registers the per-task estimands, criteria and family', async () => {
    const text = await readFile(join(root, 'suite', 'protocol.json'), 'utf8');
    const frozen = JSON.parse(text) as {
      estimands: { id: string }[];
      criteria: { id: string }[];
      holmFamilies: { id: string }[];
    };
    expect(frozen.estimands.map((e) => e.id)).toContain('D_N@RememberColor5');
    expect(frozen.criteria.map((c) => c.id)).toContain('Q1_eligibility@RememberColor3');
    expect(frozen.holmFamilies.map((f) => f.id)).toEqual(['Q1_eligibility_tasks']);
    // it parses to itself, so every later stage reads the same protocol under the same hash
    expect(protocolHash(ProtocolSchema.parse(frozen))).toBe(protocolHash(ProtocolSchema.parse(suiteInput())));
  });

  it('per-task estimands count their own task only; the pooled ones all tasks', () => {
    const counts = (id: string) => (a.estimands.find((e) => e.id === id) as AvailableEstimand).counts;
    expect(counts('D_N@ShellGameTouch')).toEqual({ n: 8, b: 6, c: 0 });
    expect(counts('D_N@RememberColor3')).toEqual({ n: 8, b: 5, c: 0 });
    expect(counts('D_N@RememberColor5')).toEqual({ n: 8, b: 0, c: 0 });
    expect(counts('D_N')).toEqual({ n: 24, b: 11, c: 0 });
    expect(counts('SR_A@RememberColor3')).toEqual({ n: 8, successes: 8 });
  });

  it('the Holm family over the tasks, by hand', () => {
    expect([6, 5, 0].map((b) => mcnemarExact(b, 0, 'greater'))).toEqual([1 / 64, 1 / 32, 1]);
    const f = a.holm.find((x) => x.id === 'Q1_eligibility_tasks');
    expect(f?.members.map((m) => [m.estimand, m.p, m.adjusted, m.rejected])).toEqual([
      ['D_N@ShellGameTouch', 1 / 64, 3 / 64, true],
      ['D_N@RememberColor3', 1 / 32, 1 / 16, false],
      ['D_N@RememberColor5', 1, 1, false],
    ]);
  });

  it('each per-task criterion decides on its adjusted p; the pooled one on its own', () => {
    expect(verdict('Q1_eligibility@ShellGameTouch')).toMatchObject({ verdict: 'holds', bound: { p: 3 / 64 } });
    const rc3 = verdict('Q1_eligibility@RememberColor3');
    expect(rc3).toMatchObject({ verdict: 'unresolved', bound: { p: 1 / 16 } });
    expect(rc3?.reason).toContain('Holm-adjusted in family Q1_eligibility_tasks');
    expect(verdict('Q1_eligibility@RememberColor5')).toMatchObject({ verdict: 'unresolved', bound: { p: 1 } });
    expect(verdict('Q1_eligibility')).toMatchObject({ verdict: 'holds', bound: { p: 2 ** -11 } });
  });
});

describe('a suite whose task fails competence', () => {
  // RememberColor5's A succeeds on 2 of 8 units (N_blk and C follow A there): the competence gate excludes the task
  const outcome = (ctx: EpisodeContext): RowSpec => (ctx.taskIndex === 2 ? { success: ctx.i < 2 } : suiteOutcome(ctx));
  let x: Adjudication;
  beforeAll(async () => {
    const dir = join(root, 'suite-excluded');
    await buildSealedUnit(dir, suiteInput(COMPETENCE), outcome, { id: 'suite-excluded' });
    x = (await adjudicateUnit(dir, { operator: REVIEWER, now: clock })).adjudication;
    expect((await crossCheckUnit(dir, { operator: REVIEWER, now: clock })).outcome).toBe('agrees');
  });

  it("its per-task criterion reads excluded; its family slot stays at p = 1; the others' adjusted p are unchanged", () => {
    expect(x.verdicts.find((v) => v.criterion === 'Q1_eligibility@RememberColor5')).toMatchObject({
      verdict: 'excluded',
      because: ['gate competence'],
    });
    const f = x.holm.find((h) => h.id === 'Q1_eligibility_tasks');
    expect(f?.members.map((m) => [m.estimand, m.status, m.adjusted])).toEqual([
      ['D_N@ShellGameTouch', 'available', 3 / 64],
      ['D_N@RememberColor3', 'available', 1 / 16],
      ['D_N@RememberColor5', 'unavailable', null],
    ]);
    expect(x.verdicts.find((v) => v.criterion === 'Q1_eligibility@ShellGameTouch')?.verdict).toBe('holds');
    expect((x.estimands.find((e) => e.id === 'D_N') as AvailableEstimand).counts).toEqual({ n: 16, b: 11, c: 0 });
  });
});
