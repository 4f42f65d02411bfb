import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicateUnit, type Adjudication, type AvailableEstimand } from '../../src/adjudication/index.js';
import { crossCheckUnit } from '../../src/crosscheck/index.js';
import { closeoutUnit } from '../../src/app/index.js';
import { buildProgram } from '../../src/cli/program.js';
import { registerReport } from '../../src/cli/commands/report/group.js';
import { writeReport } from '../../src/report/write-report.js';
import { intervalText, ppText } from '../../src/report/model.js';
import { expectImepError, removeTree, snapshot, tempDir } from '../evidence/helpers.js';
import {
  blackoutOutcome,
  blackoutProtocol,
  buildSealedUnit,
  clock,
  REVIEWER,
  substitutionOutcome,
  substitutionProtocol,
  type EpisodeContext,
  type RowSpec,
} from '../adjudication/fixtures.js';
import { CHROMIUM, inspectReport } from './browser.js';
import { minimumDetectableEffect, pairedPowerExact } from '../../src/stats/power.js';

const OUT = fileURLToPath(new URL('./out/', import.meta.url));

let root: string;
let unit: string;
let adjudication: Adjudication;
let outDir: string;
beforeAll(async () => {
  root = await tempDir('imep-report-');
  unit = join(root, 'substitution');
  await buildSealedUnit(unit, substitutionProtocol(), substitutionOutcome, {
    id: 'substitution',
    amendBeforeSeal: true,
  });
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
    for (const f of ['report.html', 'report.md', 'rows.csv'])
      expect((await stat(join(outDir, f))).size).toBeGreaterThan(0);
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
      if (v.verdict !== 'invalid' && v.verdict !== 'excluded' && v.bound)
        expect(row[6]?.startsWith(intervalText(v.bound.lower, v.bound.upper))).toBe(true);
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
    // the verdict figure first, then the descriptive ones (docs/campaigns.md "Reports")
    expect(page.figures.map((f) => f.id)).toEqual(['forest', 'outcome-change', 'success', 'coverage']);
    for (const f of page.figures) {
      expect(f.svgs, f.id).toBe(1);
      expect(f.marks, f.id).toBeGreaterThan(0);
    }
    expect(page.consoleErrors).toEqual([]);
    expect(page.requests).toEqual([]);
    expect(page.scripts).toBe(0);
    expect((await stat(join(OUT, 'report.png'))).size).toBeGreaterThan(10_000);
  });

  it('shows the frozen MDE table, the MDE at the observed discordance, and the first-query distributions', async () => {
    const dir = join(root, 'power');
    const assumed = [0.1, 0.3];
    const inputs = {
      test: 'mcnemar-one-sided' as const,
      alpha: 0.05,
      power: 0.8,
      n: 40,
      assumedDiscordance: assumed,
      method: 'exact' as const,
    };
    const outputs = assumed.map((rho) => {
      const m = minimumDetectableEffect({
        n: 40,
        rhoDiscordant: rho,
        alpha: 0.05,
        test: 'mcnemar-one-sided',
        power: 0.8,
      });
      return { assumedDiscordance: rho, effect: m.status === 'found' ? Number(m.effect.toFixed(4)) : null };
    });
    await buildSealedUnit(
      dir,
      blackoutProtocol({ mde: { estimand: 'theta', inputs, outputs } } as never),
      blackoutOutcome,
      { id: 'power' },
    );
    const { adjudication: a } = await adjudicateUnit(dir, { operator: REVIEWER });
    const out = join(root, 'power-report');
    await writeReport(dir, { outDir: out });
    const md = await readFile(join(out, 'report.md'), 'utf8');
    expect(md).toContain('## Power analysis (MDE)');
    for (const o of outputs)
      expect(mdRow(md, `${(100 * o.assumedDiscordance).toFixed(2)}%`)[1]).toBe(
        o.effect === null ? 'unreachable' : ppText(o.effect),
      );
    const theta = a.estimands.find((e) => e.id === 'theta') as AvailableEstimand;
    const { n, bPrime, cPrime } = theta.counts as { n: number; bPrime: number; cPrime: number };
    const row = mdRow(md, 'theta');
    const observed = md
      .split('\n')
      .filter((l) => l.startsWith('| theta |'))
      .map((l) => l.slice(2, -2).split(' | '))
      .find((r) => r.length === 6);
    expect(observed, `observed row in ${row.join(' | ')}`).toBeDefined();
    const [, nText, disc, rhoText, effText, mdeText] = observed!;
    expect(nText).toBe(String(n));
    expect(disc).toBe(`${bPrime} + ${cPrime}`);
    expect(rhoText).toBe(`${((100 * (bPrime + cPrime)) / n).toFixed(2)}%`);
    expect(effText).toBe(ppText(theta.estimate));
    // this fixture's discordance is too small for 80% power at any θ ≤ ρ: the printed maximum is the exact power at θ = ρ
    const rho = (bPrime + cPrime) / n;
    const maxPower = pairedPowerExact({ n, rhoDiscordant: rho, alpha: 0.05, test: 'mcnemar-one-sided', effect: rho });
    expect(maxPower).toBeLessThan(0.8);
    expect(mdeText).toBe(`unreachable (max power ${maxPower.toFixed(4)})`);
    // first query: every condition of the plan, attempt 1, clock 1 with an empty bank in every episode
    const section = md.slice(md.indexOf('## First memory query'), md.indexOf('## Power analysis (MDE)'));
    const fq = (c: string): string[] => {
      const lines = section.split('\n').filter((l) => l.startsWith(`| ${c} | 1 |`));
      expect(lines, c).toHaveLength(1);
      return lines[0]!.slice(2, -2).split(' | ');
    };
    for (const c of ['A', 'S_pi', 'T_mu', 'U', 'N_blk', 'C']) {
      const r = fq(c);
      expect(r[2]).toBe(c === 'A' ? '80' : '40'); // A runs in both waves
      expect(r[3]).toBe(r[2]);
      expect(r[4]).toBe('1 / 1 / 1');
      expect(r[5]).toBe('0 / 0 / 0');
    }
  });

  it('withholds an invalid number; refuses a folder inside the unit; leaves the unit untouched', async () => {
    const dir = join(root, 'invalid');
    const leaky = (ctx: EpisodeContext): RowSpec => ({
      ...blackoutOutcome(ctx),
      ...(ctx.ep.condition === 'N_blk' && ctx.i === 3 ? { reads: { empty: 20 } } : {}),
    });
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

  it('`imep report UNIT --out DIR` (registerReport) writes the three files and prints the report size', async () => {
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
    const lines = written.join('').trim().split('\n');
    expect(lines.slice(0, 3)).toEqual([join(out, 'report.html'), join(out, 'report.md'), join(out, 'rows.csv')]);
    // this fixture's protocol records no frames: the size is report.html's alone
    expect(lines[3]).toBe(
      `report size: ${(await stat(join(out, 'report.html'))).size} bytes (report.html ${(await stat(join(out, 'report.html'))).size} bytes + 0 frames 0 bytes; cap ${4 * 1024 * 1024} bytes)`,
    );
    expect(lines).toHaveLength(4);
    expect(await readFile(join(out, 'report.md'), 'utf8')).toBe(await readFile(join(outDir, 'report.md'), 'utf8'));
  });
});
