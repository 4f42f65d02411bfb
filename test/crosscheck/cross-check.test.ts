import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicate, amend, readCrossChecks, readUnitState, verifyUnit } from '../../src/evidence/index.js';
import { ADJUDICATOR, reproduceAdjudication, adjudicateUnit } from '../../src/adjudication/index.js';
import { crossCheckAdjudication, crossCheckUnit, type CrossCheckSources } from '../../src/crosscheck/index.js';
import { closeoutUnit } from '../../src/app/index.js';
import { canonicalPrettyJson } from '../../src/core/canonical-json.js';
import { copyUnit, expectImepError, removeTree, tempDir } from '../evidence/helpers.js';
import type { ProtocolInput } from '../../src/protocol/index.js';
import {
  blackoutOutcome,
  blackoutProtocol,
  buildSealedUnit,
  clock,
  REVIEWER,
  substitutionOutcome,
  substitutionProtocol,
} from '../adjudication/fixtures.js';

/** protocols/shellgame-view-removal.yaml reduced to n = 5 (seeds 8701–8705). */
function reducedViewRemoval(): ProtocolInput {
  const p = parseYaml(
    readFileSync(join(import.meta.dirname, '../../protocols/shellgame-view-removal.yaml'), 'utf8'),
  ) as Record<string, unknown>;
  const mde = p['mde'] as { inputs: Record<string, unknown>; outputs: { assumedDiscordance: number }[] } | undefined;
  // at n = 5 no registered effect reaches 80% power: the frozen table must say so (precommit recomputes it)
  const unreachable = mde?.outputs.map((o) => ({ assumedDiscordance: o.assumedDiscordance, effect: null }));
  return {
    ...p,
    n: 5,
    seeds: { bands: [{ start: 8701, end: 8705 }] },
    ...(mde ? { mde: { ...mde, inputs: { ...mde.inputs, n: 5 }, outputs: unreachable } } : {}),
  } as unknown as ProtocolInput;
}

type Doc = {
  estimands: {
    id: string;
    counts?: Record<string, number>;
    intervals?: { id: string; lower: number; upper: number }[];
  }[];
};

let root: string;
let sealed: string;
beforeAll(async () => {
  root = await tempDir('imep-cross-check-');
  sealed = join(root, 'sealed');
  await buildSealedUnit(sealed, blackoutProtocol(), blackoutOutcome);
});
afterAll(async () => removeTree(root));

async function copy(name: string): Promise<string> {
  const dir = join(root, name);
  await copyUnit(sealed, dir);
  return dir;
}

async function sources(dir: string): Promise<CrossCheckSources> {
  const read = (f: string): Promise<string> => readFile(join(dir, f), 'utf8');
  return {
    protocolText: await read('protocol.json'),
    rowsText: await read('rows/rows.jsonl'),
    sealText: await read('seal.json'),
  };
}

describe('crossCheckUnit', () => {
  it('agrees with an independent recomputation; then closeout seals the unit for good', async () => {
    const dir = await copy('agrees');
    await adjudicateUnit(dir, { operator: REVIEWER, now: clock });
    const r = await crossCheckUnit(dir, { operator: REVIEWER, now: clock });
    expect(r.outcome).toBe('agrees');
    expect(r.result.disagreements).toEqual([]);
    expect(r.result.compared).toBeGreaterThan(300);
    expect(r.result.maxAbsDifference).toBeLessThan(1e-12);
    expect((await readUnitState(dir)).state).toBe('cross-checked');
    const [record] = await readCrossChecks(dir);
    expect(record?.outcome).toBe('agrees');
    expect((record?.detail as { kind: string }).kind).toBe('imep.cross-check-result');
    expect(record?.adjudicationFile).toBe('adjudication-001.json');

    const closed = await closeoutUnit(dir, { operator: REVIEWER, now: clock, notes: 'cross-check agrees' });
    expect(closed.files.map((f) => f.path)).toEqual([
      'adjudication/001/adjudication.json',
      'adjudication/adjudication-001.json',
      'adjudication/cross-check-001.json',
      'seal.json',
    ]);
    expect((await readUnitState(dir)).state).toBe('closed');
    const v = await verifyUnit(dir, { expectedRoot: closed.merkle.root });
    expect(v.ok && v.scope).toBe('closeout');
    await expectImepError(amend(dir, { text: 'too late', affects: ['x'], author: REVIEWER }), 'E_UNIT_SEALED');
    await expectImepError(crossCheckUnit(dir, { operator: REVIEWER }), 'E_UNIT_SEALED');
    // the closed unit still regenerates its adjudication byte for byte
    expect((await reproduceAdjudication(dir)).regenerated).toBe(true);
  });

  it('agrees on the substitution ladder (bootstrap re-run, removed and unresolved units, envelopes)', async () => {
    const dir = join(root, 'substitution');
    await buildSealedUnit(dir, substitutionProtocol(), substitutionOutcome, { id: 'substitution' });
    await adjudicateUnit(dir, { operator: REVIEWER });
    const r = await crossCheckUnit(dir, { operator: REVIEWER });
    expect(r.outcome).toBe('agrees');
    expect(r.result.maxAbsDifference).toBeLessThan(1e-12);
  });

  it('agrees when every cell is excluded by competence (no excluded estimand carries an interval), so the unit closes out', async () => {
    const dir = join(root, 'all-excluded');
    await buildSealedUnit(dir, reducedViewRemoval(), () => ({ success: false }), { id: 'all-excluded' });
    const { adjudication } = await adjudicateUnit(dir, { operator: REVIEWER, now: clock });
    expect(adjudication.gates.find((g) => g.gate === 'competence')).toMatchObject({
      passed: false,
      failing: ['ShellGameTouch-lite'],
    });
    expect(adjudication.verdicts.map((v) => v.verdict)).toEqual(['excluded', 'excluded', 'excluded', 'excluded']);
    expect(adjudication.verdicts.every((v) => v.bound === undefined || v.bound === null)).toBe(true);
    expect(adjudication.estimands.every((e) => e.status === 'unavailable')).toBe(true);
    // a number forged onto an excluded estimand is still caught
    const { text } = await reproduceAdjudication(dir);
    const forged = JSON.parse(text) as Doc;
    forged.estimands.find((e) => e.id === 'D_view')!.intervals = [
      { id: 'exact-cp-difference/a0.05', lower: -0.1, upper: 0.2 },
    ];
    const caught = crossCheckAdjudication(await sources(dir), canonicalPrettyJson(forged)).disagreements;
    expect(caught.map((d) => [d.path, d.note])).toContainEqual([
      'estimands[D_view].intervals[exact-cp-difference/a0.05].upper',
      'not recomputed by the cross-check',
    ]);
    const r = await crossCheckUnit(dir, { operator: REVIEWER, now: clock });
    expect(r.result.disagreements).toEqual([]);
    expect(r.outcome).toBe('agrees');
    await closeoutUnit(dir, { operator: REVIEWER, now: clock, notes: 'every cell excluded' });
    expect((await readUnitState(dir)).state).toBe('closed');
  });

  it('catches a deliberately corrupted number and names it; the unit cannot be closed out', async () => {
    const good = await copy('good');
    const { text } = await adjudicateUnit(good, { operator: REVIEWER });
    const doc = JSON.parse(text) as Doc;
    const dN = doc.estimands.find((e) => e.id === 'D_N')!;
    dN.counts!['b'] = 9;
    const bad = await copy('corrupted');
    await adjudicate(bad, {
      adjudicator: ADJUDICATOR,
      result: {},
      artifacts: { 'adjudication.json': canonicalPrettyJson(doc) },
      operator: REVIEWER,
    });
    expect((await verifyUnit(bad)).ok).toBe(true); // the forged artifact is properly recorded: only a recompute can catch it
    const e = await expectImepError(crossCheckUnit(bad, { operator: REVIEWER }), 'E_INTERNAL');
    expect(e.field).toBe('estimands[D_N].counts.b');
    expect(e.message).toContain('estimands[D_N].counts.b: adjudication 9, recomputed 10');
    const [record] = await readCrossChecks(bad);
    expect(record?.outcome).toBe('disagrees');
    await expectImepError(closeoutUnit(bad, { operator: REVIEWER }), 'E_OUT_OF_ORDER');
    const regen = await expectImepError(reproduceAdjudication(bad), 'E_INTERNAL');
    expect(regen.message).toContain('differs from the stored one at line');
  });

  it('compares every number: a 1e-6 shift of a bound is caught, a missing registered interval is caught, rounding noise is not', async () => {
    const dir = await copy('pure');
    const { text } = await adjudicateUnit(dir, { operator: REVIEWER });
    const src = await sources(dir);
    expect(crossCheckAdjudication(src, text).disagreements).toEqual([]);

    const shift = (delta: number): string => {
      const doc = JSON.parse(text) as Doc;
      const iv = doc.estimands
        .find((x) => x.id === 'theta')!
        .intervals!.find((i) => i.id === 'conditional-exact/a0.05')!;
      iv.upper += delta;
      return canonicalPrettyJson(doc);
    };
    const caught = crossCheckAdjudication(src, shift(1e-6)).disagreements;
    expect(caught.map((d) => d.path)).toEqual(['estimands[theta].intervals[conditional-exact/a0.05].upper']);
    expect(crossCheckAdjudication(src, shift(1e-13)).disagreements).toEqual([]);

    const dropped = JSON.parse(text) as Doc;
    const rho = dropped.estimands.find((x) => x.id === 'rho_S_pi')!;
    rho.intervals = rho.intervals!.filter((i) => i.id !== 'clopper-pearson/a0.05');
    const missing = crossCheckAdjudication(src, canonicalPrettyJson(dropped)).disagreements;
    expect(
      missing.some(
        (d) =>
          d.path === 'estimands[rho_S_pi].intervals[clopper-pearson/a0.05]' &&
          d.note.includes('registered interval is missing'),
      ),
    ).toBe(true);

    // the old reading of upper-bound-below (the opposite word) and the old Q4 routing on the conditional bound are caught
    const flipped = JSON.parse(text) as Doc & {
      verdicts: { criterion: string; verdict: string; bound: { interval: string } | null }[];
    };
    const q1 = flipped.verdicts.find((v) => v.criterion === 'Q1')!;
    const word = q1.verdict;
    q1.verdict = word === 'holds' ? 'not detected' : 'holds';
    const q4 = flipped.verdicts.find((v) => v.criterion === 'Q4')!;
    expect(q4.bound?.interval).toBe('exact-cp-difference/a0.025');
    q4.bound!.interval = 'conditional-exact/a0.05';
    const words = crossCheckAdjudication(src, canonicalPrettyJson(flipped)).disagreements;
    expect(words.find((d) => d.path === 'verdicts[Q1].verdict')?.note).toBe(
      `the adjudication reads '${q1.verdict}', the cross-check '${word}'`,
    );
    expect(words.find((d) => d.path === 'verdicts[Q4].bound.interval')?.note).toBe(
      'routed on conditional-exact/a0.05, expected exact-cp-difference/a0.025',
    );

    const extra = JSON.parse(text) as Doc & { estimands: { extraNumber?: number }[] };
    extra.estimands[0]!.extraNumber = 1;
    expect(crossCheckAdjudication(src, canonicalPrettyJson(extra)).disagreements.map((d) => d.note)).toContain(
      'not recomputed by the cross-check',
    );
  });
});
