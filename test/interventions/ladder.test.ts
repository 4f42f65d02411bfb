/**
 * A fixture ladder whose coverage and gate values are known by construction.
 *
 * Installed ladder (S, one bank per unit, 10 units): attempt 1 leaves slots 0–2; S is installed at the start
 * of attempt 2; decision queries then select slot 0 (substituted) and, from q2 on, slot 3 (inserted in
 * attempt 2, never substituted). Units 0–3 merge into slot 0 before q3, so q3 and q4 select no unmodified
 * substituted record → uncovered. Units 4–9 merge into slot 1, which is never selected again → covered.
 * Coverage = 6/10 exactly.
 */
import { describe, expect, it } from 'vitest';
import type { BankRecord } from '../../src/banks/record.js';
import { Prng } from '../../src/core/prng.js';
import { interventionHook, type ConditionSpec } from '../../src/interventions/condition.js';
import { survivalCoverage } from '../../src/interventions/coverage.js';
import { assignDonors } from '../../src/interventions/donor-assignment.js';
import {
  gateEmptyReadPositions,
  gateEmptyReadsInBlock,
  gateInstallationChanged,
  gateReadsInReference,
  gateSubstitutedReadsChanged,
} from '../../src/interventions/gates.js';
import type { InstallationRecord } from '../../src/interventions/install.js';
import { TraceRecorder, type SubstitutionMode, type TraceEntry } from '../../src/interventions/trace.js';
import { FakeBank, makeRecord } from './helpers.js';
import { registerBuiltinKinds } from '../../src/kinds/index.js';

// this file reads protocols while it loads (before the setup file's beforeAll registers the kinds)
registerBuiltinKinds();

const UNITS = Array.from({ length: 10 }, (_, i) => `u${i}`);
const POINT = 'attempt-2-start';

function attempt1(): Map<string, BankRecord[]> {
  const p = new Prng('attempt-1');
  return new Map(UNITS.map((u) => [u, [0, 1, 2].map((slot) => makeRecord(p, u, slot, slot))]));
}

function runInstalledUnit(
  unit: string,
  index: number,
  spec: ConditionSpec,
  world: Map<string, BankRecord[]>,
  donor: string | undefined,
) {
  const bank = new FakeBank();
  bank.load(world.get(unit) ?? []);
  for (let q = 0; q < 3; q++) bank.query(unit, `${unit}/a1`, [0], true); // attempt 1 (before the point)
  const rec = new TraceRecorder(bank, {
    mode: spec.kind === 'S' || spec.kind === 'T' || spec.kind === 'U' ? 'installed' : 'none',
  });
  const h = interventionHook(spec, {
    scope: unit,
    point: POINT,
    ...(donor ? { donor: { scope: donor, records: world.get(donor) ?? [] } } : {}),
  });
  bank.setReadHook(rec.wrap(h.hook));
  const outcome = h.atPoint(bank);
  rec.markPoint(unit);
  const p = new Prng(`writes/${unit}`);
  const ep = `${unit}/a2`;
  bank.query(unit, ep, [0, 1]); // q0
  bank.insert(makeRecord(p, unit, 3, 0));
  bank.query(unit, ep, [0, 3]); // q1
  bank.query(unit, ep, [0, 3]); // q2
  bank.merge(unit, index < 4 ? 0 : 1, p);
  bank.query(unit, ep, [0, 3]); // q3
  bank.query(unit, ep, [3], false); // a non-decision read of the new slot only
  bank.query(unit, ep, [0, 3]); // q4
  return { entries: rec.entries(), outcome };
}

describe('fixture ladder: installed substitution', () => {
  const world = attempt1();
  const assignment = assignDonors({
    units: UNITS.map((u, i) => ({ scope: u, fact: i % 2 ? 'red' : 'blue' })),
    mode: 'same-fact',
    seed: 17,
  });

  it('coverage is exactly 6/10 and the per-unit verdicts match the construction', () => {
    const all: TraceEntry[] = [];
    const installs: InstallationRecord[] = [];
    UNITS.forEach((u, i) => {
      const { entries, outcome } = runInstalledUnit(u, i, { kind: 'S', seed: 17 }, world, assignment.donors.get(u));
      all.push(...entries);
      if (outcome.kind === 'installed') installs.push(outcome.record);
    });
    const cov = survivalCoverage(all, { units: UNITS });
    expect(cov).toMatchObject({ units: 10, covered: 6, coverage: 0.6, noDecisionQuery: 0 });
    expect(cov.perUnit.filter((u) => !u.covered).map((u) => u.unit)).toEqual(['u0', 'u1', 'u2', 'u3']);
    expect(cov.perUnit.find((u) => u.unit === 'u0')).toEqual({
      unit: 'u0',
      decisionQueries: 5,
      coveredQueries: 3,
      covered: false,
    });
    expect(cov.perUnit.find((u) => u.unit === 'u9')).toEqual({
      unit: 'u9',
      decisionQueries: 5,
      coveredQueries: 5,
      covered: true,
    });
    // attempt-1 reads are before the point and never count
    expect(all.filter((e) => !e.afterPoint).every((e) => e.selected.every((s) => !s.unmodifiedSubstituted))).toBe(true);
    // the slot-3 record (inserted after installation) is never an unmodified substituted record
    expect(
      all
        .flatMap((e) => e.selected)
        .filter((s) => s.slot === 3)
        .every((s) => !s.unmodifiedSubstituted),
    ).toBe(true);
    expect(gateInstallationChanged(installs)).toMatchObject({
      gate: 'installation-changed',
      passed: true,
      observed: 30,
      expected: 30,
    });
  });

  it('a unit with no decision query after the point is not covered; an empty unit list gives null', () => {
    const all: TraceEntry[] = [];
    UNITS.forEach((u, i) =>
      all.push(
        ...runInstalledUnit(u, i, { kind: 'U', direction: 'away', installation: 'install' }, world, undefined).entries,
      ),
    );
    const cov = survivalCoverage(all, { units: [...UNITS, 'u10'] });
    expect(cov).toMatchObject({ units: 11, covered: 6, noDecisionQuery: 1 });
    expect(cov.coverage).toBeCloseTo(6 / 11, 12);
    expect(survivalCoverage([]).coverage).toBeNull();
  });

  it('A has no substituted records (coverage 0) but passes the reads gate', () => {
    const all: TraceEntry[] = [];
    UNITS.forEach((u, i) => all.push(...runInstalledUnit(u, i, { kind: 'A' }, world, undefined).entries));
    expect(survivalCoverage(all).covered).toBe(0);
    expect(gateReadsInReference(all, UNITS)).toMatchObject({ passed: true, observed: 10, expected: 10 });
  });
});

/**
 * Blackout-style ladder (per-read substitution): every episode starts with an empty bank, so the first
 * read of each of the 10 units has no history (10 empty reads, same positions in every condition); then
 * 4 reads with history. Totals per condition: 50 reads, 40 with history.
 */
function runBlackout(
  spec: ConditionSpec,
  mode: SubstitutionMode,
  options: { skipUnit?: string; constant?: boolean } = {},
): TraceEntry[] {
  const all: TraceEntry[] = [];
  for (const u of UNITS) {
    const bank = new FakeBank('perceptual');
    const rec = new TraceRecorder(bank, { mode, sink: (e) => all.push(e) });
    const h = interventionHook(spec, { scope: u, point: 'episode-start', seed: 610000 });
    bank.setReadHook(rec.wrap(h.hook));
    h.atPoint(bank);
    rec.markPoint(u);
    if (options.skipUnit === u) continue;
    const p = new Prng(`bo/${u}`);
    const ep = `${u}/a1`;
    bank.query(u, ep, [0]); // empty: no history yet
    for (let q = 1; q <= 4; q++) {
      const r = makeRecord(p, u, q - 1, 0, options.constant ? { shape: [1] } : {});
      bank.insert(r);
      bank.query(u, ep, [0, q - 1]);
    }
  }
  return all;
}

describe('fixture ladder: blackout gates', () => {
  const A = runBlackout({ kind: 'A' }, 'none');
  const N = runBlackout({ kind: 'N', variant: 'block' }, 'none');
  const Sp = runBlackout({ kind: 'S_pi' }, 'per-read');
  const Tm = runBlackout({ kind: 'T_mu' }, 'per-read');
  const U = runBlackout({ kind: 'U', direction: 'away', installation: 'read' }, 'per-read');
  const C = runBlackout({ kind: 'C' }, 'none');

  it('reads happened in A, were empty in N_block, and every substituted read changed its digest', () => {
    expect(A.length).toBe(50);
    expect(gateReadsInReference(A, UNITS)).toEqual({
      gate: 'reads-in-reference',
      passed: true,
      observed: 10,
      expected: 10,
      detail: '10/10 units read memory after the point',
    });
    expect(gateEmptyReadsInBlock(N)).toMatchObject({ passed: true, observed: 50, expected: 50 });
    expect(gateEmptyReadsInBlock(A)).toMatchObject({ passed: false, observed: 10, expected: 50 });
    for (const t of [Sp, Tm, U])
      expect(gateSubstitutedReadsChanged(t)).toMatchObject({ passed: true, observed: 40, expected: 40 });
    expect(gateSubstitutedReadsChanged(C)).toMatchObject({ passed: false, observed: 0, expected: 40 });
  });

  it('empty-read positions are identical across conditions and equal the predicted count', () => {
    const by = new Map([
      ['A', A],
      ['N_block', N],
      ['S_pi', Sp],
      ['T_mu', Tm],
      ['U', U],
      ['C', C],
    ]);
    expect(gateEmptyReadPositions(by)).toMatchObject({ passed: true, observed: 6, expected: 6 });
    expect(gateEmptyReadPositions(by, { predicted: 10 })).toMatchObject({ passed: true, observed: 6, expected: 6 });
    expect(gateEmptyReadPositions(by, { predicted: 20 })).toMatchObject({ passed: false, observed: 0 });
    const shifted = runBlackout({ kind: 'A' }, 'none', { skipUnit: 'u4' });
    expect(
      gateEmptyReadPositions(
        new Map([
          ['A', A],
          ['A-short', shifted],
        ]),
      ),
    ).toMatchObject({ passed: false, observed: 1, expected: 2 });
  });

  it('the gates fail where delivery fails: a unit without reads, a read whose content cannot change', () => {
    expect(gateReadsInReference(runBlackout({ kind: 'A' }, 'none', { skipUnit: 'u7' }), UNITS)).toMatchObject({
      passed: false,
      observed: 9,
      expected: 10,
    });
    // single-element latents: T_μ has no spread to draw from, so its reads do not change
    expect(gateSubstitutedReadsChanged(runBlackout({ kind: 'T_mu' }, 'per-read', { constant: true }))).toMatchObject({
      passed: false,
      observed: 0,
      expected: 40,
    });
  });

  it('per-read coverage: the history-free first decision read leaves every unit uncovered; reads after it are substituted', () => {
    expect(survivalCoverage(Sp)).toMatchObject({ units: 10, covered: 0 });
    const withHistory = Sp.filter((e) => e.selected.length > 0);
    expect(withHistory.every((e) => e.selected.every((s) => s.unmodifiedSubstituted))).toBe(true);
    expect(survivalCoverage(withHistory)).toMatchObject({ units: 10, covered: 10, coverage: 1 });
  });
});
