/**
 * CLI rough edges a new user hit (issue 22), through the built CLI: "next:" hints print a command that works as
 * typed (`npx imep …` under npx); hints name only commands that exist; one default reports folder; a campaigns or
 * report folder that cannot be created (/proc/x) is refused with one line instead of hanging.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blackoutYaml } from '../campaign/helpers.js';
import { imep, liteCheckpointSha, unitIn } from '../campaign/cli-support.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-rough-'));
writeFileSync(join(dir, 'p.yaml'), blackoutYaml({ n: 2, sha: liteCheckpointSha(), id: 'rough-edges' }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NPX = { npm_command: 'exec' };

describe('a unit run, adjudicated and reported from the command line', () => {
  let unit = '';

  it('"next:" names the command as it was typed: npx imep under npx, else imep', async () => {
    const r = await imep(['campaign', 'run', 'p.yaml', '--campaigns-dir', 'c'], dir, undefined, NPX);
    expect(r.code, r.stderr).toBe(0);
    unit = unitIn(join(dir, 'c')) as string;
    expect(r.stdout).toMatch(/^next: npx imep campaign adjudicate \S+$/m);
    expect(r.stdout).not.toMatch(/(^|[^x] )imep campaign/m);
    const plain = await imep(['campaign', 'status', unit], dir, undefined, { npm_command: '' });
    expect(plain.stdout).toMatch(/next: imep campaign adjudicate/);
    expect(plain.stdout).not.toContain('npx imep');
  }, 120_000);

  it('a second adjudication is refused with hints naming only real commands', async () => {
    const other = { IMEP_OPERATOR: 'second-session' };
    const first = await imep(['campaign', 'adjudicate', unit], dir, undefined, { ...other, ...NPX });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('next: npx imep campaign cross-check');
    const again = await imep(['campaign', 'adjudicate', unit], dir, undefined, { ...other, ...NPX });
    expect(again.code).toBe(2);
    expect(again.stderr).not.toMatch(/reproduceAdjudication|regenerate: true/);
    expect(again.stderr).toContain('`npx imep campaign verify');
    const none = await imep(['report', join(dir, 'no-unit-here')], dir);
    expect(none.code).not.toBe(0);
    expect(none.stderr).not.toContain('campaign create');
  }, 60_000);

  it('imep report writes where --through closeout does: <campaigns dir>/reports/<unit>', async () => {
    const r = await imep(['report', unit], dir);
    expect(r.code, r.stderr).toBe(0);
    const name = unit.split('/').pop() as string;
    expect(r.stdout.split('\n')[0]).toBe(join(dir, 'c', 'reports', name, 'report.html'));
    expect(existsSync(join(dir, 'reports'))).toBe(false);
  }, 60_000);

  it('a folder that cannot be made (/proc/x) is one line, exit 4 — not a hang', async () => {
    const run = await imep(['campaign', 'run', 'p.yaml', '--campaigns-dir', '/proc/imep-x/c'], dir);
    expect(run.code).toBe(4);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('/proc/imep-x');
    const report = await imep(['report', unit, '--out', '/proc/imep-x/r'], dir);
    expect(report.code).toBe(4);
    expect(report.stderr).toContain('cannot create the report folder');
  }, 30_000);

  it('a probe run prints what it found: rows, completed and failed, successes and correct decisions per wave, task and condition', async () => {
    const r = await imep(['campaign', 'probe', 'p.yaml', '--n', '1', '--campaigns-dir', 'probe-c'], dir);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const head = lines.findIndex((l) =>
      /^wave\s+task\s+condition\s+rows\s+completed\s+failed\s+successes\s+correct decisions$/.test(l),
    );
    expect(head).toBeGreaterThan(-1);
    const body = lines
      .slice(head + 2)
      .filter((l) => /^\s*\d+\s+\S+\s+\S+\s+\d+\s+\d+\s+\d+\s+\d+\/\d+\s+(\d+\/\d+|—)$/.test(l));
    // the blackout ladder's seven conditions, one unit (two attempts) each
    const cols = body.map((l) => l.trim().split(/\s+/));
    expect(cols.map((c) => `${c[0]}:${c[2]}`)).toEqual(['1:A', '1:S_pi', '1:T_mu', '1:U', '2:A', '2:N_blk', '2:C']);
    // rows, how many ran to their end (status ok; was counted as 'completed' and printed 0) and how many failed
    for (const c of cols) expect([c[3], c[4], c[5]]).toEqual(['2', '2', '0']);
  }, 60_000);
});
