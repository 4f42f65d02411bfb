import { createPublicKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { canonicalBytes, sha256Hex } from '../core/index.js';

/**
 * The signature block embedded in a signed evidence record (precommit.json, seal.json,
 * adjudication/adjudication-NNN.json, adjudication/cross-check-NNN.json, closeout.json, and each post-seal
 * line of amendments.jsonl — amendment-signatures.ts), under the record's `signature` key:
 *
 * ```
 * signature: {
 *   scheme:      'imep-ed25519-v1',
 *   keyOwner:    the operator whose key signed (its file is <keys dir>/<operator>.key),
 *   publicKey:   base64 of the Ed25519 public key (SPKI DER),
 *   fingerprint: SHA-256 (hex) of those SPKI DER bytes,
 *   prev:        { file, sha256 } of the previous record of the chain (unit-relative path, SHA-256 of
 *                its file bytes), or null for the first (the precommit),
 *   value:       base64 of the 64-byte Ed25519 signature
 * }
 * ```
 *
 * The signed bytes are the canonical JSON (src/core/canonical-json.ts) of the record WITHOUT its
 * `signature.value` and without its self-hash `sha256` (which is derived: it is taken over the record
 * including the whole signature block, so it is computed after signing). Everything else in the block
 * — the key, its owner, its fingerprint and the link to the previous record — is signed with the record.
 */

export const SIGNATURE_SCHEME = 'imep-ed25519-v1';

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase SHA-256 hex digest');
const Base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64');

export const PrevLinkSchema = z.object({ file: z.string().min(1), sha256: Hex64 });
export type PrevLink = z.infer<typeof PrevLinkSchema>;

export const SignatureBlockSchema = z.object({
  scheme: z.literal(SIGNATURE_SCHEME),
  keyOwner: z.string().min(1),
  publicKey: Base64,
  fingerprint: Hex64,
  prev: PrevLinkSchema.nullable(),
  value: Base64,
});
export type SignatureBlock = z.infer<typeof SignatureBlockSchema>;
export type UnsignedBlock = Omit<SignatureBlock, 'value'>;

/** SPKI DER bytes of a public key. */
export function spkiDer(key: KeyObject): Buffer {
  return key.export({ type: 'spki', format: 'der' });
}

/** The fingerprint of a public key: SHA-256 hex of its SPKI DER bytes. */
export function fingerprintOf(key: KeyObject): string {
  return sha256Hex(spkiDer(key));
}

/**
 * A key fingerprint as IMEP prints it EVERYWHERE (verify, `imep keys list|export|trust`, findings, reports):
 * `ed25519:` and the full 64 hex digits of the SHA-256 of the SPKI DER bytes — never shortened, so what a
 * reviewer compares with the key's owner is the whole fingerprint.
 */
export function fingerprintText(fingerprint: string): string {
  return `ed25519:${fingerprint}`;
}

/** The hex fingerprint of a printed one (`ed25519:<hex>` or bare hex, any case); null when it is neither. */
export function parseFingerprint(text: string): string | null {
  const m = /^(?:ed25519:)?([0-9a-fA-F]{64})$/.exec(text.trim());
  return m === null ? null : m[1]!.toLowerCase();
}

/** Decodes a base64 SPKI DER public key; null when it is not an Ed25519 key. */
export function decodePublicKey(b64: string): KeyObject | null {
  try {
    const key = createPublicKey({ key: Buffer.from(b64, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : null;
  } catch {
    return null;
  }
}

/**
 * The bytes a signature covers: the canonical JSON of `record` with `sha256` removed and the
 * signature block without its `value`. Throws (E_INTERNAL) for values canonical JSON refuses.
 */
export function signedBytes(record: object, block: UnsignedBlock | SignatureBlock): Uint8Array {
  const payload: Record<string, unknown> = { ...record };
  delete payload['sha256'];
  const { scheme, keyOwner, publicKey, fingerprint, prev } = block;
  payload['signature'] = { scheme, keyOwner, publicKey, fingerprint, prev };
  return canonicalBytes(payload);
}
