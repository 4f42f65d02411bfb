/**
 * The cross-check's dispatch tables (issue #29 item 4: one function per gate / estimand kind): every kind the
 * protocol schema registers has its own recomputation, a kind it does not know observes nothing and fails, and
 * each estimand kind's entry says what protocols/README.md says of it.
 */
import { describe, expect, it } from 'vitest';
import { GateSchema, GoNoGoSchema } from '../../src/protocol/schema-gates.js';
import { EstimandSchema } from '../../src/protocol/schema-analysis.js';
import { expectedGates, GATE_KINDS_X } from '../../src/crosscheck/cross-check-gates.js';
import {
  conditionsOf,
  ESTIMAND_KINDS_X,
  estimandKind,
  readoutOf,
  type Filled,
} from '../../src/crosscheck/cross-check-estimand-kinds.js';
import { expectedGoNoGo, GO_NO_GO_RULES_X } from '../../src/crosscheck/cross-check-go-no-go.js';
import { PlainStudy, type Obj, type PlainRow } from '../../src/crosscheck/cross-check-model.js';
import type { XEstimand } from '../../src/crosscheck/cross-check-estimands.js';

/** The literal values of a discriminated union's discriminator. */
function literals(schema: unknown, key: string): string[] {
  const options = (schema as { options: { shape: Record<string, { values: Set<string> }> }[] }).options;
  return options.flatMap((o) => [...o.shape[key]!.values]).sort();
}

function row(
  condition: string,
  task: string,
  seed: number,
  success: boolean,
  reads: Partial<PlainRow['reads']> = {},
): PlainRow {
  return {
    wave: 1,
    condition,
    task,
    seed,
    attempt: 1,
    status: 'ok',
    failureCode: null,
    success,
    decisionCorrect: null,
    actionDigest: `${task}-${seed}`,
    reads: {
      total: 2,
      empty: 0,
      emptyPositions: [],
      withHistory: 1,
      substituted: 0,
      substitutedUnchanged: 0,
      covered: null,
      firstQuery: null,
      ...reads,
    },
  };
}

const unit = (...y: (0 | 1)[]): Filled => ({ task: 't', seed: 1, y });

describe('the cross-check recomputes every registered kind', () => {
  it('every gate kind of the protocol schema has its own function in the gate table', () => {
    expect([...GATE_KINDS_X].sort()).toEqual(literals(GateSchema, 'kind'));
  });
  it('every estimand kind of the protocol schema has its own entry', () => {
    expect([...ESTIMAND_KINDS_X].sort()).toEqual(literals(EstimandSchema, 'kind'));
  });
  it('every go/no-go rule of the protocol schema has its own function', () => {
    expect([...GO_NO_GO_RULES_X].sort()).toEqual(literals(GoNoGoSchema, 'rule'));
  });
});

describe('the gate dispatch', () => {
  const protocol = {
    envs: [{ task: 't1' }, { task: 't2' }],
    waves: [{ id: 1, anchor: 'A', conditions: ['A', 'C'] }],
    conditions: [
      { id: 'A', kind: 'A' },
      { id: 'C', kind: 'C' },
    ],
    gates: [
      { id: 'g-unknown', kind: 'no-such-gate' },
      { id: 'g-proto', kind: 'constructor' },
      { id: 'rep', kind: 'replicate', condition: 'C', reference: 'A', maxChanged: 0 },
      { id: 'pathway', kind: 'path', reads: ['A'], emptyReads: [] },
    ],
  } as unknown as Obj;
  const rows = [
    row('A', 't1', 1, true),
    row('A', 't2', 1, false),
    row('C', 't1', 1, true),
    row('C', 't2', 1, true, { total: 0 }),
  ];
  const gates = expectedGates(new PlainStudy(protocol, rows), new Set());

  it('a kind it does not know (an Object.prototype name included) observes nothing and fails', () => {
    expect(gates.slice(0, 2)).toEqual([
      { gate: 'g-unknown', observed: {}, passed: false },
      { gate: 'g-proto', observed: {}, passed: false },
    ]);
  });
  it('each known kind reaches its own recomputation, in protocol order, with the gate id first', () => {
    expect(gates[2]).toEqual({
      gate: 'rep',
      observed: { pairs: 2, changed: 1, digestPairs: 2, digestMismatches: 0 },
      passed: false,
    });
    expect(Object.keys(gates[2]!)).toEqual(['gate', 'observed', 'passed']);
    expect(gates[3]).toEqual({
      gate: 'pathway',
      observed: { reads: [{ condition: 'A', rows: 2, withReads: 2 }], emptyReads: [] },
      passed: true,
    });
  });
  it('the excluded tasks are left out of every gate but competence', () => {
    const [, , rep] = expectedGates(new PlainStudy(protocol, rows), new Set(['t2']));
    expect(rep!.observed).toEqual({ pairs: 1, changed: 0, digestPairs: 1, digestMismatches: 0 });
    expect(rep!.passed).toBe(true);
  });
});

describe('one entry per estimand kind', () => {
  const e = (kind: string, extra: Obj = {}): Obj => ({
    kind,
    reference: 'A',
    intervention: 'X',
    oracle: 'O',
    none: 'N',
    T: 'T',
    S: 'S',
    condition: 'A',
    ...extra,
  });
  it('pairs its conditions in the order of y', () => {
    expect(conditionsOf(e('D'))).toEqual(['A', 'X']);
    expect(conditionsOf(e('rho'))).toEqual(['A', 'X']);
    expect(conditionsOf(e('G'))).toEqual(['O', 'N']);
    expect(conditionsOf(e('theta'))).toEqual(['A', 'T', 'S']);
    expect(conditionsOf(e('thetaBar'))).toEqual(['A', 'T', 'S']);
    expect(conditionsOf(e('successRate'))).toEqual(['A']);
  });
  it('reads decisions for G, success otherwise, unless it registers a readout', () => {
    expect(readoutOf(e('G'))).toBe('decision');
    expect(readoutOf(e('D'))).toBe('success');
    expect(readoutOf(e('D', { readout: 'decision' }))).toBe('decision');
  });
  it('contributes D = y0 − y1, ρ = |y0 − y1|, θ = (y0 ⊕ y1) − (y0 ⊕ y2), a success rate y0', () => {
    expect(estimandKind('D').contribution([0, 1])).toBe(-1);
    expect(estimandKind('G').contribution([1, 0])).toBe(1);
    expect(estimandKind('rho').contribution([0, 1])).toBe(1);
    expect(estimandKind('theta').contribution([1, 0, 1])).toBe(1);
    expect(estimandKind('thetaBar').contribution([1, 1, 0])).toBe(-1);
    expect(estimandKind('successRate').contribution([1])).toBe(1);
  });
  it('counts b, c; b′, c′ and the flips; or the successes', () => {
    const pairs = [unit(1, 0), unit(1, 0), unit(0, 1), unit(1, 1)];
    expect(estimandKind('D').counts(pairs)).toEqual({ n: 4, b: 2, c: 1 });
    expect(estimandKind('rho').counts(pairs)).toEqual({ n: 4, b: 2, c: 1 });
    const triples = [unit(1, 0, 1), unit(1, 0, 0), unit(1, 1, 0), unit(0, 0, 0)];
    expect(estimandKind('theta').counts(triples)).toEqual({ n: 4, bPrime: 1, cPrime: 1, flipsT: 2, flipsS: 2 });
    expect(estimandKind('successRate').counts([unit(1), unit(0), unit(1)])).toEqual({ n: 3, successes: 2 });
  });
  it('bounds a success rate by its arm, D and G by the arms, ρ and θ over the fillings; an unknown kind as a rate over the fillings', () => {
    expect(['successRate', 'D', 'G', 'rho', 'theta', 'thetaBar'].map((k) => estimandKind(k).identification)).toEqual([
      'arm',
      'arms',
      'arms',
      'fills',
      'fills',
      'fills',
    ]);
    expect(estimandKind('toString').identification).toBe('fills');
    expect(estimandKind('toString').counts([unit(1)])).toEqual({ n: 1, successes: 1 });
    expect(conditionsOf(e('no-such-kind'))).toEqual(['A']);
  });
});

describe('the go/no-go rule table', () => {
  const x = { available: true, pair: [3, 2] } as unknown as XEstimand;
  const inputs = {
    gates: [{ gate: 'comp', observed: { tasks: [{ passed: true }, { passed: false }, { passed: true }] } as Obj }],
    conditions: [{ id: 'A@w2', success: { rate: 0.75 } } as Obj],
    xs: new Map([['D', x]]),
  };
  it('observes competent cells, the reference success rate and discordant pairs', () => {
    const protocol = {
      goNoGo: [
        { rule: 'min-competent-cells', gate: 'comp' },
        { rule: 'reference-success-floor', condition: 'A' },
        { rule: 'min-discordant', estimand: 'D' },
        { rule: 'later-rule', estimand: 'D' },
      ],
    } as unknown as Obj;
    expect(expectedGoNoGo(protocol, inputs)).toEqual([
      { rule: 'min-competent-cells', subject: 'comp', observed: 2 },
      { rule: 'reference-success-floor', subject: 'A', observed: 0.75 },
      { rule: 'min-discordant', subject: 'D', observed: 5 },
      { rule: 'later-rule', subject: 'D', observed: 5 },
    ]);
  });
});
