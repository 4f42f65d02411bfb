import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicateUnit, closeoutUnit, crossCheckUnit, type Adjudication, type AvailableEstimand } from '../../src/campaign/adjudication/index.js';
import { buildProgram } from '../../src/cli/program.js';
import { registerReport } from '../../src/cli/report-commands.js';
import { writeReport } from '../../src/report/index.js';
import { intervalText, ppText } from '../../src/report/model.js';
import { expectImepError, removeTree, snapshot, tempDir } from '../campaign/helpers.js';
import { blackoutOutcome, blackoutProtocol, buildSealedUnit, clock, REVIEWER, substitutionOutcome, substitutionProtocol, type EpisodeContext, type RowSpec } from '../campaign/adjudication/fixtures.js';
import { CHROMIUM, inspectReport } from './browser.js';

const OUT = fileURLToPath(new URL('./out/', import.meta.url));

let root: string;
let unit: string;
let adjudication: Adjudication;
let outDir: string;
beforeAll(async () => {
  root = await tempDir('imep-report-');
  unit = join(root, 'substitution');
  await buildSealedUnit(unit, substitutionProtocol(), substitutionOutcome, { id: 'substitution', amendBeforeSeal: true });
  adjudication = (await adjudicateUnit(unit, { operator: REVIEWER, now: clock })).adjudication;
  await crossCheckUnit(unit, { operator: REVIEWER, now: clock });
  await closeoutUnit(unit, { operator: REVIEWER, now: clock });
  outDir = join(root, 'report');
  await writeReport(unit, { outDir });
});
afterAll(async () => removeTree(root));

function mdRow(md: string, first: string): string[] {
  const line = md.split('\n').find((l) => l.startsWith(`| ${first} |`));
  expect(line, `a row for ${first}`).toBeDefined();
  return line!.slice(2, -2).split(' | ');
}

describe('writeReport', () => {
  it('writes report.html, report.md and rows.csv outside the closed unit', async () => {
    for (const f of ['report.html', 'report.md', 'rows.csv']) expect((await stat(join(outDir, f))).size).toBeGreaterThan(0);
    const csv = (await readFile(join(outDir, 'rows.csv'), 'utf8')).trimEnd().split('\n');
    expect(csv.length).toBe(adjudication.provenance.rowCount + 1);
    expect(csv[0]?.startsWith('seq,wave,condition,task,seed,attempt,status')).toBe(true);
    expect(csv.filter((l) => l.includes(',removed,E_DONOR_SHORT,')).length).toBe(2);
  });

  it('every number in report.md is the adjudication’s, formatted by code', async () => {
    const md = await readFile(join(outDir, 'report.md'), 'utf8');
    for (const e of adjudication.estimands) {
      if (e.status !== 'available') continue;
      const row = mdRow(md, e.id);
      const a = e as AvailableEstimand;
      expect(row[3]).toBe(`${e.cohort.resolved}/${e.cohort.paired}`);
      expect(row[7]).toBe(e.kind === 'successRate' ? `${(100 * a.estimate).toFixed(2)}%` : ppText(a.estimate));
      const first = a.intervals[0]!;
      expect(row[8]?.startsWith(intervalText(first.lower, first.upper))).toBe(true);
      expect(row[9]).toBe(first.label);
    }
    const th = mdRow(md, 'thetaBar');
    expect(th[6]).toBe('b′=5, c′=2, n=58');
    for (const v of adjudication.verdicts) {
      const row = mdRow(md, v.criterion);
      expect(row[5]).toBe(v.verdict);
      if (v.verdict !== 'invalid' && v.verdict !== 'excluded' && v.bound) expect(row[6]?.startsWith(intervalText(v.bound.lower, v.bound.upper))).toBe(true);
    }
    // amendments with their classification; provenance
    expect(md).toContain('| A1 |');
    expect(md).toContain('after-formal-data');
    expect(md).toContain(adjudication.provenance.protocolHash);
    expect(md).toContain(adjudication.provenance.planHash);
    expect(md).toContain(adjudication.unit.sealRoot);
    expect(md).toContain('c'.repeat(64));
    expect(md).toContain('0123456789abcdef0123456789abcdef01234567');
  });

  it('renders every figure in headless Chromium, offline, with no console error', async () => {
    const html = join(outDir, 'report.html');
    const text = await readFile(html, 'utf8');
    expect(text).not.toMatch(/<script/i);
    expect(text).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    expect(CHROMIUM).toBe('/usr/bin/chromium');
    const page = await inspectReport(html, join(OUT, 'report.png'));
    expect(page.figures.map((f) => f.id)).toEqual(['outcome-change', 'success', 'coverage']);
    for (const f of page.figures) {
      expect(f.svgs, f.id).toBe(1);
      expect(f.marks, f.id).toBeGreaterThan(0);
    }
    expect(page.consoleErrors).toEqual([]);
    expect(page.requests).toEqual([]);
    expect(page.scripts).toBe(0);
    expect((await stat(join(OUT, 'report.png'))).size).toBeGreaterThan(10_000);
  });

  it('withholds an invalid number; refuses a folder inside the unit; leaves the unit untouched', async () => {
    const dir = join(root, 'invalid');
    const leaky = (ctx: EpisodeContext): RowSpec => ({ ...blackoutOutcome(ctx), ...(ctx.ep.condition === 'N_blk' && ctx.i === 3 ? { reads: { empty: 20 } } : {}) });
    await buildSealedUnit(dir, blackoutProtocol(), leaky, { id: 'invalid' });
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    const before = await snapshot(dir);
    const out = join(root, 'invalid-report');
    await writeReport(dir, { outDir: out });
    expect(await snapshot(dir)).toEqual(before);
    const md = await readFile(join(out, 'report.md'), 'utf8');
    const dN = mdRow(md, 'D_N');
    expect(dN[6]).toBe('withheld');
    expect(dN[7]).toBe('withheld');
    const q1 = mdRow(md, 'Q1');
    expect(q1[5]).toBe('invalid');
    expect(q1[6]).toBe('withheld');
    const counts = (a.estimands.find((e) => e.id === 'D_N') as AvailableEstimand).counts;
    expect(md).not.toContain(`b=${counts.b}, c=${counts.c}, n=${counts.n} |`);
    await expectImepError(writeReport(dir, { outDir: join(dir, 'report') }), 'E_USAGE');
  });

  it('`imep report UNIT --out DIR` (registerReport) writes the three files', async () => {
    const out = join(root, 'cli-report');
    const program = buildProgram({ report: registerReport });
    const written: string[] = [];
    const orig = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      await program.parseAsync(['node', 'imep', 'report', unit, '--out', out]);
    } finally {
      process.stdout.write = orig;
    }
    expect(written.join('').trim().split('\n')).toEqual([join(out, 'report.html'), join(out, 'report.md'), join(out, 'rows.csv')]);
    expect(await readFile(join(out, 'report.md'), 'utf8')).toBe(await readFile(join(outDir, 'report.md'), 'utf8'));
  });
});
