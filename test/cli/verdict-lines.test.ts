/**
 * Issue 35 §2, §6, §7 through the built CLI on a small blackout ladder (20 seeds): every verdict line carries its
 * claim in words and its bound, the competence gate says its rate and threshold (terminal and report.md), the run
 * ends with one "found:" line derived from the adjudication, `campaign adjudicate` prints the same lines, and
 * `campaign status` prints the next command with the unit.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blackoutYaml } from '../campaign/helpers.js';
import { imep, liteCheckpointSha, unitIn } from '../campaign/cli-support.js';

interface Adj {
  conditions: { condition: string; success: { successes: number; n: number } | null }[];
  verdicts: { criterion: string; verdict: string; bound?: { lower: number; upper: number } | null }[];
  estimands: { id: string; status: string; estimate?: number }[];
}
const sp = (x: number): string => `${x > 0 || Object.is(x, 0) ? '+' : ''}${(100 * x).toFixed(2)}`;

function checkLines(stdout: string, adj: Adj): void {
  const lines = stdout.split('\n');
  for (const v of adj.verdicts) {
    const line = lines.find((l) => l.startsWith(`  ${v.criterion}: ${v.verdict} — claim "`));
    expect(line, `${v.criterion}'s line in\n${stdout}`).toBeDefined();
  }
  const q1 = adj.verdicts.find((v) => v.criterion === 'Q1');
  const b = q1?.bound;
  expect(b).toBeTruthy();
  const relation = { holds: 'shown', 'not detected': 'excluded', unresolved: 'neither shown nor excluded' }[
    q1!.verdict as 'holds'
  ];
  expect(stdout).toContain(
    `  Q1: ${q1!.verdict} — claim "D_N lies below +10.00 pp" ${relation}: D_N [${sp(b!.lower)}, ${sp(b!.upper)}] pp (`,
  );
  const a = adj.conditions.find((c) => c.condition === 'A')!.success!;
  expect(stdout).toContain(
    `  competence gate competence: A succeeds ${a.successes}/${a.n} = ${((100 * a.successes) / a.n).toFixed(1)}% ≥ 50.0% required (Wilson 95% lower `,
  );
}

describe('verdict lines with their claims, and the found line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-verdict-lines-'));
  writeFileSync(join(dir, 'blackout-20.yaml'), blackoutYaml({ n: 20, sha: liteCheckpointSha(), strict: false }));

  it('campaign run --through closeout: claim and bound on every verdict line; ends with found:', async () => {
    const r = await imep(
      ['campaign', 'run', 'blackout-20.yaml', '--through', 'closeout', '--same-operator-reason', 'test'],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const unit = unitIn(join(dir, 'campaigns')) as string;
    const adj = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as Adj;
    checkLines(r.stdout, adj);
    const last = r.stdout.trimEnd().split('\n').at(-1) ?? '';
    const n = (c: string) => {
      const s = adj.conditions.find((x) => x.condition === c)!.success!;
      return `${c} ${s.successes}/${s.n}`;
    };
    const dN = adj.estimands.find((e) => e.id === 'D_N')!;
    const q1 = adj.verdicts.find((v) => v.criterion === 'Q1')!.bound!;
    expect(
      last.startsWith(`found: ${n('A')}, ${n('S_pi')}, ${n('T_mu')}, ${n('U')}, ${n('N_blk')}, ${n('C')}; SR_A `),
    ).toBe(true);
    expect(last).toContain(`, D_N ${sp(dN.estimate!)} pp [${sp(q1.lower)}, ${sp(q1.upper)}], `);
    expect(adj.estimands.every((e) => last.includes(` ${e.id} `))).toBe(true);

    const [report] = readdirSync(join(dir, 'campaigns', 'reports'));
    const md = readFileSync(join(dir, 'campaigns', 'reports', report!, 'report.md'), 'utf8');
    expect(md).toMatch(/competence gate competence: A succeeds \d+\/20 = [\d.]+% ≥ 50\.0% required/);

    const status = await imep(['campaign', 'status', unit], dir);
    expect(status.stdout).toContain(`— next: imep campaign verify ${unit}\n`);
  }, 180_000);

  it('campaign adjudicate prints the same lines and the found line', async () => {
    const d2 = mkdtempSync(join(tmpdir(), 'imep-verdict-lines-adj-'));
    writeFileSync(join(d2, 'b.yaml'), blackoutYaml({ n: 20, sha: liteCheckpointSha(), strict: false }));
    const run = await imep(['campaign', 'run', 'b.yaml', '--through', 'seal'], d2);
    expect(run.code, run.stderr).toBe(0);
    const unit = unitIn(join(d2, 'campaigns')) as string;
    const r = await imep(['campaign', 'adjudicate', unit, '--allow-same-operator', 'test'], d2);
    expect(r.code, r.stderr).toBe(0);
    const adj = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as Adj;
    checkLines(r.stdout, adj);
    expect(r.stdout).toMatch(/\nfound: A \d+\/20, S_pi \d+\/20, .*; SR_A .*, D_N .*\nnext: imep campaign cross-check /);
  }, 180_000);
});
