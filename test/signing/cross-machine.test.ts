/**
 * Evidence that travels (issue 22): a unit sealed under one key store (the producer's machine) and verified under
 * another (a reviewer's), through the built CLI. Three outcomes, three exit codes: intact but signed by keys the
 * reviewer does not trust (5, naming each fingerprint and the command that trusts it — never 3 or "restore the
 * unit"); trusted after `imep keys trust` (0); one flipped byte (3, naming the file). And the downgrade of issue 24:
 * a unit without signatures (what stripping and rebuilding a signed one gives) is refused by a reviewer's default.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorKey } from '../../src/signing/key-store.js';
import { SIGNING_ENV } from '../../src/signing/sign-record.js';
import { imep } from '../campaign/cli-support.js';
import { buildUnit, copyUnit, removeTree, REVIEWER, RUNNER, tempDir } from '../evidence/helpers.js';
import { isolateKeys } from './helpers.js';

let root: string;
let producerKeys: { dir: string; restore: () => void };
let unit: string;
let reviewer: string;

beforeAll(async () => {
  producerKeys = await isolateKeys();
  root = await tempDir('imep-travel-');
  unit = join(root, 'unit');
  await buildUnit(unit, 'closed');
  reviewer = join(root, 'reviewer-home');
  await mkdir(reviewer);
});
afterAll(async () => {
  producerKeys.restore();
  await removeTree(root);
  await removeTree(join(producerKeys.dir, '..'));
});

/** The reviewer's machine: another HOME, another key store. */
const onReviewer = (args: string[], keys = join(reviewer, 'keys')) =>
  imep(args, root, undefined, { HOME: reviewer, IMEP_KEYS_DIR: keys });

describe('a unit verified on another machine', () => {
  it('intact but untrusted (5), trusted after `imep keys trust` (0), a flipped byte (3)', async () => {
    const runnerFp = (await operatorKey(RUNNER.id)).fingerprint;
    const reviewerFp = (await operatorKey(REVIEWER.id)).fingerprint;

    const first = await onReviewer(['campaign', 'verify', unit]);
    expect(first.code, first.stderr).toBe(5);
    expect(first.stdout).toMatch(
      /files intact, signers NOT trusted here — \d+ files checked; verified to stage: closed out; closeout root [0-9a-f]{64}/,
    );
    const line = first.stderr.trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('intact, but signed by keys this verifier does not trust');
    expect(line).toContain(`${RUNNER.id} ed25519:${runnerFp} (precommit.json, seal.json)`);
    expect(line).toContain(
      `${REVIEWER.id} ed25519:${reviewerFp} (adjudication/adjudication-001.json, adjudication/cross-check-001.json, closeout.json)`,
    );
    expect(line).not.toContain('restore the unit');
    // the exact commands: run as printed, they trust the two keys the unit carries
    const commands = [...line.matchAll(/imep (keys trust \S+ --fingerprint (\S+) --name (\S+))/g)];
    expect(commands.map((m) => [m[2], m[3]])).toEqual([
      [`ed25519:${runnerFp}`, RUNNER.id],
      [`ed25519:${reviewerFp}`, REVIEWER.id],
    ]);
    for (const m of commands) {
      const t = await onReviewer(m[1]!.split(' '));
      expect(t.code, t.stderr).toBe(0);
      expect(t.stdout).toMatch(/^trusted \S+ ed25519:[0-9a-f]{64} \(/);
    }
    const listed = await onReviewer(['keys', 'list']);
    expect(listed.stdout).toContain(`trusted  ${RUNNER.id}  ed25519:${runnerFp}`);
    expect(listed.stdout).toContain(`trusted  ${REVIEWER.id}  ed25519:${reviewerFp}`);

    const ok = await onReviewer(['campaign', 'verify', unit]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('intact and signed by trusted keys');

    // revoking one key makes the unit untrusted again, naming only that key
    const revoked = await onReviewer(['keys', 'revoke', REVIEWER.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const again = await onReviewer(['campaign', 'verify', unit]);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain(`ed25519:${reviewerFp}`);
    expect(again.stderr).not.toContain(`ed25519:${runnerFp}`);

    // one flipped byte: tampering, exit 3, naming the file (whatever the trust)
    const rows = join(unit, 'rows', 'rows.jsonl');
    const bytes = await readFile(rows);
    const flipped = Buffer.from(bytes);
    flipped[10] = flipped[10]! ^ 0x01;
    await chmod(join(unit, 'rows'), 0o755);
    await chmod(rows, 0o644);
    await writeFile(rows, flipped);
    try {
      const bad = await onReviewer(['campaign', 'verify', unit]);
      expect(bad.code).toBe(3);
      expect(bad.stderr).toContain('rows/rows.jsonl: modified');
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      await writeFile(rows, bytes);
    }
  });

  it('a key handed over as a file: `keys export` on the producer, `--trusted-keys DIR` or `keys trust FILE` on the reviewer', async () => {
    const ci = join(root, 'ci-keys');
    await mkdir(ci);
    for (const op of [RUNNER.id, REVIEWER.id]) {
      const e = await imep(['keys', 'export', op], root, undefined, { IMEP_KEYS_DIR: producerKeys.dir });
      expect(e.code, e.stderr).toBe(0);
      expect(e.stdout).toMatch(
        /^IMEP public key: .*\noperator: .*\nfingerprint: ed25519:[0-9a-f]{64}\n-----BEGIN PUBLIC KEY-----/,
      );
      expect(e.stderr.trim()).toBe(`${op} ed25519:${(await operatorKey(op)).fingerprint}`);
      await writeFile(join(ci, `${op}.pub`), e.stdout);
    }
    const ciOk = await onReviewer(
      ['campaign', 'verify', unit, '--trusted-keys', ci, '--require-signatures'],
      join(root, 'empty-store'),
    );
    expect(ciOk.code, ciOk.stderr).toBe(0);
    const store = join(root, 'file-store');
    const t = await onReviewer(
      ['keys', 'trust', join(ci, `${RUNNER.id}.pub`), '--fingerprint', 'ed25519:' + '0'.repeat(64)],
      store,
    );
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('nothing was trusted');
    expect((await onReviewer(['keys', 'trust', join(ci, `${RUNNER.id}.pub`)], store)).code).toBe(0);
    const partly = await onReviewer(['campaign', 'verify', unit], store);
    expect(partly.code).toBe(5);
    expect(partly.stderr).not.toContain(RUNNER.id + ' ed25519');
    const noFp = await onReviewer(['keys', 'trust', unit], store);
    expect(noFp.code).toBe(2);
    expect(noFp.stderr).toContain('--fingerprint');
  });

  it('an unsigned unit (a signed one stripped and rebuilt looks the same) is refused by default (5); --allow-unsigned or its published root vouch for it', async () => {
    const before = process.env[SIGNING_ENV];
    process.env[SIGNING_ENV] = 'off';
    const rebuilt = join(root, 'rebuilt');
    try {
      await buildUnit(rebuilt, 'closed');
    } finally {
      if (before === undefined) delete process.env[SIGNING_ENV];
      else process.env[SIGNING_ENV] = before;
    }
    const r = await onReviewer(['campaign', 'verify', rebuilt]);
    expect(r.code).toBe(5);
    expect(r.stdout).toContain('files intact, UNSIGNED');
    expect(r.stderr).toContain('it carries no signatures');
    expect(r.stderr).not.toContain('restore the unit');
    expect((await onReviewer(['campaign', 'verify', rebuilt, '--allow-unsigned'])).code).toBe(0);
    const root0 = /closeout root ([0-9a-f]{64})/.exec(r.stdout)?.[1] as string;
    expect((await onReviewer(['campaign', 'verify', rebuilt, '--expected-root', root0])).code).toBe(0);
    // the signed original's published root does not match the rebuild
    const signedRoot = /closeout root ([0-9a-f]{64})/.exec(
      (await onReviewer(['campaign', 'verify', unit])).stdout,
    )?.[1] as string;
    const mismatch = await onReviewer([
      'campaign',
      'verify',
      rebuilt,
      '--expected-root',
      signedRoot,
      '--allow-unsigned',
    ]);
    expect(mismatch.code).toBe(3);
    expect(mismatch.stderr).toContain('root mismatch');
    // a copy keeps its verdict: nothing about the checks depends on where the unit lies
    const copy = join(root, 'copy');
    await copyUnit(unit, copy);
    expect((await onReviewer(['campaign', 'verify', copy, '--trusted-keys', join(root, 'ci-keys')])).code).toBe(0);
  });
});
