import { appendFile, chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { amend, readAdjudications, readUnitState } from '../../src/evidence/index.js';
import {
  adjudicateUnit,
  reproduceAdjudication,
  withholdsNumber,
  type Adjudication,
  type AvailableEstimand,
  type EstimandResult,
} from '../../src/adjudication/index.js';
import { crossCheckAdjudication } from '../../src/crosscheck/index.js';
import type { InvalidVerdict } from '../../src/adjudication/verdict-types.js';
import { flattenNumbers } from '../../src/crosscheck/flatten.js';
import { canonicalPrettyJson } from '../../src/core/canonical-json.js';
import {
  conditionalThetaBound,
  decisionBound,
  holm,
  mcnemarExact,
  pairedBootstrap,
  pairedDesign,
  tango,
  wilson,
  clopperPearsonLower,
  clopperPearsonUpper,
} from '../../src/stats/index.js';
import { copyUnit, expectImepError, removeTree, snapshot, tempDir } from '../evidence/helpers.js';
import {
  blackoutOutcome,
  blackoutProtocol,
  buildSealedUnit,
  clock,
  REVIEWER,
  RUNNER,
  substitutionOutcome,
  substitutionProtocol,
  viewRemovalOutcome,
  viewRemovalProtocol,
  defaultFirstQuery,
  type EpisodeContext,
  type RowSpec,
} from './fixtures.js';

let root: string;
let blackout: string;
let blackoutSealedCopy: string;
beforeAll(async () => {
  root = await tempDir('imep-adjudication-');
  blackout = join(root, 'blackout');
  await buildSealedUnit(blackout, blackoutProtocol(), blackoutOutcome, { amendBeforeSeal: true });
  blackoutSealedCopy = join(root, 'blackout-sealed');
  await copyUnit(blackout, blackoutSealedCopy);
});
afterAll(async () => removeTree(root));

function est(a: Adjudication, id: string): AvailableEstimand {
  const e = a.estimands.find((x) => x.id === id) as EstimandResult;
  expect(e.status, `${id} is available`).toBe('available');
  return e as AvailableEstimand;
}

function interval(e: AvailableEstimand, id: string): { lower: number; upper: number } {
  const iv = e.intervals.find((i) => i.id === id);
  expect(iv, `${e.id} has ${id}`).toBeDefined();
  return iv!;
}

async function fresh(name: string): Promise<string> {
  const dir = join(root, name);
  await copyUnit(blackoutSealedCopy, dir);
  return dir;
}

describe('adjudicateUnit on a sealed blackout ladder', () => {
  let a: Adjudication;
  let text: string;

  it('computes from the sealed rows; every number equals src/stats', async () => {
    const r = await adjudicateUnit(blackout, { operator: REVIEWER, now: clock });
    a = r.adjudication;
    text = r.text;
    expect(r.file).toBe('adjudication/001/adjudication.json');
    expect((await readUnitState(blackout)).state).toBe('adjudicated');
    expect(await readFile(join(blackout, r.file), 'utf8')).toBe(text);
    expect(canonicalPrettyJson(JSON.parse(text))).toBe(text);

    const dN = est(a, 'D_N');
    expect(dN.counts).toEqual({ n: 40, b: 10, c: 0 });
    expect(dN.estimate).toBe(0.25);
    const db = decisionBound(10, 0, 40, 0.05);
    expect(interval(dN, 'exact-cp-difference/a0.05')).toMatchObject({
      lower: db.lower,
      upper: db.upper,
      label: db.intervalLabel,
      boundLabel: db.label,
    });
    const t = tango(10, 0, 40, 0.95);
    expect(interval(dN, 'tango/l0.95')).toMatchObject({ lower: t.interval[0], upper: t.interval[1] });
    expect(dN.tests).toEqual([
      { id: 'mcnemar-exact/two-sided', p: mcnemarExact(10, 0, 'two-sided') },
      { id: 'mcnemar-exact/greater', p: mcnemarExact(10, 0, 'greater') },
    ]);

    const th = est(a, 'theta');
    expect(th.counts).toEqual({ n: 40, bPrime: 4, cPrime: 2, flipsT: 5, flipsS: 3 });
    const cb = conditionalThetaBound(4, 2, 40, 0.05);
    expect(interval(th, 'conditional-exact/a0.05')).toMatchObject({
      lower: cb.lower,
      upper: cb.upper,
      conditional: true,
      label: cb.label,
    });

    const rhoS = est(a, 'rho_S_pi');
    expect(rhoS.counts).toEqual({ n: 40, b: 2, c: 1 });
    expect(interval(rhoS, 'clopper-pearson/a0.05')).toMatchObject({
      lower: clopperPearsonLower(3, 40, 0.05),
      upper: clopperPearsonUpper(3, 40, 0.05),
    });

    const sr = est(a, 'SR_A');
    expect(sr.counts).toEqual({ n: 40, successes: 32 });
    const [wl, wu] = wilson(32, 40, 0.95);
    expect(interval(sr, 'wilson/l0.95')).toMatchObject({ lower: wl, upper: wu });

    // wave 2's anchor for N_blk and C; wave 1's for the substitutions
    expect(dN.cohort.wave).toBe(2);
    expect(est(a, 'D_S_pi').cohort.wave).toBe(1);
    // amendments are listed with their classification
    expect(a.amendments.log.map((m) => [m.id, m.classification])).toEqual([['A1', 'after-formal-data']]);
    // the store's record points at the artifact and records the operator
    const [record] = await readAdjudications(blackout);
    expect(record?.operator.id).toBe(REVIEWER.id);
    expect(record?.sameOperatorOverride).toBeNull();
    expect(record?.artifacts.map((x) => x.path)).toEqual(['adjudication/001/adjudication.json']);
  });

  it('routes the registered criteria on bounds', () => {
    const words = Object.fromEntries(a.verdicts.map((v) => [v.criterion, v.verdict]));
    expect(words).toEqual({
      Q1: 'unresolved', // [7.02, 38.71] pp straddles 10 pp
      Q1_eligibility: 'holds', // exact one-sided McNemar p = 2^-10
      Q3_S_pi: 'unresolved',
      Q3_T_mu: 'unresolved',
      Q4: 'unresolved',
      numerical_floor: 'holds',
    });
    const q4 = a.verdicts.find((v) => v.criterion === 'Q4')!;
    expect(q4.verdict !== 'invalid' && q4.verdict !== 'excluded' && q4.bound?.companions[0]?.estimand).toBe('rho_U');
    const q3 = a.verdicts.find((v) => v.criterion === 'Q3_S_pi')!;
    if (q3.verdict === 'invalid' || q3.verdict === 'excluded' || q3.bound === null) throw new Error('Q3 has a bound');
    expect(q3.bound.threshold).toBe(clopperPearsonUpper(0, 40, 0.05));
    // the retrospective Q3 reading for N_blk holds (its LB is above the exact-repeat floor)
    const retro = a.questions.find((q) => q.question === 'Q3')!.retrospective;
    expect(retro.find((r) => r.id === 'Q3:N_blk@w2')?.verdict).toBe('holds');
  });

  it('refuses a second adjudication; regeneration is read-only and reproduces the bytes', async () => {
    const before = await snapshot(blackout);
    await expectImepError(adjudicateUnit(blackout, { operator: REVIEWER }), 'E_OUT_OF_ORDER');
    await amend(blackout, {
      text: 'a note written after the adjudication',
      affects: ['gates.path'],
      author: REVIEWER,
      now: clock,
    });
    const afterAmend = await snapshot(blackout);
    const r = await adjudicateUnit(blackout, { regenerate: true });
    expect(r.regenerated).toBe(true);
    expect(r.text).toBe(text);
    expect(await reproduceAdjudication(blackout).then((x) => x.text)).toBe(text);
    expect(await snapshot(blackout)).toEqual(afterAmend);
    expect(Object.keys(afterAmend).filter((k) => !(k in before))).toEqual([]);
  });
});

describe('refusals', () => {
  it('refuses a tampered unit naming the first bad file', async () => {
    const dir = await fresh('tampered');
    const rows = join(dir, 'rows', 'rows.jsonl');
    await chmod(join(dir, 'rows'), 0o755);
    await chmod(rows, 0o644);
    await appendFile(rows, ' ');
    const e = await expectImepError(adjudicateUnit(dir, { operator: REVIEWER }), 'E_UNIT_TAMPERED');
    expect(e.file).toBe(rows);
    expect(e.message).toContain('appended');
  });

  it('refuses an unsealed unit', async () => {
    const dir = join(root, 'unsealed');
    const { createUnit } = await import('../../src/evidence/index.js');
    await createUnit(dir, { id: 'unsealed', operator: RUNNER, now: clock });
    await expectImepError(adjudicateUnit(dir, { operator: REVIEWER }), 'E_OUT_OF_ORDER');
  });

  it('refuses the operator who ran the conditions, and records an override with its reason', async () => {
    const dir = await fresh('same-operator');
    const e = await expectImepError(adjudicateUnit(dir, { operator: RUNNER }), 'E_SAME_OPERATOR');
    expect(e.message).toContain("operator 'runner-session' ran the conditions");
    expect((await readUnitState(dir)).state).toBe('sealed');
    const r = await adjudicateUnit(dir, {
      operator: RUNNER,
      allowSameOperator: { reason: 'single-operator test bench' },
    });
    expect(r.adjudication.sameOperatorOverride).toEqual({
      by: 'runner-session',
      reason: 'single-operator test bench',
      ranBy: ['runner-session'],
    });
    expect(r.record.sameOperatorOverride?.reason).toBe('single-operator test bench');
  });
});

describe('verdict routing', () => {
  it('holds and unresolved on the registered 2×2 rule; upper-bound-below holds when its claim (UB below the margin) is met', async () => {
    const dir = join(root, 'view-removal');
    await buildSealedUnit(dir, viewRemovalProtocol(), viewRemovalOutcome, { id: 'view-removal' });
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    const v = Object.fromEntries(a.verdicts.map((x) => [x.criterion, x]));
    expect(v['view_removal']?.verdict).toBe('holds');
    expect(v['blackout_floor']?.verdict).toBe('holds');
    expect(v['reads_blackout']?.verdict).toBe('unresolved');
    // reads_visible registers "D_reads_visible lies below 10 pp": its UB < 10 pp meets that claim → holds
    const met = v['reads_visible']!;
    expect(met.verdict).toBe('holds');
    if (met.verdict !== 'holds') throw new Error('unreachable');
    expect(met.bound.upper).toBe(decisionBound(1, 0, 100, 0.05).upper);
    expect(met.bound.upper).toBeLessThan(0.1);
    expect(met.registeredRuleMet).toBe(true);
    expect(est(a, 'D_reads_blackout').counts).toEqual({ n: 100, b: 9, c: 1 });
    // Q1 aggregates its primary criterion only (reads_visible is secondary)
    expect(a.questions.find((q) => q.question === 'Q1')?.verdict).toBe('unresolved');
  });

  it('invalid: a failed path gate withholds the number (the verdict carries none)', async () => {
    const dir = join(root, 'invalid');
    const leaky = (ctx: EpisodeContext): RowSpec => ({
      ...blackoutOutcome(ctx),
      ...(ctx.ep.condition === 'N_blk' && ctx.i === 3 ? { reads: { empty: 20 } } : {}),
    });
    await buildSealedUnit(dir, blackoutProtocol(), leaky, { id: 'invalid' });
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    const path = a.gates.find((g) => g.gate === 'path')!;
    expect(path.passed).toBe(false);
    expect(path.failing).toEqual(['N_blk']);
    const q1 = a.verdicts.find((x) => x.criterion === 'Q1')!;
    expect(q1.verdict).toBe('invalid');
    expect('bound' in q1).toBe(false);
    expect(q1.registeredRuleMet).toBeNull();
    expect([...flattenNumbers(q1).values()].filter((x) => x !== null)).toEqual([]);
    expect(q1.verdict === 'invalid' && q1.because).toEqual(['gate path']);
    // contrasts that do not read N_blk keep their numbers
    expect(a.verdicts.find((x) => x.criterion === 'Q3_T_mu')?.verdict).toBe('unresolved');
  });

  it('excluded: every cell failing competence excludes every verdict', async () => {
    const dir = join(root, 'excluded');
    const weak = (ctx: EpisodeContext): RowSpec => ({ ...blackoutOutcome(ctx), success: ctx.i < 10 });
    await buildSealedUnit(dir, blackoutProtocol(), weak, { id: 'excluded' });
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    expect(a.design.excludedTasks).toEqual(['ShellGameTouch-lite']);
    expect(new Set(a.verdicts.map((v) => v.verdict))).toEqual(new Set(['excluded']));
    for (const v of a.verdicts) expect('bound' in v).toBe(false);
    expect(a.goNoGo.status).toBe('descriptive');
  });

  it('descriptive: a failed go/no-go rule keeps the numbers but issues no verdict word', async () => {
    const dir = join(root, 'descriptive');
    const p = blackoutProtocol({
      goNoGo: [{ rule: 'min-discordant', estimand: 'theta', min: 20, outcome: 'descriptive' }],
    });
    await buildSealedUnit(dir, p, blackoutOutcome, { id: 'descriptive' });
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    expect(a.goNoGo.status).toBe('descriptive');
    expect(a.goNoGo.rules[0]).toMatchObject({ rule: 'min-discordant', observed: 6, expected: 20, passed: false });
    expect(new Set(a.verdicts.map((v) => v.verdict))).toEqual(new Set(['descriptive']));
  });
});

describe('gates and families', () => {
  it('sham validity divides substitutions applied by reads WITH HISTORY (all reads fails as the paper’s first artifacts did)', async () => {
    const { adjudication: a } = await reproduceAdjudication(blackout);
    const g = a.gates.find((x) => x.gate === 'sham_validity')!;
    expect(g.passed).toBe(true);
    expect(g.observed).toMatchObject({
      flips: 3,
      applied: 880,
      denominator: 880,
      readsWithHistory: 880,
      readsTotal: 920,
      fraction: 1,
    });

    const dir = join(root, 'all-reads');
    const gates = (blackoutProtocol().gates ?? []).map((x) =>
      x.kind === 'sham-validity' ? { ...x, substitutionFraction: { min: 1, denominator: 'all-reads' as const } } : x,
    );
    await buildSealedUnit(dir, blackoutProtocol({ gates }), blackoutOutcome, { id: 'all-reads' });
    const { adjudication: b } = await adjudicateUnit(dir, { operator: REVIEWER });
    const h = b.gates.find((x) => x.gate === 'sham_validity')!;
    expect(h.passed).toBe(false);
    expect(h.observed).toMatchObject({ applied: 880, denominator: 920, fraction: 880 / 920 });
    expect(h.failing).toEqual(['S_pi']);
    expect(b.verdicts.find((v) => v.criterion === 'Q4')?.verdict).toBe('invalid');
  });

  it('an unavailable condition stays in its Holm family at p = 1 and reports no number', async () => {
    const dir = join(root, 'unavailable');
    const gone = (ctx: EpisodeContext): RowSpec =>
      ctx.ep.condition === 'U' ? { status: 'unavailable', failureCode: 'E_CONFORMANCE' } : blackoutOutcome(ctx);
    await buildSealedUnit(dir, blackoutProtocol(), gone, { id: 'unavailable' });
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    const dU = a.estimands.find((e) => e.id === 'D_U')!;
    expect(dU.status).toBe('unavailable');
    const fam = a.holm.find((f) => f.id === 'wave1')!;
    const pS = mcnemarExact(2, 1),
      pT = mcnemarExact(4, 1);
    const expected = holm([pS, pT, 'unavailable']);
    expect(fam.members).toEqual([
      { estimand: 'D_S_pi', status: 'available', p: pS, adjusted: expected[0], rejected: false },
      { estimand: 'D_T_mu', status: 'available', p: pT, adjusted: expected[1], rejected: false },
      { estimand: 'D_U', status: 'unavailable', p: null, adjusted: null, rejected: null },
    ]);
    // m = 3 even though one slot is unavailable
    expect(fam.members[1]?.adjusted).toBe(Math.min(1, 3 * pT));
    expect(a.verdicts.find((v) => v.criterion === 'numerical_floor')?.verdict).toBe('invalid');
  });
});

describe('information requirement G (decision readout)', () => {
  it('G = Acc_O − Acc_N on decisionCorrect, with its exact bound; the retrospective Q2 reading holds', async () => {
    const dir = join(root, 'g');
    const p = blackoutProtocol({
      id: 'mini-decisions',
      conditions: [
        { id: 'A', kind: 'A' },
        { id: 'O', kind: 'O', provides: 'decision' },
        { id: 'N', kind: 'N', variant: 'block' },
      ],
      waves: [{ id: 1, conditions: ['A', 'O', 'N'], anchor: 'A' }],
      estimands: [
        { id: 'G', kind: 'G', oracle: 'O', none: 'N' },
        { id: 'Acc_N', kind: 'successRate', condition: 'N', readout: 'decision' },
      ],
      criteria: [],
      gates: [],
      holmFamilies: [],
      goNoGo: [],
    });
    const decide = (ctx: EpisodeContext): RowSpec => ({
      success: ctx.i < 30,
      decisionCorrect: ctx.ep.condition === 'N' ? ctx.i % 2 === 0 : true,
    });
    await buildSealedUnit(dir, p, decide, { id: 'decisions' });
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    const g = est(a, 'G');
    expect(g.readout).toBe('decision');
    expect(g.counts).toEqual({ n: 40, b: 20, c: 0 });
    expect(g.estimate).toBe(0.5);
    expect(interval(g, 'exact-cp-difference/a0.05')).toMatchObject({
      lower: decisionBound(20, 0, 40).lower,
      upper: decisionBound(20, 0, 40).upper,
    });
    expect(est(a, 'Acc_N').counts).toEqual({ n: 40, successes: 20 });
    expect(a.questions.find((q) => q.question === 'Q2')?.retrospective).toMatchObject([
      { id: 'Q2:G', verdict: 'holds', floor: 0 },
    ]);
    const { crossCheckUnit } = await import('../../src/crosscheck/index.js');
    expect((await crossCheckUnit(dir, { operator: REVIEWER })).outcome).toBe('agrees');
  });
});

describe('verdict types', () => {
  it('an invalid verdict has no field a number could go in', () => {
    const v: InvalidVerdict = {
      criterion: 'Q1',
      estimand: 'D_N',
      question: 'Q1',
      role: 'primary',
      rule: 'upper-bound-below',
      registeredRuleMet: null,
      reason: 'gate path',
      verdict: 'invalid',
      because: ['gate path'],
    };
    const w: InvalidVerdict = {
      ...v,
      // @ts-expect-error — 'invalid' withholds the number: `bound` is typed `never`
      bound: {
        interval: 'x',
        label: 'x',
        estimate: 0,
        lower: 0,
        upper: 0,
        threshold: 0,
        companions: [],
        p: null,
        routedOn: 'bound',
      },
    };
    expect(withholdsNumber(v)).toBe(true);
    expect(w.verdict).toBe('invalid');
  });
});

describe('cross-episode substitution ladder', () => {
  it('θ̄ by the registered task-stratified bootstrap; removed units counted; unresolved units in the identification bounds', async () => {
    const dir = join(root, 'substitution');
    await buildSealedUnit(dir, substitutionProtocol(), substitutionOutcome, { id: 'substitution' });
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    const tb = est(a, 'thetaBar');
    expect(tb.cohort).toMatchObject({
      paired: 60,
      removed: { total: 1, byCode: { E_DONOR_SHORT: 1 } },
      unresolved: 1,
      resolved: 58,
    });
    expect(tb.perTask?.map((t) => [t.task, t.bPrime, t.cPrime, t.n, t.weight])).toEqual([
      ['RC3', 3, 1, 29, 0.5],
      ['RC5', 2, 1, 29, 0.5],
    ]);
    // the same bootstrap through src/stats on the resolved joint cohort, units in (task, seed) order
    const units: { task: string; a: number; t: number; s: number }[] = [];
    for (const [t, task] of ['RC3', 'RC5'].entries()) {
      for (let i = 0; i < 30; i++) {
        if ((t === 0 && i === 29) || (t === 1 && i === 10)) continue;
        const y = (c: string): number =>
          substitutionOutcome({ ep: { condition: c, attempt: 2 } as never, i, taskIndex: t, kind: c }).success ? 1 : 0;
        units.push({ task, a: y('A'), t: y('T'), s: y('S') });
      }
    }
    const design = pairedDesign({
      outcomes: { A: units.map((u) => u.a), T: units.map((u) => u.t), S: units.map((u) => u.s) },
      tasks: units.map((u) => u.task),
    });
    const boot = pairedBootstrap(
      design,
      { kind: 'thetaBar', reference: 'A', target: 'T', sham: 'S' },
      { level: 'task-stratified', seed: 20260824, replicates: 2000, confidences: [0.9] },
    );
    expect(boot.estimate).toBe(tb.estimate);
    expect(interval(tb, 'task-stratified-bootstrap/l0.9')).toMatchObject({
      lower: boot.intervals[0]!.lower,
      upper: boot.intervals[0]!.upper,
    });
    const iv = tb.intervals.find((i) => i.id === 'task-stratified-bootstrap/l0.9')!;
    expect(iv.bootstrap).toEqual({
      replicates: 2000,
      seed: 20260824,
      prng: { name: 'xoshiro128**', version: 1 },
      resampling: 'task-stratified',
      quantileRule: 'hyndman-fan-7',
    });
    expect(iv.envelope).not.toBeNull();
    expect(tb.identification?.lower).toBeLessThanOrEqual(tb.estimate + 1e-12);
    // D_T: arm-based identification over all 59 units, the unresolved one filled either way
    const dT = est(a, 'D_T');
    expect(dT.identification).toMatchObject({ lower: 4 / 59, upper: 5 / 59 });
    // the equivalence criterion routes on the registered 90% interval (its envelope here)
    const eq = a.verdicts.find((v) => v.criterion === 'Q4_equivalence')!;
    expect(eq.verdict === 'unresolved' && eq.bound?.interval).toBe('task-stratified-bootstrap/l0.9');
    // S acts from attempt 2 on: its attempt-1 reads (with history, never substituted) are not in the fraction
    expect(a.gates.find((g) => g.gate === 'sham_validity')).toMatchObject({
      passed: true,
      observed: { applied: 59 * 22, denominator: 59 * 22, flips: 3 },
    });
    // the non-hard survival gate only warns
    expect(a.gates.find((g) => g.gate === 'G_surv')).toMatchObject({ passed: false, hard: false, onFail: 'warn' });
  });
});

describe('clock and candidate gates (reads.firstQuery)', () => {
  /** The substitution ladder plus N_clr (clears the scope at attempt 2, keeping its clock), with both gates registered. */
  const protocol = () => {
    const base = substitutionProtocol();
    return substitutionProtocol({
      conditions: [
        ...(base.conditions ?? []),
        { id: 'N_clr', kind: 'N', variant: 'clear', installAt: { attempt: 2, before: 'first-query' } },
      ],
      waves: [{ id: 1, conditions: ['A', 'C', 'U', 'S', 'T', 'N_clr'], anchor: 'A' }],
      gates: [
        ...(base.gates ?? []),
        { id: 'clock', kind: 'clock', conditions: ['N_clr'], hard: true, onFail: 'invalid' },
        { id: 'candidate', kind: 'candidate', conditions: ['U', 'S', 'T'], hard: true, onFail: 'invalid' },
      ],
    } as never);
  };
  /** N_clr keeps the clock but has no candidate left at attempt 2's first query. */
  const outcome =
    (tweak: (ctx: EpisodeContext) => RowSpec['reads'] | undefined = () => undefined) =>
    (ctx: EpisodeContext): RowSpec => {
      const spec = substitutionOutcome(ctx);
      const fq = defaultFirstQuery(ctx.ep, ctx.i);
      const own =
        ctx.ep.condition === 'N_clr' && ctx.ep.attempt === 2 && fq !== null
          ? { firstQuery: { clock: fq.clock, candidates: 0 } }
          : {};
      return { ...spec, reads: { ...(spec.reads ?? {}), ...own, ...(tweak(ctx) ?? {}) } };
    };
  const sources = async (dir: string) => ({
    protocolText: await readFile(join(dir, 'protocol.json'), 'utf8'),
    rowsText: await readFile(join(dir, 'rows/rows.jsonl'), 'utf8'),
    sealText: await readFile(join(dir, 'seal.json'), 'utf8'),
  });

  it('pass when the first-query clock (N_clr) and candidate counts (U, S, T) equal the anchor’s on every paired unit; the cross-check agrees', async () => {
    const dir = join(root, 'first-query');
    await buildSealedUnit(dir, protocol(), outcome(), { id: 'first-query' });
    const { adjudication: a, text } = await adjudicateUnit(dir, { operator: REVIEWER });
    expect(a.gates.find((g) => g.gate === 'clock')).toMatchObject({
      passed: true,
      evaluable: true,
      failing: [],
      observed: {
        conditions: [{ condition: 'N_clr@w1', reference: 'A', pairs: 60, compared: 60, mismatches: 0, noQuery: 0 }],
      },
    });
    // removed (S, T at RC3 seed 29) and failed (T at RC5 seed 10) rows are not paired
    expect(a.gates.find((g) => g.gate === 'candidate')).toMatchObject({
      passed: true,
      evaluable: true,
      observed: {
        conditions: [
          { condition: 'U@w1', pairs: 60, compared: 60, mismatches: 0 },
          { condition: 'S@w1', pairs: 59, compared: 59, mismatches: 0 },
          { condition: 'T@w1', pairs: 58, compared: 58, mismatches: 0 },
        ],
      },
    });
    expect(crossCheckAdjudication(await sources(dir), text).disagreements).toEqual([]);
  });

  it('fail when N_clr restarts the clock or S changes a first-query candidate count: the estimands reading them are invalid; the cross-check agrees', async () => {
    const dir = join(root, 'first-query-broken');
    const broken = outcome((ctx) => {
      if (ctx.ep.attempt !== 2) return undefined;
      if (ctx.ep.condition === 'N_clr' && ctx.taskIndex === 1 && ctx.i === 4)
        return { firstQuery: { clock: 1, candidates: 0 } };
      if (ctx.ep.condition === 'S' && ctx.taskIndex === 0 && ctx.i === 7)
        return { firstQuery: { clock: 24, candidates: 3 } };
      return undefined;
    });
    await buildSealedUnit(dir, protocol(), broken, { id: 'first-query-broken' });
    const { adjudication: a, text } = await adjudicateUnit(dir, { operator: REVIEWER });
    const clockGate = a.gates.find((g) => g.gate === 'clock')!;
    expect(clockGate).toMatchObject({
      passed: false,
      evaluable: true,
      failing: ['N_clr'],
      observed: { conditions: [{ condition: 'N_clr@w1', compared: 60, mismatches: 1 }] },
    });
    const cand = a.gates.find((g) => g.gate === 'candidate')!;
    expect(cand).toMatchObject({ passed: false, failing: ['S'] });
    expect(cand.detail).toContain('S@w1: first-query candidate count differs from A in 1/59 units (attempt 2)');
    // θ̄ reads S: withheld; ρ_T does not: routed
    expect(a.verdicts.find((v) => v.criterion === 'Q4_equivalence')).toMatchObject({
      verdict: 'invalid',
      because: ['gate candidate'],
    });
    expect(a.verdicts.find((v) => v.criterion === 'Q3_T')?.verdict).not.toBe('invalid');
    expect(crossCheckAdjudication(await sources(dir), text).disagreements).toEqual([]);
  });
});
