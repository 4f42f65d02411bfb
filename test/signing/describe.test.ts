import { describe, expect, it } from 'vitest';
import { describeSignatures } from '../../src/signing/describe.js';
import type { SignatureReport } from '../../src/signing/chain.js';

const fp = (c: string): string => c.repeat(64);

describe('describeSignatures', () => {
  it('lists the records of each signer with its whole fingerprint (ed25519:<64 hex>) and counts findings by severity', () => {
    const report: SignatureReport = {
      status: 'partial',
      signed: [
        { path: 'precommit.json', signer: 'alice', fingerprint: fp('a'), prev: null },
        { path: 'seal.json', signer: 'alice', fingerprint: fp('a'), prev: { file: 'precommit.json', sha256: fp('0') } },
        { path: 'closeout.json', signer: 'bob', fingerprint: fp('b'), prev: { file: 'seal.json', sha256: fp('1') } },
      ],
      unsigned: ['adjudication-001.json'],
      findings: [
        {
          path: 'adjudication-001.json',
          finding: 'unsigned',
          severity: 'error',
          detail: 'no signature after a signed record',
          related: [],
        },
        {
          path: 'seal.json',
          finding: 'unknown-key',
          severity: 'warning',
          detail: 'not in the trust store',
          related: [],
        },
      ],
    };
    expect(describeSignatures(report)).toBe(
      `signatures: partial — precommit.json, seal.json by alice (ed25519:${fp('a')}); closeout.json by bob (ed25519:${fp('b')}); unsigned: adjudication-001.json; ` +
        '1 error, 1 warning: adjudication-001.json unsigned [error] (no signature after a signed record); seal.json unknown-key [warning] (not in the trust store)',
    );
  });

  it('an unsigned unit with no findings', () => {
    expect(
      describeSignatures({ status: 'unsigned', signed: [], unsigned: ['precommit.json', 'seal.json'], findings: [] }),
    ).toBe('signatures: unsigned — unsigned: precommit.json, seal.json; 0 errors, 0 warnings');
  });

  it('a record signed by a key not trusted here is counted and listed as untrusted, not as an error of the unit', () => {
    const report: SignatureReport = {
      status: 'signed',
      signed: [
        { path: 'precommit.json', signer: 'alice', fingerprint: fp('a'), prev: null },
        { path: 'seal.json', signer: 'alice', fingerprint: fp('a'), prev: { file: 'precommit.json', sha256: fp('0') } },
      ],
      unsigned: [],
      findings: [
        {
          path: 'precommit.json',
          finding: 'unknown-key',
          severity: 'error',
          detail: 'not in the key store',
          related: [],
        },
        { path: 'seal.json', finding: 'unknown-key', severity: 'error', detail: 'not in the key store', related: [] },
        { path: 'seal.json', finding: 'bad-signature', severity: 'error', detail: 'does not verify', related: [] },
      ],
    };
    expect(describeSignatures(report)).toBe(
      `signatures: signed — precommit.json, seal.json by alice (ed25519:${fp('a')}); ` +
        '1 error, 2 signed by keys not trusted here, 0 warnings: seal.json bad-signature [error] (does not verify); ' +
        'precommit.json, seal.json unknown-key [untrusted] (not in the key store)',
    );
  });
});
