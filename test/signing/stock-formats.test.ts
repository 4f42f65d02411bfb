/**
 * The byte layouts stock tools expect (no tools needed): minisign's public key and signature files (src/signing/
 * minisign.ts), DSSE's pre-authentication encoding and envelope (src/signing/dsse.ts), the securesystemslib key JSON,
 * and `imep keys export --format` refusing an unknown format.
 */
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  dssePae,
  dsseSign,
  fingerprintOf,
  formatPublicKey,
  minisignKeyIdText,
  minisignPublicKey,
  minisignSign,
  parseKeyFormat,
  sslibPublicKey,
} from '../../src/signing/index.js';
import { summarizeVerdicts } from '../../src/evidence/attestation/index.js';
import { blackoutCriterion } from '../adjudication/fixtures.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const raw = publicKey.export({ type: 'spki', format: 'der' }).subarray(12);
const keyId = Buffer.from(fingerprintOf(publicKey).slice(0, 16), 'hex');

describe('minisign format', () => {
  it('the public key is "Ed" ‖ key id (8) ‖ raw key (32), its comment naming the id as minisign prints it', () => {
    const [comment, b64] = minisignPublicKey(publicKey, 'alice@lab').split('\n');
    const body = Buffer.from(b64!, 'base64');
    expect(body.length).toBe(42);
    expect(body.subarray(0, 2).toString('ascii')).toBe('Ed');
    expect(body.subarray(2, 10).equals(keyId)).toBe(true);
    expect(body.subarray(10).equals(raw)).toBe(true);
    // minisign reads the id as a little-endian u64 and prints it in hex: the bytes reversed
    expect(minisignKeyIdText(publicKey)).toBe(Buffer.from(keyId).reverse().toString('hex').toUpperCase());
    expect(comment).toBe(
      `untrusted comment: minisign public key ${minisignKeyIdText(publicKey)} (IMEP operator alice@lab)`,
    );
  });

  it('the signature is "ED" ‖ the same key id ‖ Ed25519(BLAKE2b-512(file)); the global signature covers sig ‖ trusted comment', () => {
    const file = Buffer.from('{"kind":"imep.seal"}\n');
    const text = minisignSign(privateKey, publicKey, file, { untrusted: 'u\nline', trusted: 'imep unit=x' });
    const lines = text.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe('untrusted comment: u line');
    expect(lines[2]).toBe('trusted comment: imep unit=x');
    const sig = Buffer.from(lines[1]!, 'base64');
    expect(sig.length).toBe(74);
    expect(sig.subarray(0, 2).toString('ascii')).toBe('ED');
    expect(sig.subarray(2, 10).equals(keyId)).toBe(true);
    const digest = createHash('blake2b512').update(file).digest();
    expect(verify(null, digest, publicKey, sig.subarray(10))).toBe(true);
    const global = Buffer.from(lines[3]!, 'base64');
    expect(verify(null, Buffer.concat([sig.subarray(10), Buffer.from('imep unit=x')]), publicKey, global)).toBe(true);
    expect(verify(null, Buffer.concat([sig.subarray(10), Buffer.from('imep unit=y')]), publicKey, global)).toBe(false);
  });
});

describe('DSSE and the securesystemslib key', () => {
  it('PAE matches the DSSE spec example', () => {
    expect(dssePae('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).toBe(
      'DSSEv1 29 http://example.com/HelloWorld 11 hello world',
    );
    // lengths count bytes, not characters
    expect(dssePae('t', Buffer.from('é')).toString('latin1')).toBe('DSSEv1 1 t 2 \u00c3\u00a9');
  });

  it('the envelope signs PAE(type, payload) under keyid = the IMEP fingerprint; the sslib key holds the raw key in hex', () => {
    const body = Buffer.from('{"_type":"https://in-toto.io/Statement/v1"}');
    const env = dsseSign(privateKey, publicKey, 'application/vnd.in-toto+json', body);
    expect(Buffer.from(env.payload, 'base64').equals(body)).toBe(true);
    expect(env.signatures).toHaveLength(1);
    expect(env.signatures[0]!.keyid).toBe(`ed25519:${fingerprintOf(publicKey)}`);
    const pae = dssePae('application/vnd.in-toto+json', body);
    expect(verify(null, pae, publicKey, Buffer.from(env.signatures[0]!.sig, 'base64'))).toBe(true);
    expect(sslibPublicKey(publicKey)).toEqual({
      keyid: `ed25519:${fingerprintOf(publicKey)}`,
      keytype: 'ed25519',
      scheme: 'ed25519',
      keyval: { public: raw.toString('hex') },
    });
  });

  it('formatPublicKey: pem round-trips; an unknown format is a usage error naming --format', () => {
    const pem = formatPublicKey(publicKey, 'alice', 'pem');
    expect(fingerprintOf(createPublicKey(pem))).toBe(fingerprintOf(publicKey));
    expect(JSON.parse(formatPublicKey(publicKey, 'alice', 'sslib'))).toEqual(sslibPublicKey(publicKey));
    expect(parseKeyFormat('MiniSign')).toBe('minisign');
    expect(() => parseKeyFormat('gpg')).toThrow(/unknown key format 'gpg'/);
  });
});

describe('the statement predicate', () => {
  it('a verdict carries its word, its claim in words and its bound; a withheld one carries neither', () => {
    const bound = {
      interval: 'exact-cp-difference/a0.05',
      label: 'CP',
      estimate: 0.655,
      lower: 0.606,
      upper: 0.694,
      threshold: 0.1,
      companions: [],
      p: null,
      routedOn: 'bound' as const,
    };
    const base = { estimand: 'D_N', question: null, role: 'primary' as const, registeredRuleMet: false, reason: 'r' };
    const q1 = blackoutCriterion('Q1');
    const verdicts = [
      { ...base, criterion: 'Q1', rule: 'upper-bound-below', verdict: 'not detected', bound },
      { ...base, criterion: 'Q2', rule: 'lower-bound-above', verdict: 'excluded', because: ['competence'] },
      { criterion: 'brief', verdict: 'holds' },
      'not a verdict',
    ];
    const out = summarizeVerdicts(verdicts, [q1]);
    expect(out).toEqual([
      {
        criterion: 'Q1',
        estimand: 'D_N',
        verdict: 'not detected',
        claim: 'D_N lies below +10.00 pp: its upper bound lies below that',
        bound: { interval: 'exact-cp-difference/a0.05', estimate: 0.655, lower: 0.606, upper: 0.694, threshold: 0.1 },
      },
      { criterion: 'Q2', estimand: 'D_N', verdict: 'excluded', claim: null, bound: null },
      { criterion: 'brief', estimand: null, verdict: 'holds', claim: null, bound: null },
    ]);
    // the claim is the frozen criterion's, in the terminal's and the report's words: none without the criterion
    expect(summarizeVerdicts(verdicts)[0]?.claim).toBeNull();
  });
});
