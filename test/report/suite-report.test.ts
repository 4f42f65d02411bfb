/**
 * The report of a suite protocol (src/report/suite-sections.ts): a section naming the benchmark with the pooled
 * verdicts and the multiplicity family, then one section per task with its success per condition (exact
 * Clopper–Pearson 95%), its per-task verdicts and its filmstrips — every number from the sealed rows and the
 * adjudication. The unit goes through adjudication, the cross-check and closeout first.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicateUnit } from '../../src/adjudication/index.js';
import { closeoutUnit } from '../../src/app/index.js';
import { crossCheckUnit } from '../../src/crosscheck/index.js';
import { writeReport } from '../../src/report/write-report.js';
import { clopperPearsonLower, clopperPearsonUpper } from '../../src/stats/index.js';
import { removeTree, tempDir } from '../evidence/helpers.js';
import { buildSealedUnit, clock, REVIEWER } from '../adjudication/fixtures.js';
import { suiteInput, suiteOutcome } from '../adjudication/suite-fixture.js';

let root: string;
let md: string;
beforeAll(async () => {
  root = await tempDir('imep-suite-report-');
  const unit = join(root, 'suite');
  await buildSealedUnit(unit, suiteInput(), suiteOutcome, { id: 'suite' });
  await adjudicateUnit(unit, { operator: REVIEWER, now: clock });
  await crossCheckUnit(unit, { operator: REVIEWER, now: clock });
  await closeoutUnit(unit, { operator: REVIEWER, now: clock });
  const out = join(root, 'report');
  await writeReport(unit, { outDir: out });
  md = await readFile(join(out, 'report.md'), 'utf8');
});
afterAll(async () => removeTree(root));

/** The Markdown between a heading and the next heading of the same level. */
function section(title: string): string {
  const start = md.indexOf(`## ${title}\n`);
  expect(start, `section ${title}`).toBeGreaterThanOrEqual(0);
  const next = md.indexOf('\n## ', start + 1);
  return md.slice(start, next < 0 ? undefined : next);
}

const row = (text: string, first: string): string[] | undefined =>
  text
    .split('\n')
    .find((l) => l.startsWith(`| ${first} |`))
    ?.split(' | ')
    .map((c) => c.replace(/^\| |\s*\|$/g, ''));

const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;

describe('a suite report', () => {
  it('names the benchmark, its pooled verdicts and its multiplicity family', () => {
    const s = section('Suite: lite-memory');
    expect(s).toContain('3 tasks of the benchmark lite-memory: ShellGameTouch, RememberColor3, RememberColor5');
    expect(row(s, 'Q1_eligibility')?.[5]).toBe('holds');
    expect(row(s, 'Q1_eligibility@ShellGameTouch')).toBeUndefined();
    expect(s.split('\n').filter((l) => l.startsWith('| Q1_eligibility_tasks |'))).toHaveLength(3);
  });

  it('one section per task: success per condition with exact intervals, its verdicts', () => {
    const s = section('Task RememberColor3');
    const n = row(s, 'N_blk');
    expect(n?.[2]).toBe(`3/8 (${pct(3 / 8)})`);
    expect(n?.[3]).toBe(`[${pct(clopperPearsonLower(3, 8, 0.025))}, ${pct(clopperPearsonUpper(3, 8, 0.025))}]`);
    expect(row(s, 'A')?.[2]).toBe(`8/8 (${pct(1)})`);
    expect(row(s, 'Q1_eligibility@RememberColor3')?.[5]).toBe('unresolved');
    expect(s).toContain('No filmstrip pair on RememberColor3.');
    expect(row(section('Task ShellGameTouch'), 'Q1_eligibility@ShellGameTouch')?.[5]).toBe('holds');
    expect(row(section('Task RememberColor5'), 'N_blk')?.[2]).toBe(`8/8 (${pct(1)})`);
  });
});
