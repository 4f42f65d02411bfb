import { sign, type KeyObject } from 'node:crypto';
import { fingerprintOf, fingerprintText } from './signature-block.js';
import { rawEd25519PublicKey } from './minisign.js';

/**
 * DSSE envelopes (https://github.com/secure-systems-lab/dsse, v1.0), signed with an operator's Ed25519 key, as
 * in-toto attestations use them; and the public key in securesystemslib's JSON form, so that PyPI's
 * `securesystemslib.dsse.Envelope.verify` checks them without IMEP code.
 *
 *   PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP body     (lengths in ASCII decimal, of bytes)
 *   envelope        = { payload: base64(body), payloadType: type, signatures: [{ keyid, sig: base64(Ed25519(PAE)) }] }
 *
 * keyid: the key's IMEP fingerprint as printed everywhere, `ed25519:<SHA-256 hex of the SPKI DER>`.
 */

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

export interface DsseEnvelope {
  readonly payload: string;
  readonly payloadType: string;
  readonly signatures: readonly { readonly keyid: string; readonly sig: string }[];
}

/** DSSE's pre-authentication encoding. */
export function dssePae(payloadType: string, body: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, 'ascii'),
    type,
    Buffer.from(` ${body.length} `, 'ascii'),
    body,
  ]);
}

/** The DSSE keyid of a public key (its IMEP fingerprint text). */
export function dsseKeyId(publicKey: KeyObject): string {
  return fingerprintText(fingerprintOf(publicKey));
}

/** A DSSE envelope over `body`, signed once. */
export function dsseSign(
  privateKey: KeyObject,
  publicKey: KeyObject,
  payloadType: string,
  body: Uint8Array,
): DsseEnvelope {
  const sig = sign(null, dssePae(payloadType, body), privateKey);
  return {
    payload: Buffer.from(body).toString('base64'),
    payloadType,
    signatures: [{ keyid: dsseKeyId(publicKey), sig: sig.toString('base64') }],
  };
}

/** The public key as securesystemslib's key dict (SSlibKey.from_dict(d.keyid, d)), with its keyid. */
export function sslibPublicKey(publicKey: KeyObject): {
  keyid: string;
  keytype: 'ed25519';
  scheme: 'ed25519';
  keyval: { public: string };
} {
  return {
    keyid: dsseKeyId(publicKey),
    keytype: 'ed25519',
    scheme: 'ed25519',
    keyval: { public: rawEd25519PublicKey(publicKey).toString('hex') },
  };
}
