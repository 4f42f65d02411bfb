import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSignatureChain } from '../../src/signing/chain.js';
import { operatorKey, trustedKeys } from '../../src/signing/key-store.js';
import { checkRecordSignature, signingEnabled, signRecord } from '../../src/signing/sign-record.js';
import { removeTree, tempDir } from '../evidence/helpers.js';

let root: string;
let keys: string;
beforeAll(async () => {
  root = await tempDir('imep-sign-');
  keys = join(root, 'keys');
});
afterAll(async () => removeTree(root));

const body = {
  kind: 'imep.test',
  version: 1,
  operator: { id: 'alice', source: 'explicit' },
  values: [1, 2.5, 'x'],
  nested: { b: true, a: null },
};
const bytes = (r: object): Buffer => Buffer.from(JSON.stringify(r));

describe('signing a record', () => {
  it('round-trips: the signature embeds the key and fingerprint and verifies', async () => {
    const signed = await signRecord(body, { signer: 'alice', prev: null, keysDir: keys, force: true });
    const key = await operatorKey('alice', { dir: keys });
    expect(signed.signature).toMatchObject({
      scheme: 'imep-ed25519-v1',
      keyOwner: 'alice',
      publicKey: key.publicKeyB64,
      fingerprint: key.fingerprint,
      prev: null,
    });
    expect(Buffer.from(signed.signature!.value, 'base64')).toHaveLength(64);
    expect(checkRecordSignature(signed)).toMatchObject({ status: 'valid' });
    // key order and a self-hash field do not matter: canonical JSON, sha256 excluded
    const reordered = Object.fromEntries(Object.entries({ ...signed, sha256: 'f'.repeat(64) }).reverse());
    expect(checkRecordSignature(reordered)).toMatchObject({ status: 'valid' });
    expect(checkRecordSignature(body)).toEqual({ status: 'unsigned' });
  });

  it('fails when a byte of the signature or the record changes', async () => {
    const signed = await signRecord(body, {
      signer: 'alice',
      prev: { file: 'seal.json', sha256: 'a'.repeat(64) },
      keysDir: keys,
      force: true,
    });
    const sig = Buffer.from(signed.signature!.value, 'base64');
    for (const i of [0, 31, 63]) {
      const bad = Buffer.from(sig);
      bad[i] = bad[i]! ^ 0x01;
      expect(
        checkRecordSignature({ ...signed, signature: { ...signed.signature!, value: bad.toString('base64') } }),
      ).toMatchObject({ status: 'invalid' });
    }
    expect(checkRecordSignature({ ...signed, values: [1, 2.5, 'y'] })).toMatchObject({
      status: 'invalid',
      reason: expect.stringContaining('does not verify'),
    });
    expect(checkRecordSignature({ ...signed, extra: 0 })).toMatchObject({ status: 'invalid' });
    // the chain link is signed too
    expect(
      checkRecordSignature({
        ...signed,
        signature: { ...signed.signature!, prev: { file: 'seal.json', sha256: 'b'.repeat(64) } },
      }),
    ).toMatchObject({ status: 'invalid' });
  });

  it('fails with a wrong key: another key swapped in, or a fingerprint that is not the key’s', async () => {
    const signed = await signRecord(body, { signer: 'alice', prev: null, keysDir: keys, force: true });
    const bob = await operatorKey('bob', { dir: keys });
    const swapped = {
      ...signed,
      signature: { ...signed.signature!, publicKey: bob.publicKeyB64, fingerprint: bob.fingerprint },
    };
    expect(checkRecordSignature(swapped)).toMatchObject({
      status: 'invalid',
      reason: expect.stringContaining('does not verify'),
    });
    const mismatched = { ...signed, signature: { ...signed.signature!, fingerprint: bob.fingerprint } };
    expect(checkRecordSignature(mismatched)).toMatchObject({
      status: 'invalid',
      reason: expect.stringContaining('fingerprint'),
    });
    expect(checkRecordSignature({ ...signed, signature: { ...signed.signature!, publicKey: 'AAAA' } })).toMatchObject({
      status: 'invalid',
    });
    expect(checkRecordSignature({ ...signed, signature: 'nope' })).toMatchObject({
      status: 'invalid',
      reason: expect.stringContaining('malformed'),
    });
  });

  it('is off with IMEP_SIGNING=off', () => {
    expect(signingEnabled({})).toBe(true);
    expect(signingEnabled({ IMEP_SIGNING: 'off' })).toBe(false);
  });
});

describe('the chain (pure)', () => {
  it('checks trust, links and order', async () => {
    const a = await signRecord(
      { kind: 'imep.precommit', operator: { id: 'alice' } },
      { signer: 'alice', prev: null, keysDir: keys, force: true },
    );
    const aBytes = bytes(a);
    const { createHash } = await import('node:crypto');
    const h = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
    const b = await signRecord(
      { kind: 'imep.seal', operator: { id: 'alice' } },
      { signer: 'alice', prev: { file: 'precommit.json', sha256: h(aBytes) }, keysDir: keys, force: true },
    );
    const trusted = await trustedKeys({ dir: keys });
    const ok = checkSignatureChain({
      records: [
        { path: 'precommit.json', bytes: aBytes },
        { path: 'seal.json', bytes: bytes(b) },
      ],
      ranBy: [],
      trusted,
    });
    expect(ok).toMatchObject({ status: 'signed', findings: [] });
    expect(ok.signed.map((s) => s.signer)).toEqual(['alice', 'alice']);
    // untrusted
    const none = checkSignatureChain({ records: [{ path: 'precommit.json', bytes: aBytes }], ranBy: [], trusted: [] });
    expect(none.findings).toMatchObject([{ path: 'precommit.json', finding: 'unknown-key', severity: 'error' }]);
    // the seal first: its link names precommit.json, but nothing is before it
    const swapped = checkSignatureChain({
      records: [
        { path: 'seal.json', bytes: bytes(b) },
        { path: 'precommit.json', bytes: aBytes },
      ],
      ranBy: [],
      trusted,
    });
    expect(swapped.findings.map((f) => `${f.path}:${f.finding}`)).toEqual([
      'seal.json:chain-broken',
      'precommit.json:chain-broken',
    ]);
    // an unsigned record after a signed one
    const stripped = checkSignatureChain({
      records: [
        { path: 'precommit.json', bytes: aBytes },
        { path: 'seal.json', bytes: bytes({ kind: 'imep.seal' }) },
      ],
      ranBy: [],
      trusted,
    });
    expect(stripped).toMatchObject({ status: 'partial', findings: [{ path: 'seal.json', finding: 'unsigned' }] });
  });
});
