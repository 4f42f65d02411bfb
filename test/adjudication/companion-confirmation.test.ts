/**
 * Issue 31 §1 (no verdict word rests on an approximate interval alone): a `lower-bound-above` criterion routed on a
 * bootstrap, with a floor `aboveUpperBoundOf: [rho_C]`, is confirmed against the companions' EXACT upper bounds,
 * not the bootstrap's. On the mini blackout ladder (n = 40) C replicates A, so ρ_C's bootstrap interval is [0, 0]
 * and the floor it gives is 0; D_N (b = 10, c = 0) has a 90% unit-bootstrap lower bound far above 0 and an exact
 * lower bound (difference bound at α = 0.025 per proportion) of CP₋(10; 40) − CP₊(0; 40) = 3.89 pp — above 0 but
 * below ρ_C's exact floor, Clopper–Pearson at α = 0.05: 1 − 0.05^(1/40) = 7.22 pp. The word was 'holds' on the
 * bootstrap floor; it is unresolved, and the cross-check recomputes the same confirmation.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicateUnit, type AvailableEstimand } from '../../src/adjudication/index.js';
import { crossCheckAdjudication } from '../../src/crosscheck/index.js';
import { clopperPearsonLower, clopperPearsonUpper } from '../../src/stats/index.js';
import { removeTree, tempDir } from '../evidence/helpers.js';
import { blackoutOutcome, blackoutProtocol, buildSealedUnit, REVIEWER } from './fixtures.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-companion-confirmation-');
});
afterAll(async () => removeTree(root));

describe('a bootstrap word above a companion floor is confirmed against the companion’s exact bound', () => {
  it('reads unresolved (exact floor 7.22 pp above the exact LB 3.89 pp), and the cross-check agrees', async () => {
    const base = blackoutProtocol();
    const input = {
      ...base,
      bootstrap: { replicates: 2000, seed: 7, level: 'unit' },
      criteria: [
        ...(base.criteria as unknown[]),
        {
          id: 'QB',
          estimand: 'D_N',
          rule: 'lower-bound-above',
          margin: 0,
          aboveUpperBoundOf: ['rho_C'],
          method: 'unit-bootstrap',
          level: 0.9,
        },
      ],
    } as typeof base;
    const dir = join(root, 'unit');
    await buildSealedUnit(dir, input, blackoutOutcome, { id: 'companion' });
    const { adjudication: a, text } = await adjudicateUnit(dir, { operator: REVIEWER });
    const rhoC = a.estimands.find((e) => e.id === 'rho_C') as AvailableEstimand;
    const boot = rhoC.intervals.find((i) => i.id === 'unit-bootstrap/l0.9')!;
    expect([boot.lower, boot.upper]).toEqual([0, 0]);
    const exactFloor = rhoC.intervals.find((i) => i.id === 'clopper-pearson/a0.05')!;
    expect(exactFloor.upper).toBeCloseTo(1 - 0.05 ** (1 / 40), 12);
    const dN = a.estimands.find((e) => e.id === 'D_N') as AvailableEstimand;
    const exact = dN.intervals.find((i) => i.id === 'exact-cp-difference/a0.025')!;
    expect(exact.lower).toBeCloseTo(clopperPearsonLower(10, 40, 0.025) - clopperPearsonUpper(0, 40, 0.025), 12);
    expect(exact.lower).toBeGreaterThan(0);
    expect(exact.lower).toBeLessThan(exactFloor.upper);
    const v = a.verdicts.find((x) => x.criterion === 'QB')!;
    expect(v.verdict).toBe('unresolved');
    expect(v.reason).toContain('UB of rho_C by clopper-pearson/a0.05 7.22 pp');
    expect(v.reason).toContain('does not confirm it');
    const sources = {
      protocolText: await readFile(join(dir, 'protocol.json'), 'utf8'),
      rowsText: await readFile(join(dir, 'rows/rows.jsonl'), 'utf8'),
      sealText: await readFile(join(dir, 'seal.json'), 'utf8'),
    };
    expect(crossCheckAdjudication(sources, text).disagreements).toEqual([]);
    // a producer that confirmed against the bootstrap floor ('holds') is caught by the cross-check
    const forged = JSON.parse(text) as { verdicts: { criterion: string; verdict: string }[] };
    forged.verdicts.find((x) => x.criterion === 'QB')!.verdict = 'holds';
    const d = crossCheckAdjudication(sources, JSON.stringify(forged)).disagreements;
    expect(d.some((x) => JSON.stringify(x).includes('QB'))).toBe(true);
  }, 120_000);
});
