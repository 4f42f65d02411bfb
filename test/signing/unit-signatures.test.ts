/**
 * Signatures of evidence units, end to end through the store: every record of the chain signed by its
 * operator's key, and verify naming the record for a tampered signature, an unknown/removed key, a
 * broken or re-ordered chain, a removed signature, and the role rule (adjudication by the key of the
 * operator who ran the conditions).
 */
import { copyFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicate, explicitOperator, verifyUnit } from '../../src/evidence/index.js';
import { sha256Hex } from '../../src/core/hash.js';
import { operatorKey, removeKey, trustPublicKey, exportPublicKey, keyFileStem } from '../../src/signing/key-store.js';
import { SIGNING_ENV } from '../../src/signing/sign-record.js';
import { buildUnit, clock, expectImepError, removeTree, REVIEWER, RUNNER, tempDir } from '../evidence/helpers.js';
import { failed, isolateKeys, readJson, rewrite, unitCopies, writeJson } from './helpers.js';

let root: string;
let keys: { dir: string; restore: () => void };
let closed: string;
let sealed: string;

beforeAll(async () => {
  keys = await isolateKeys();
  root = await tempDir('imep-unit-sig-');
  closed = join(root, 'closed');
  sealed = join(root, 'sealed');
  await buildUnit(closed, 'closed', { rich: true });
  await buildUnit(sealed, 'sealed');
});
afterAll(async () => {
  keys.restore();
  await removeTree(root);
  await removeTree(join(keys.dir, '..'));
});

const copyOf = unitCopies(() => root);

describe('a signed unit', () => {
  it('signs precommit, seal, adjudication, cross-check and closeout by their operators, each naming the previous record', async () => {
    const r = await verifyUnit(closed);
    if (!r.ok) throw new Error(`closed unit does not verify: ${r.first.path} ${r.first.detail}`);
    expect(r.signatures?.status).toBe('signed');
    // the one finding: the reviewer's key was created by this process (the test run) when it adjudicated
    expect(r.signatures?.findings).toEqual([
      {
        path: 'adjudication/adjudication-001.json',
        finding: 'identity',
        severity: 'warning',
        detail: expect.stringContaining(
          `adjudicated as ${REVIEWER.id}: its signing key was created by the same command`,
        ),
        related: [],
      },
    ]);
    expect(r.signatures?.signed.map((s) => [s.path, s.signer])).toEqual([
      ['precommit.json', RUNNER.id],
      ['seal.json', RUNNER.id],
      ['adjudication/adjudication-001.json', REVIEWER.id],
      ['adjudication/cross-check-001.json', REVIEWER.id],
      ['closeout.json', REVIEWER.id],
    ]);
    const hashOf = async (rel: string): Promise<string> => sha256Hex(await readFile(join(closed, rel)));
    expect(r.signatures?.signed.map((s) => s.prev)).toEqual([
      null,
      { file: 'precommit.json', sha256: await hashOf('precommit.json') },
      { file: 'seal.json', sha256: await hashOf('seal.json') },
      { file: 'adjudication/adjudication-001.json', sha256: await hashOf('adjudication/adjudication-001.json') },
      { file: 'adjudication/cross-check-001.json', sha256: await hashOf('adjudication/cross-check-001.json') },
    ]);
    const pre = await readJson(closed, 'precommit.json');
    const key = await operatorKey(RUNNER.id);
    expect(pre['signature']).toMatchObject({
      keyOwner: RUNNER.id,
      publicKey: key.publicKeyB64,
      fingerprint: key.fingerprint,
    });
  });

  it('a flipped byte in a signature fails, naming the record — with or without a recomputed self-hash', async () => {
    const cases: [string, string][] = [
      [sealed, 'seal.json'],
      [closed, 'seal.json'],
      [closed, 'closeout.json'],
      [closed, 'adjudication/adjudication-001.json'],
    ];
    for (const [template, rel] of cases) {
      for (const rehash of [true, false]) {
        const dir = await copyOf(template);
        const rec = await readJson(dir, rel);
        const sig = rec['signature'] as { value: string };
        const b = Buffer.from(sig.value, 'base64');
        b[5] = b[5]! ^ 0x01;
        await writeJson(dir, rel, { ...rec, signature: { ...sig, value: b.toString('base64') } }, { rehash });
        const r = failed(await verifyUnit(dir));
        expect(r.first.path, `${rel} rehash=${rehash}`).toBe(rel);
        // with a consistent self-hash only the signature tells (a closed unit's manifest also names seal.json)
        if (rehash)
          expect(r.issues).toContainEqual(
            expect.objectContaining({ path: rel, kind: 'signature', detail: expect.stringContaining('bad-signature') }),
          );
        if (rehash && template === sealed) expect(r.issues.map((i) => i.kind)).toEqual(['signature']);
      }
    }
  });

  it('a changed record re-hashed but not re-signed fails, naming it (even where no manifest covers it)', async () => {
    const dir = await copyOf(closed);
    // closeout notes are bound by nothing but closeout.json's own hash — and now its signature
    await rewrite(dir, 'closeout.json', (r) => {
      r['notes'] = 'closed in test (edited)';
    });
    const r = failed(await verifyUnit(dir));
    expect(r.first).toMatchObject({
      path: 'closeout.json',
      kind: 'signature',
      detail: expect.stringContaining('does not verify'),
    });
    await expectImepError(
      import('../../src/evidence/verify/verify.js').then((m) => m.assertUnitIntact(dir)),
      'E_UNIT_TAMPERED',
    );
  });

  it('a record re-signed with another operator’s key fails as a wrong key', async () => {
    const dir = await copyOf(closed);
    await operatorKey('third-party');
    await rewrite(dir, 'closeout.json', () => undefined, { signer: 'third-party' });
    const r = failed(await verifyUnit(dir));
    expect(r.first).toMatchObject({
      path: 'closeout.json',
      kind: 'signature',
      detail: expect.stringContaining('wrong-key'),
    });
  });

  it('a record signed by an unknown key, or by a key since removed, is intact but untrusted — never tampered', async () => {
    const dir = await copyOf(closed);
    const elsewhere = join(root, 'elsewhere-keys');
    await rewrite(dir, 'closeout.json', () => undefined, { signer: REVIEWER.id, keysDir: elsewhere });
    const r = await verifyUnit(dir);
    if (!r.ok) throw new Error(`re-signed unit does not verify: ${r.first.path} ${r.first.detail}`);
    const elsewhereKey = await operatorKey(REVIEWER.id, { dir: elsewhere });
    expect(r.trust.status).toBe('untrusted');
    expect(r.trust.untrusted).toEqual([
      {
        keyOwner: REVIEWER.id,
        fingerprint: elsewhereKey.fingerprint,
        paths: ['closeout.json'],
        detail: expect.stringContaining(`the key store holds another key for ${REVIEWER.id}`),
      },
    ]);
    // the steps that build on a unit refuse it with the trust error, naming the command that trusts the key
    const e = await expectImepError(
      import('../../src/evidence/verify/verify.js').then((m) => m.assertUnitIntact(dir)),
      'E_UNTRUSTED',
    );
    expect(e.message).toContain(
      `keys trust ${dir} --fingerprint ed25519:${elsewhereKey.fingerprint} --name ${REVIEWER.id}`,
    );

    // another machine's key store: nothing is trusted until the operators' public keys are imported
    const fresh = join(root, 'fresh-keys');
    const r2 = await verifyUnit(closed, { keysDir: fresh });
    expect(r2.ok && r2.trust.status).toBe('untrusted');
    expect(r2.ok && r2.trust.untrusted.map((u) => [u.keyOwner, u.paths])).toEqual([
      [RUNNER.id, ['precommit.json', 'seal.json']],
      [REVIEWER.id, ['adjudication/adjudication-001.json', 'adjudication/cross-check-001.json', 'closeout.json']],
    ]);
    for (const op of [RUNNER.id, REVIEWER.id]) await trustPublicKey(op, await exportPublicKey(op), { dir: fresh });
    expect(await verifyUnit(closed, { keysDir: fresh })).toMatchObject({
      ok: true,
      trust: { status: 'trusted', untrusted: [] },
    });
    await removeKey(REVIEWER.id, { dir: fresh });
    const r3 = await verifyUnit(closed, { keysDir: fresh });
    expect(r3.ok && r3.trust.untrusted.flatMap((u) => u.paths)).toEqual([
      'adjudication/adjudication-001.json',
      'adjudication/cross-check-001.json',
      'closeout.json',
    ]);
  });

  it('detects a broken chain: a record re-signed out of order', async () => {
    // the adjudication re-signed to follow the precommit, skipping the seal
    const dir = await copyOf(closed);
    const pre = sha256Hex(await readFile(join(dir, 'precommit.json')));
    const adj = 'adjudication/adjudication-001.json';
    const closeBefore = await readJson(dir, 'closeout.json');
    await rewrite(dir, adj, () => undefined, { signer: REVIEWER.id, prev: { file: 'precommit.json', sha256: pre } });
    const r = failed(await verifyUnit(dir));
    const sigs = r.signatures!.findings.map((f) => `${f.path} ${f.finding}`);
    expect(sigs).toContain(`${adj} chain-broken`);
    expect(r.signatures!.findings.find((f) => f.path === adj)?.detail).toContain(
      'names precommit.json as the previous signed record; the chain has seal.json before it',
    );
    expect(closeBefore['signature']).toBeDefined();

    // the seal re-signed (a new sealedAt, consistent self-hash) after the adjudication was signed
    const dir2 = await copyOf(sealed);
    await adjudicate(dir2, {
      adjudicator: { name: 'adj', version: 1 },
      result: { verdict: 'holds' },
      operator: REVIEWER,
      now: clock,
    });
    await rewrite(
      dir2,
      'seal.json',
      (s) => {
        s['sealedAt'] = '2030-01-01T00:00:00.000Z';
      },
      { signer: RUNNER.id },
    );
    const r2 = failed(await verifyUnit(dir2));
    expect(r2.signatures!.findings).toContainEqual(
      expect.objectContaining({
        path: adj,
        finding: 'chain-broken',
        detail: expect.stringContaining('seal.json was changed or re-signed after this record was signed'),
      }),
    );
    expect(r2.issues.map((i) => `${i.path} ${i.kind}`)).toContain(`${adj} signature`);
  });

  it('refuses a signature removed from a record after a signed one', async () => {
    const dir = await copyOf(closed);
    await rewrite(dir, 'closeout.json', (r) => {
      delete r['signature'];
    });
    const r = failed(await verifyUnit(dir));
    expect(r.first).toMatchObject({
      path: 'closeout.json',
      kind: 'signature',
      detail: expect.stringContaining('unsigned'),
    });
  });
});

describe('the role rule', () => {
  it('an adjudication signed by the runner’s key with a recorded override verifies, with a warning naming the override', async () => {
    const dir = await copyOf(sealed);
    await adjudicate(dir, {
      adjudicator: { name: 'adj', version: 1 },
      result: { verdict: 'holds' },
      operator: RUNNER,
      overrideSameOperator: { reason: 'single-person lab; reviewed by video call' },
      now: clock,
    });
    const r = await verifyUnit(dir);
    if (!r.ok) throw new Error(`${r.first.path}: ${r.first.detail}`);
    expect(r.signatures!.findings.filter((f) => f.finding !== 'identity')).toEqual([
      expect.objectContaining({
        path: 'adjudication/adjudication-001.json',
        finding: 'same-operator',
        severity: 'warning',
        detail: expect.stringContaining(
          'override recorded by runner-session: "single-person lab; reviewed by video call"',
        ),
      }),
    ]);
  });

  it('an adjudication signed with the key of the operator who ran the conditions, without an override, is an error', async () => {
    const dir = await copyOf(sealed);
    // the reviewer's key files are the runner's key: the name differs, the fingerprint does not
    const reviewerStem = keyFileStem('copycat-session');
    const runner = await operatorKey(RUNNER.id);
    await copyFile(runner.keyFile, join(keys.dir, `${reviewerStem}.key`));
    await copyFile(runner.pubFile, join(keys.dir, `${reviewerStem}.pub`));
    await adjudicate(dir, {
      adjudicator: { name: 'adj', version: 1 },
      result: { verdict: 'holds' },
      operator: explicitOperator('copycat-session'),
      now: clock,
    });
    const r = failed(await verifyUnit(dir));
    expect(r.first).toMatchObject({
      path: 'adjudication/adjudication-001.json',
      kind: 'signature',
      detail: expect.stringContaining('same-operator'),
    });
    expect(r.signatures!.findings).toContainEqual(
      expect.objectContaining({
        finding: 'same-operator',
        severity: 'error',
        detail: expect.stringContaining('no same-operator override is recorded'),
      }),
    );
    await rm(join(keys.dir, `${reviewerStem}.key`));
    await rm(join(keys.dir, `${reviewerStem}.pub`));
  });

  it('flags an adjudication record re-signed by the runner (key owner among those who ran the conditions)', async () => {
    const dir = await copyOf(closed);
    await rewrite(
      dir,
      'adjudication/adjudication-001.json',
      (r) => {
        r['operator'] = { id: RUNNER.id, source: 'explicit' };
      },
      { signer: RUNNER.id },
    );
    const r = failed(await verifyUnit(dir));
    const adjFindings = r
      .signatures!.findings.filter((f) => f.path === 'adjudication/adjudication-001.json')
      .map((f) => `${f.finding}/${f.severity}`);
    expect(adjFindings).toContain('same-operator/error');
  });
});

describe('unsigned units', () => {
  it('with IMEP_SIGNING=off records are unsigned: verify passes (status unsigned) unless signatures are required', async () => {
    const before = process.env[SIGNING_ENV];
    process.env[SIGNING_ENV] = 'off';
    try {
      const dir = join(root, 'unsigned');
      await buildUnit(dir, 'closed');
      const r = await verifyUnit(dir);
      expect(r.ok).toBe(true);
      expect(r.signatures?.status).toBe('unsigned');
      expect((await readJson(dir, 'seal.json'))['signature']).toBeUndefined();
      const req = failed(await verifyUnit(dir, { requireSignatures: true }));
      expect(req.first).toMatchObject({
        path: 'adjudication/adjudication-001.json',
        kind: 'signature',
        detail: expect.stringContaining('signatures are required'),
      });
    } finally {
      if (before === undefined) delete process.env[SIGNING_ENV];
      else process.env[SIGNING_ENV] = before;
    }
  });
});
