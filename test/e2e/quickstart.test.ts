/**
 * The README quick start, end to end through the built CLI: a reduced copy of the blackout ladder (40 seeds)
 * through `imep campaign run FILE --through closeout` → a sealed, adjudicated, cross-checked, closed-out unit
 * with its report; `verify` passes; flipping one byte of ANY file of the unit makes `verify` fail (exit 3)
 * naming that file; a tampered sealed unit is refused by `adjudicate` too; out-of-order steps are refused.
 */
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blackoutYaml } from '../campaign/helpers.js';
import { imep, liteCheckpointSha, unitIn } from '../campaign/cli-support.js';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

function flipByte(file: string): () => void {
  const mode = statSync(file).mode & 0o777;
  const dirMode = statSync(join(file, '..')).mode & 0o777;
  chmodSync(join(file, '..'), dirMode | 0o200);
  chmodSync(file, mode | 0o200);
  const bytes = readFileSync(file);
  const at = Math.floor(bytes.length / 2);
  const flipped = Buffer.from(bytes);
  flipped[at] = (flipped[at] ?? 0) ^ 0x01;
  writeFileSync(file, flipped);
  return () => {
    writeFileSync(file, bytes);
    chmodSync(file, mode);
    chmodSync(join(file, '..'), dirMode);
  };
}

describe('quick start: imep campaign run FILE --through closeout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-quickstart-'));
  writeFileSync(join(dir, 'blackout-40.yaml'), blackoutYaml({ n: 40, sha: liteCheckpointSha(), strict: false }));

  it('takes a protocol to a closed-out unit with a report; verify names any flipped byte', async () => {
    const r = await imep(
      [
        'campaign',
        'run',
        'blackout-40.yaml',
        '--through',
        'closeout',
        '--same-operator-reason',
        'single-operator quick start',
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    for (const step of [
      'precommitted',
      'sealed',
      'adjudicated',
      'single-operator quick start',
      'cross-checked',
      'closed out',
      'report:',
    ])
      expect(r.stdout).toContain(step);
    const unit = unitIn(join(dir, 'campaigns')) as string;
    expect(unit).not.toBeNull();
    const status = await imep(['campaign', 'status', unit, '--json'], dir);
    const s = JSON.parse(status.stdout) as { state: string; rows: { done: number; planned: number } };
    expect(s.state).toBe('closed');
    expect(s.rows).toMatchObject({ done: 7 * 40 * 2, planned: 7 * 40 * 2 });
    expect(
      readFileSync(join(dir, 'campaigns/reports', unit.split('/').pop() as string, 'report.html'), 'utf8'),
    ).toMatch(/<html/i);

    const ok = await imep(['campaign', 'verify', unit], dir);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/intact/);
    // the signature chain is printed: every record signed, the recorded single-operator override a warning
    expect(ok.stdout).toMatch(
      /^signatures: signed — precommit\.json, seal\.json, .*closeout\.json by \S+ \(ed25519:[0-9a-f]{64}\); 0 errors, \d+ warnings: .*adjudication\/adjudication-001\.json same-operator \[warning\]/m,
    );
    // the identity came from IMEP_OPERATOR: verify warns (the two-operator rule is not passed silently)
    expect(ok.stdout).toContain(
      'warning: adjudication/adjudication-001.json: identity: adjudicated as cli-test: its operator id came from IMEP_OPERATOR',
    );
    expect(ok.stdout).toMatch(
      /intact and signed by trusted keys — \d+ files checked; verified to stage: closed out; closeout root [0-9a-f]{64}/,
    );

    const all = files(unit);
    expect(all.length).toBeGreaterThan(8);
    for (const f of all) {
      const rel = relative(unit, f);
      const restore = flipByte(f);
      try {
        const bad = await imep(['campaign', 'verify', unit], dir);
        expect(bad.code, `${rel}: ${bad.stdout}${bad.stderr}`).toBe(3);
        expect(bad.stderr, rel).toContain(rel);
        expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      } finally {
        restore();
      }
    }
    expect((await imep(['campaign', 'verify', unit], dir)).code).toBe(0);

    // a unit whose unit.json was removed is a tampered unit (exit 3 naming unit.json), not a usage error
    chmodSync(unit, 0o755);
    renameSync(join(unit, 'unit.json'), join(unit, 'unit.json.moved'));
    try {
      const headless = await imep(['campaign', 'verify', unit], dir);
      expect(headless.code).toBe(3);
      expect(headless.stderr).toContain(join(unit, 'unit.json'));
    } finally {
      renameSync(join(unit, 'unit.json.moved'), join(unit, 'unit.json'));
    }
    expect((await imep(['campaign', 'verify', unit], dir)).code).toBe(0);
    // deleting closeout.json leaves a legitimate earlier state; a reader citing the closeout root catches it
    const root = /closeout root ([0-9a-f]{64})/.exec(ok.stdout)?.[1] as string;
    const closeout = readFileSync(join(unit, 'closeout.json'));
    chmodSync(join(unit, 'closeout.json'), 0o644);
    rmSync(join(unit, 'closeout.json'));
    try {
      const cited = await imep(['campaign', 'verify', unit, '--expected-root', root], dir);
      expect(cited.code).toBe(3);
      expect(cited.stderr).toContain('root mismatch');
      expect(cited.stderr).toContain('closeout.json');
      // without the cited root, the rolled-back unit verifies — to the stage it shows, which verify prints
      const plain = await imep(['campaign', 'verify', unit], dir);
      expect(plain.stdout).toContain('verified to stage: adjudicated (not closed out)');
    } finally {
      writeFileSync(join(unit, 'closeout.json'), closeout);
    }
    expect((await imep(['campaign', 'verify', unit, '--expected-root', root], dir)).code).toBe(0);

    // a closed unit: nothing more can be run or adjudicated
    const again = await imep(['campaign', 'adjudicate', unit, '--allow-same-operator', 'test'], dir);
    expect(again.code).not.toBe(0);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
  }, 300_000);

  it('refuses out-of-order steps and adjudicating a tampered sealed unit, each with one line', async () => {
    const r = await imep(['campaign', 'run', 'blackout-40.yaml', '--campaigns-dir', 'sealed-only'], dir);
    expect(r.code, r.stderr).toBe(0);
    const unit = unitIn(join(dir, 'sealed-only')) as string;
    const closeout = await imep(['campaign', 'closeout', unit], dir);
    expect(closeout.code).toBe(2);
    expect(closeout.stderr).toMatch(/imep campaign adjudicate/);
    expect(closeout.stderr.trim().split('\n')).toHaveLength(1);
    const sealAgain = await imep(['campaign', 'seal', unit], dir);
    expect(sealAgain.code).toBe(2); // a state refusal: nothing was written, nothing is damaged
    expect(sealAgain.stderr.trim().split('\n')).toHaveLength(1);

    const restore = flipByte(join(unit, 'rows/rows.jsonl'));
    try {
      const adj = await imep(['campaign', 'adjudicate', unit, '--allow-same-operator', 'test'], dir);
      expect(adj.code).toBe(3);
      expect(adj.stderr).toContain('rows/rows.jsonl');
      expect(adj.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      restore();
    }
    const adj = await imep(['campaign', 'adjudicate', unit], dir);
    expect(adj.code).toBe(2); // the operator who ran the conditions may not adjudicate without an override
    expect(adj.stderr).toMatch(/another session|override/);
  }, 300_000);
});
