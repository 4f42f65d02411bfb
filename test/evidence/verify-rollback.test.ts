/**
 * Downgrade and rollback (issue 24, "Evidence a forger can downgrade or roll back"): verify says which stage it
 * verified to; a rolled-back unit (closeout and adjudication records removed)
 * is caught by the closeout root cited outside the unit and reported as a root mismatch; a moved closeout.json is
 * named as moved, not as a stray; a changed seal.json is named as such even when a post-seal amendment was chained
 * to it; sealing a sealed unit is a state refusal (exit 2), not tampering (3).
 */
import { chmod, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { amend, explicitOperator, verifyUnit } from '../../src/evidence/index.js';
import type { VerifyOk } from '../../src/evidence/verify/verify-types.js';
import { failed, isolateKeys, readJson, rewrite, unitCopies, writeJson } from '../signing/helpers.js';
import { imep } from '../campaign/cli-support.js';
import { buildUnit, clock, removeTree, tempDir } from './helpers.js';

const PI = explicitOperator('pi@lab');
let root: string;
let keys: { dir: string; restore: () => void };
let sealed: string;
let amended: string;
let closed: string;

beforeAll(async () => {
  keys = await isolateKeys();
  root = await tempDir('imep-rollback-');
  sealed = join(root, 'sealed');
  await buildUnit(sealed, 'sealed');
  amended = join(root, 'amended');
  await buildUnit(amended, 'sealed');
  await amend(amended, { text: 'Q1 is exploratory', affects: ['questions.Q1'], author: PI, now: clock });
  closed = join(root, 'closed');
  await buildUnit(closed, 'closed');
});
afterAll(async () => {
  keys.restore();
  await removeTree(root);
  await removeTree(join(keys.dir, '..'));
});

const copyOf = unitCopies(() => root);

function ok(r: Awaited<ReturnType<typeof verifyUnit>>): VerifyOk {
  if (!r.ok) throw new Error(`expected an intact unit: ${r.first.path} ${r.first.detail}`);
  return r;
}

describe('the stage verify verified to, and a rolled-back unit', () => {
  it('names the stage: sealed, adjudicated, closed', async () => {
    expect(ok(await verifyUnit(sealed)).stage).toBe('sealed');
    const adj = await copyOf(closed);
    await chmod(adj, 0o755);
    await rm(join(adj, 'closeout.json'), { force: true });
    expect(ok(await verifyUnit(adj)).stage).toBe('adjudicated');
    expect(ok(await verifyUnit(closed)).stage).toBe('closed');
  });

  it('closeout and adjudication records removed: the cited closeout root catches it, as a root mismatch', async () => {
    const closeRoot = ok(await verifyUnit(closed)).root;
    const dir = await copyOf(closed);
    await chmod(dir, 0o755);
    await rm(join(dir, 'closeout.json'));
    await chmod(join(dir, 'adjudication'), 0o755);
    await rm(join(dir, 'adjudication'), { recursive: true, force: true });
    const rolled = ok(await verifyUnit(dir));
    expect(rolled.stage).toBe('sealed');
    const r = failed(await verifyUnit(dir, { expectedRoot: closeRoot }));
    expect(r.first).toMatchObject({
      path: 'closeout.json',
      kind: 'root-mismatch',
      detail: expect.stringContaining(`root mismatch: expected ${closeRoot}; the unit's seal root is`),
    });
    expect(r.first.detail).toContain('the closeout was removed: the unit was rolled back');
    const cli = await imep(['campaign', 'verify', dir, '--expected-root', closeRoot], root);
    expect(cli.code).toBe(3);
    expect(cli.stderr).toContain('root mismatch');
    expect(cli.stderr).not.toContain('restore the unit from an intact copy');
    const plain = await imep(['campaign', 'verify', dir], root);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('verified to stage: sealed (not adjudicated)');
    // a reviewer told only the stage the unit reached: --expected-stage refuses the rollback
    const staged = await imep(['campaign', 'verify', dir, '--expected-stage', 'closed'], root);
    expect(staged.code).toBe(3);
    expect(staged.stderr).toContain(
      `${join(dir, 'closeout.json')}: the unit shows stage 'sealed', not 'closed': closeout.json and its adjudication records are not in it`,
    );
    expect((await imep(['campaign', 'verify', closed, '--expected-stage', 'closed'], root)).code).toBe(0);
    // this machine has now seen the unit closed: the rolled-back copy is refused as a rollback (exit 7, issue #32)
    expect((await imep(['campaign', 'verify', dir, '--expected-stage', 'sealed'], root)).code).toBe(7);
    expect((await imep(['campaign', 'verify', dir, '--expected-stage', 'done'], root)).code).toBe(2);
  });

  it('a closeout.json moved to another name is reported as moved (renamed), not as a stray', async () => {
    const dir = await copyOf(closed);
    await chmod(dir, 0o755);
    await rename(join(dir, 'closeout.json'), join(dir, 'closeout.json.bak'));
    const r = failed(await verifyUnit(dir));
    expect(r.first).toMatchObject({ path: 'closeout.json', kind: 'renamed', renamedTo: 'closeout.json.bak' });
    expect(r.issues.filter((i) => i.kind === 'stray')).toEqual([]);
  });
});

describe('a changed seal.json in a unit with a signed post-seal amendment', () => {
  it('a flipped byte: verify names seal.json, not amendments.jsonl', async () => {
    const dir = await copyOf(amended);
    const seal = await readJson(dir, 'seal.json');
    await writeJson(dir, 'seal.json', { ...seal, unitId: `${String(seal['unitId'])}x` }, { rehash: false });
    const r = failed(await verifyUnit(dir));
    expect(r.first.path).toBe('seal.json');
    expect(r.issues.map((i) => i.path)).not.toContain('amendments.jsonl');
  });

  it('seal.json re-signed consistently by a key the verifier does not hold: verify names seal.json (changed after the amendment was chained to it)', async () => {
    const dir = await copyOf(amended);
    await rewrite(
      dir,
      'seal.json',
      (s) => {
        s['unitId'] = 'forged';
      },
      { signer: 'runner-session', keysDir: join(root, 'forger-keys') },
    );
    const r = failed(await verifyUnit(dir));
    expect(r.first).toMatchObject({
      path: 'seal.json',
      kind: 'signature',
      detail: expect.stringContaining(
        'chain-broken: changed after post-seal line 1 (A1 by pi@lab, line 1 of the log) was chained to it',
      ),
    });
  });
});

describe('campaign seal on a sealed unit', () => {
  it('is a state refusal (exit 2, one line naming the next step), not tampering (3)', async () => {
    const r = await imep(['campaign', 'seal', sealed], root);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('a sealed unit cannot be appended to');
  });
});
