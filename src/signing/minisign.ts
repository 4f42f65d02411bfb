import { createHash, sign, type KeyObject } from 'node:crypto';
import { ImepError } from '../core/index.js';
import { fingerprintOf } from './signature-block.js';

/**
 * minisign's formats (https://jedisct1.github.io/minisign/), made with an operator's Ed25519 key so that a reviewer
 * checks a unit's manifest with Debian's stock `minisign -V` and no IMEP code.
 *
 *   public key   `untrusted comment: …` line, then base64( "Ed" ‖ key id (8 bytes) ‖ Ed25519 public key (32) )
 *   signature    `untrusted comment: …` line,
 *                base64( "ED" ‖ key id (8) ‖ Ed25519( BLAKE2b-512(file) ) )           (prehashed, minisign ≥ 0.8)
 *                `trusted comment: …` line,
 *                base64( Ed25519( signature (64) ‖ trusted comment bytes ) )         (the global signature)
 *
 * Key id: the first 8 bytes of the key's IMEP fingerprint (SHA-256 of its SPKI DER), stored as they are in both the
 * key and the signature. minisign reads the 8 bytes as a little-endian 64-bit number and prints it in hex, so the
 * id it shows is those bytes reversed (`minisignKeyIdText`).
 */

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The raw 32-byte Ed25519 public key of a KeyObject. */
export function rawEd25519PublicKey(publicKey: KeyObject): Buffer {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  if (
    publicKey.asymmetricKeyType !== 'ed25519' ||
    der.length !== 44 ||
    !der.subarray(0, 12).equals(ED25519_SPKI_PREFIX)
  )
    throw new ImepError('E_INTERNAL', `not an Ed25519 public key (${String(publicKey.asymmetricKeyType)})`);
  return der.subarray(12);
}

/** The 8-byte minisign key id of a public key (the first 8 bytes of its IMEP fingerprint). */
export function minisignKeyId(publicKey: KeyObject): Buffer {
  return Buffer.from(fingerprintOf(publicKey).slice(0, 16), 'hex');
}

/** The key id as minisign prints it: the 8 bytes read as a little-endian number, in upper-case hex. */
export function minisignKeyIdText(publicKey: KeyObject): string {
  return Buffer.from(minisignKeyId(publicKey)).reverse().toString('hex').toUpperCase();
}

/** The public key as a minisign `.pub` file (two lines). */
export function minisignPublicKey(publicKey: KeyObject, operator: string): string {
  const body = Buffer.concat([Buffer.from('Ed', 'ascii'), minisignKeyId(publicKey), rawEd25519PublicKey(publicKey)]);
  return `untrusted comment: minisign public key ${minisignKeyIdText(publicKey)} (IMEP operator ${oneLine(operator)})\n${body.toString('base64')}\n`;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}

/**
 * A minisign signature file over `bytes` (prehashed: BLAKE2b-512), with `trustedComment` bound by the global
 * signature. The comments must be one line each.
 */
export function minisignSign(
  privateKey: KeyObject,
  publicKey: KeyObject,
  bytes: Uint8Array,
  comments: { readonly untrusted: string; readonly trusted: string },
): string {
  const digest = createHash('blake2b512').update(bytes).digest();
  const signature = sign(null, digest, privateKey);
  const trusted = oneLine(comments.trusted);
  const global = sign(null, Buffer.concat([signature, Buffer.from(trusted, 'utf8')]), privateKey);
  const sigLine = Buffer.concat([Buffer.from('ED', 'ascii'), minisignKeyId(publicKey), signature]).toString('base64');
  return `untrusted comment: ${oneLine(comments.untrusted)}\n${sigLine}\ntrusted comment: ${trusted}\n${global.toString('base64')}\n`;
}
