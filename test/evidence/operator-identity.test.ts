/**
 * Operator identity (issue 22): the two-operator rule cannot be passed silently. An adjudication by an identity
 * taken from the environment (IMEP_OPERATOR) or whose key was created by that same command is marked in its record
 * and warned about by verify and the report; `--through closeout` records the user's own reason for adjudicating
 * its own run, and asks for it before anything is written.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicate, verifyUnit } from '../../src/evidence/index.js';
import { currentOperator, explicitOperator } from '../../src/evidence/operator.js';
import { readAdjudications } from '../../src/evidence/transitions/post-seal-write.js';
import { blackoutYaml } from '../campaign/helpers.js';
import { imep, liteCheckpointSha, unitIn } from '../campaign/cli-support.js';
import { buildUnit, clock, removeTree, tempDir } from './helpers.js';
import { isolateKeys } from '../signing/helpers.js';

let root: string;
let keys: { dir: string; restore: () => void };

beforeAll(async () => {
  keys = await isolateKeys();
  root = await tempDir('imep-identity-');
});
afterAll(async () => {
  keys.restore();
  await removeTree(root);
  await removeTree(join(keys.dir, '..'));
});

describe('an adjudicator identity nothing vouches for', () => {
  it('from IMEP_OPERATOR, with a key created by the same command: marked in the record, a verify warning', async () => {
    const dir = join(root, 'env-id');
    await buildUnit(dir, 'sealed');
    const operator = currentOperator({ IMEP_OPERATOR: 'fresh-reviewer' });
    expect(operator).toEqual({ id: 'fresh-reviewer', source: 'env' });
    await adjudicate(dir, { adjudicator: { name: 'a' }, result: {}, operator, now: clock });
    const [record] = await readAdjudications(dir);
    expect(record!.operator).toEqual({ id: 'fresh-reviewer', source: 'env' });
    expect(record!.operatorKeyCreated).toBe(true);
    const r = await verifyUnit(dir);
    if (!r.ok) throw new Error(r.first.detail);
    expect(r.signatures?.findings).toEqual([
      {
        path: 'adjudication/adjudication-001.json',
        finding: 'identity',
        severity: 'warning',
        detail:
          "adjudicated as fresh-reviewer: its operator id came from IMEP_OPERATOR, which anyone can set; its signing key was created by the same command that adjudicated (no history before it) — the key's fingerprint, not the name, identifies the adjudicator",
        related: [],
      },
    ]);
    const cli = await imep(['campaign', 'verify', dir], root);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(
      'warning: adjudication/adjudication-001.json: identity: adjudicated as fresh-reviewer',
    );
  });

  it('an explicit identity whose key existed before the command: no mark, no warning', async () => {
    const dir = join(root, 'explicit');
    await buildUnit(dir, 'sealed');
    // the key is made by another process (`imep keys export` creates the current operator's key), before this adjudication
    const made = await imep(['keys', 'export'], root, undefined, {
      IMEP_OPERATOR: 'seasoned-reviewer',
      IMEP_KEYS_DIR: keys.dir,
    });
    expect(made.code, made.stderr).toBe(0);
    await adjudicate(dir, {
      adjudicator: { name: 'a' },
      result: {},
      operator: explicitOperator('seasoned-reviewer'),
      now: clock,
    });
    const [record] = await readAdjudications(dir);
    expect(record!.operator).toEqual({ id: 'seasoned-reviewer', source: 'explicit' });
    expect(record!.operatorKeyCreated).toBeUndefined();
    const r = await verifyUnit(dir);
    expect(r.ok && r.signatures?.findings).toEqual([]);
  });
});

describe('campaign run --through closeout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-reason-'));
  writeFileSync(join(dir, 'p.yaml'), blackoutYaml({ n: 2, sha: liteCheckpointSha(), id: 'reason-test' }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('without --same-operator-reason: refused up front (exit 2), nothing written', async () => {
    const r = await imep(['campaign', 'run', 'p.yaml', '--through', 'closeout', '--campaigns-dir', 'c'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('--same-operator-reason');
    expect(existsSync(join(dir, 'c'))).toBe(false);
  });

  it("with it: the user's reason is the recorded override, in the output, the record and the report", async () => {
    const reason = 'pilot run; a second reviewer adjudicates the formal unit';
    const r = await imep(
      ['campaign', 'run', 'p.yaml', '--through', 'closeout', '--campaigns-dir', 'c', '--same-operator-reason', reason],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`same-operator override recorded: "${reason}"`);
    expect(r.stdout).not.toContain('single-operator quick start');
    const unit = unitIn(join(dir, 'c')) as string;
    const [record] = await readAdjudications(unit);
    expect(record!.sameOperatorOverride?.reason).toBe(reason);
    // the CLI's identity is IMEP_OPERATOR (cli-support sets it): the record, verify and the report say so
    expect(record!.operator.source).toBe('env');
    const v = await imep(['campaign', 'verify', unit], dir);
    expect(v.stdout).toContain('identity: adjudicated as cli-test: its operator id came from IMEP_OPERATOR');
    const report = readFileSync(join(dir, 'c', 'reports', unit.split('/').pop() as string, 'report.md'), 'utf8');
    expect(report).toContain('adjudicator identity');
    expect(report).toContain('its operator id came from IMEP_OPERATOR');
  }, 120_000);
});
