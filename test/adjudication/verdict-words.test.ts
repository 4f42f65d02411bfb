/**
 * Issue 35 §2, §6: the terminal's verdict lines carry their claim in words and the bound they routed on; the run's
 * "found:" line lists every condition's successes/n and every estimand's point and interval; the competence gate
 * says the rate and the threshold it compared. The numbers are the quick start's (shellgame-blackout, n = 400).
 */
import { describe, expect, it } from 'vitest';
import {
  competenceText,
  foundLine,
  verdictLine,
  type Adjudication,
  type GateResult,
  type Verdict,
} from '../../src/adjudication/index.js';
import type { Criterion } from '../../src/protocol/index.js';
import { blackoutCriterion } from './fixtures.js';

const Q1 = blackoutCriterion('Q1');

const bound = (lower: number, upper: number, estimate: number, threshold: number) => ({
  interval: 'exact-cp-difference/a0.05',
  label: '≥90% (Bonferroni, one-sided bound)',
  estimate,
  lower,
  upper,
  threshold,
  companions: [],
  p: null,
  routedOn: 'bound' as const,
});

const q1Verdict: Verdict = {
  criterion: 'Q1',
  estimand: 'D_N',
  question: 'Q1',
  role: 'primary',
  rule: 'upper-bound-below',
  registeredRuleMet: false,
  reason: 'LB 60.64 pp > 10.00 pp: the bound excludes the claim',
  verdict: 'not detected',
  bound: bound(0.606425946110325, 0.6943949933277243, 0.655, 0.1),
};

describe('verdictLine', () => {
  it('not detected: the claim the bound excludes, and the bound', () => {
    expect(verdictLine(q1Verdict, Q1)).toBe(
      'Q1: not detected — claim "D_N lies below +10.00 pp" excluded: D_N [+60.64, +69.44] pp (≥90% (Bonferroni, one-sided bound))',
    );
  });

  it('holds with companions: the claim shown, the companion upper bound beside the interval', () => {
    const c = {
      id: 'Q3_S_pi',
      question: 'Q3',
      role: 'primary',
      estimand: 'rho_S_pi',
      rule: 'lower-bound-above',
      margin: 0,
      aboveUpperBoundOf: ['rho_C'],
      method: 'clopper-pearson',
      alphaPerComponent: 0.05,
    } as Criterion;
    const v: Verdict = {
      ...q1Verdict,
      criterion: 'Q3_S_pi',
      estimand: 'rho_S_pi',
      question: 'Q3',
      rule: 'lower-bound-above',
      registeredRuleMet: true,
      verdict: 'holds',
      bound: {
        ...bound(0.2862886207717234, 0.36565182687259534, 0.325, 0.007461355528799603),
        label: '≥95% (exact Clopper–Pearson, one-sided bound)',
        companions: [{ estimand: 'rho_C', interval: 'clopper-pearson/a0.05', upper: 0.007461355528799603 }],
      },
    };
    expect(verdictLine(v, c)).toBe(
      'Q3_S_pi: holds — claim "rho_S_pi exceeds 0.00 pp and the upper bound of rho_C" shown: rho_S_pi [+28.63, +36.57] pp vs UB rho_C +0.75 pp (≥95% (exact Clopper–Pearson, one-sided bound))',
    );
  });

  it('a test-routed eligibility line gives p against α; a point check names what it compared', () => {
    const elig = blackoutCriterion('Q1_eligibility');
    const v: Verdict = {
      ...q1Verdict,
      criterion: 'Q1_eligibility',
      role: 'eligibility',
      rule: 'p-below',
      registeredRuleMet: true,
      verdict: 'holds',
      bound: { ...q1Verdict.bound, routedOn: 'test', p: 1.35e-79, threshold: 0.05 },
    };
    expect(verdictLine(v, elig)).toBe(
      'Q1_eligibility: holds — claim "the intervention lowers success on D_N: exact McNemar p below 0.05" shown: p = 1.35e-79 vs α = 0.05; D_N +65.50 pp [+60.64, +69.44]',
    );
    const floor = {
      id: 'numerical_floor',
      role: 'eligibility',
      estimand: 'rho_U',
      rule: 'point-below',
      than: 'rho_S_pi',
    };
    const pv: Verdict = {
      ...q1Verdict,
      criterion: 'numerical_floor',
      estimand: 'rho_U',
      question: null,
      role: 'eligibility',
      rule: 'point-below',
      registeredRuleMet: true,
      verdict: 'holds',
      bound: { ...q1Verdict.bound, routedOn: 'point', estimate: 0, threshold: 0.325 },
    };
    expect(verdictLine(pv, floor as Criterion)).toBe(
      `numerical_floor: holds — claim "rho_U's point estimate lies below rho_S_pi's (a point check, no error control)" shown: rho_U +0.00 pp vs rho_S_pi +32.50 pp`,
    );
  });

  it('withheld words say why, with no number', () => {
    const v: Verdict = {
      criterion: 'Q1',
      estimand: 'D_N',
      question: 'Q1',
      role: 'primary',
      rule: 'upper-bound-below',
      registeredRuleMet: null,
      reason: 'read path not exercised',
      verdict: 'invalid',
      because: ['read_canary'],
    };
    expect(verdictLine(v, Q1)).toBe(
      'Q1: invalid — claim "D_N lies below +10.00 pp" not judged, number withheld (read_canary)',
    );
  });
});

const gate = (tasks: unknown[], passed: boolean, failing: string[] = []): GateResult => ({
  gate: 'competence',
  kind: 'competence',
  hard: true,
  onFail: 'exclude',
  passed,
  evaluable: true,
  observed: { wave: 1, tasks },
  expected: { minSuccess: 0.5, wilsonLowerAbove: 1 / 3, level: 0.95 },
  detail: 'A is competent in every task',
  failing,
});

describe('competenceText', () => {
  it('says the rate and the thresholds it compared', () => {
    const g = gate(
      [{ task: 'ShellGameTouch-lite', successes: 400, n: 400, rate: 1, wilsonLower: 0.9904877056657035, passed: true }],
      true,
    );
    expect(competenceText(g, 'A')).toBe(
      'competence gate competence: A succeeds 400/400 = 100.0% ≥ 50.0% required (Wilson 95% lower 99.0% > 33.3% required): passed',
    );
  });

  it('names the failing task and the comparison that failed', () => {
    const g = gate(
      [
        { task: 'T1', successes: 30, n: 40, rate: 0.75, wilsonLower: 0.598, passed: true },
        { task: 'T2', successes: 12, n: 40, rate: 0.3, wilsonLower: 0.181, passed: false },
      ],
      false,
      ['T2'],
    );
    expect(competenceText(g, 'A_vis')).toBe(
      'competence gate competence: A_vis succeeds in T1 30/40 = 75.0% ≥ 50.0% required (Wilson 95% lower 59.8% > 33.3% required); A_vis succeeds in T2 12/40 = 30.0% < 50.0% required (Wilson 95% lower 18.1% ≤ 33.3% required): FAILED — T2 excluded',
    );
  });

  it('is null for other gates', () => {
    expect(competenceText({ ...gate([], true), kind: 'path' }, 'A')).toBeNull();
  });
});

describe('foundLine', () => {
  it('every condition successes/n (once when its waves agree) and every estimand point and interval', () => {
    const cond = (condition: string, wave: number, successes: number) => ({
      id: `${condition}@w${wave}`,
      condition,
      wave,
      success: { successes, n: 400 },
    });
    const iv = (lower: number, upper: number) => [{ lower, upper }];
    const a = {
      conditions: [cond('A', 1, 400), cond('S_pi', 1, 270), cond('A', 2, 400), cond('N_blk', 2, 138)],
      estimands: [
        { id: 'SR_A', kind: 'successRate', status: 'available', estimate: 1, intervals: iv(0.9904877056657035, 1) },
        { id: 'D_N', kind: 'D', status: 'available', estimate: 0.655, intervals: iv(0.5, 0.8) },
        {
          id: 'rho_S_pi',
          kind: 'rho',
          status: 'available',
          estimate: 0.325,
          intervals: iv(0.2862886207717234, 0.36565182687259534),
        },
        { id: 'theta', kind: 'theta', status: 'unavailable', reason: 'x' },
      ],
      verdicts: [q1Verdict],
    } as unknown as Adjudication;
    // D_N's interval is the one Q1 routed on, not the estimand's first
    expect(foundLine(a)).toBe(
      'found: A 400/400, S_pi 270/400, N_blk 138/400; SR_A 100.00 pp [99.05, 100.00], D_N +65.50 pp [+60.64, +69.44], rho_S_pi 32.50 pp [28.63, 36.57], theta unavailable',
    );
    const differ = { ...a, conditions: [cond('A', 1, 400), cond('A', 2, 399)] } as unknown as Adjudication;
    expect(foundLine(differ)).toMatch(/^found: A@w1 400\/400, A@w2 399\/400; /);
  });
});
