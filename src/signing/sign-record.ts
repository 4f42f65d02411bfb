import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sign, verify } from 'node:crypto';
import { ImepError, sha256Hex } from '../core/index.js';
import { keysDir, operatorKey } from './key-store.js';
import {
  decodePublicKey,
  SIGNATURE_SCHEME,
  SignatureBlockSchema,
  signedBytes,
  type PrevLink,
  type SignatureBlock,
  type UnsignedBlock,
} from './signature-block.js';

/**
 * Signing a record before it is written, and checking one signature. The evidence store calls
 * `signRecord(body, { signer, prev })` on the record WITHOUT its self-hash, then self-hashes the
 * result (so the self-hash covers the signature too).
 *
 * `IMEP_SIGNING=off` writes unsigned records (for machines without a key store); verification then
 * reports the unit as unsigned, and refuses a record left unsigned after a signed one.
 */

export const SIGNING_ENV = 'IMEP_SIGNING';

export function signingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[SIGNING_ENV]?.trim().toLowerCase();
  return !(v === 'off' || v === '0' || v === 'false' || v === 'no');
}

export interface SignOptions {
  /** The operator whose key signs (created on first use). */
  readonly signer: string;
  /** The previous record of the chain, or null for the first. */
  readonly prev: PrevLink | null;
  /** The keys dir (default: keysDir()). */
  readonly keysDir?: string;
  /** Sign even when IMEP_SIGNING=off (tests). */
  readonly force?: boolean;
}

/** Loads (creating on first use) the signer's key when signing is on, so a caller can refuse before writing anything. */
export async function prepareSigner(signer: string, opts: Pick<SignOptions, 'keysDir' | 'force'> = {}): Promise<void> {
  if (opts.force || signingEnabled()) await operatorKey(signer, { dir: opts.keysDir ?? keysDir() });
}

/** `body` with a `signature` block (unchanged when signing is off). `body` must carry neither `signature` nor `sha256`. */
export async function signRecord<T extends object>(
  body: T,
  opts: SignOptions,
): Promise<T & { signature?: SignatureBlock }> {
  if (!opts.force && !signingEnabled()) return body;
  if ('signature' in body || 'sha256' in body)
    throw new ImepError('E_INTERNAL', 'signRecord: the body already carries a signature or self-hash');
  const key = await operatorKey(opts.signer, { dir: opts.keysDir ?? keysDir() });
  const block: UnsignedBlock = {
    scheme: SIGNATURE_SCHEME,
    keyOwner: opts.signer,
    publicKey: key.publicKeyB64,
    fingerprint: key.fingerprint,
    prev: opts.prev,
  };
  const value = sign(null, signedBytes(body, block), key.privateKey).toString('base64');
  return { ...body, signature: { ...block, value } };
}

/** The link to a unit file for `prev`: its unit-relative path and the SHA-256 of its bytes. */
export async function prevLink(unitDir: string, relPath: string): Promise<PrevLink> {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(unitDir, relPath));
  } catch (e) {
    throw new ImepError(
      'E_IO',
      `cannot read the previous signed record (${String((e as { code?: unknown }).code ?? e)})`,
      { file: join(unitDir, relPath), cause: e },
    );
  }
  return { file: relPath, sha256: sha256Hex(bytes) };
}

export type SignatureCheck =
  | { readonly status: 'unsigned' }
  | { readonly status: 'valid'; readonly block: SignatureBlock }
  | { readonly status: 'invalid'; readonly reason: string; readonly block: SignatureBlock | null };

/** Checks a parsed record's own signature (not the trust in its key: see chain.ts). */
export function checkRecordSignature(record: Readonly<Record<string, unknown>>): SignatureCheck {
  if (!('signature' in record) || record['signature'] === undefined) return { status: 'unsigned' };
  const parsed = SignatureBlockSchema.safeParse(record['signature']);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      status: 'invalid',
      reason: `malformed signature block at signature.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
      block: null,
    };
  }
  const block = parsed.data;
  const key = decodePublicKey(block.publicKey);
  if (key === null) return { status: 'invalid', reason: 'the embedded public key is not an Ed25519 key', block };
  const der = Buffer.from(block.publicKey, 'base64');
  if (sha256Hex(der) !== block.fingerprint)
    return { status: 'invalid', reason: 'the embedded fingerprint is not that of the embedded public key', block };
  const sig = Buffer.from(block.value, 'base64');
  if (sig.length !== 64) return { status: 'invalid', reason: `the signature is ${sig.length} bytes, not 64`, block };
  let bytes: Uint8Array;
  try {
    bytes = signedBytes(record, block);
  } catch {
    return { status: 'invalid', reason: 'the record holds values canonical JSON cannot', block };
  }
  let ok = false;
  try {
    ok = verify(null, bytes, key, sig);
  } catch {
    ok = false;
  }
  return ok
    ? { status: 'valid', block }
    : {
        status: 'invalid',
        reason: 'the signature does not verify: the record or its signature was changed after signing',
        block,
      };
}
