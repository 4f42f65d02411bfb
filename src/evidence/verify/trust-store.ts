import type { KeyObject } from 'node:crypto';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ImepError } from '../../core/index.js';
import { ADJUDICATION_RECORD_RE, CROSS_CHECK_RECORD_RE, UNIT_FILES } from '../unit-layout.js';
import {
  parseObject,
  keyFileStem,
  keysDir,
  trustedKeys,
  trustPublicKey,
  type KeyStoreOptions,
  type TrustedKey,
  checkRecordSignature,
  decodePublicKey,
  fingerprintText,
  parsePublicKeyFile,
  type PublicKeyFile,
} from '../../signing/index.js';

/**
 * The verifier's side of the key store (`imep keys list | trust | revoke`): which public keys it trusts, trusting
 * one from a file (`imep keys export` on its owner's machine) or from the signatures a unit carries (only with the
 * fingerprint given, as its owner confirmed it), and revoking trust. The store itself is key-store.ts.
 */

export interface StoredKey extends TrustedKey {
  /** This store also holds the private key: the key signs as `operator` here. */
  readonly own: boolean;
}

/** Every public key of the store, each marked own (a private key is here) or trusted (imported). */
export async function listKeys(opts: KeyStoreOptions = {}): Promise<StoredKey[]> {
  const dir = opts.dir ?? keysDir();
  const out: StoredKey[] = [];
  for (const t of await trustedKeys({ dir })) {
    const own = await stat(join(dir, `${t.file.slice(dir.length + 1, -'.pub'.length)}.key`)).then(
      () => true,
      () => false,
    );
    out.push({ ...t, own });
  }
  return out;
}

/** A public key file read for `imep keys trust FILE`: the key, and the operator it names (null: a bare PEM). */
export async function readKeyFile(file: string): Promise<PublicKeyFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ImepError('E_USAGE', `cannot read the public key file (${String((e as { code?: unknown }).code ?? e)})`, {
      file,
      cause: e,
    });
  }
  return parsePublicKeyFile(text, file);
}

/**
 * Trusts the public key of a key file under `name`; with `fingerprint`, only when the key has it. The name is the
 * one given, else the one the file names (`imep keys export` writes it), else — for a bare PEM — the owner the
 * signatures of `unit` give the key; with none of these it refuses, saying to pass `--name`.
 */
export async function trustKeyFile(
  file: string,
  opts: { name?: string; fingerprint?: string; unit?: string },
  store: KeyStoreOptions = {},
): Promise<TrustedKey & { named: 'given' | 'file' | 'unit'; fileNames: string | null }> {
  const pub = await readKeyFile(file);
  if (opts.fingerprint !== undefined && pub.fingerprint !== opts.fingerprint) {
    throw new ImepError(
      'E_USAGE',
      `the key's fingerprint is ${fingerprintText(pub.fingerprint)}, not ${fingerprintText(opts.fingerprint)}`,
      { file, hint: 'ask the key owner for the right file; nothing was trusted' },
    );
  }
  let name = opts.name;
  let named: 'given' | 'file' | 'unit' = 'given';
  if (name === undefined && pub.operator !== null) {
    name = pub.operator;
    named = 'file';
  }
  if (name === undefined && opts.unit !== undefined) {
    const keys = await embeddedKeys(opts.unit);
    const hit = keys.get(pub.fingerprint);
    if (hit === undefined) {
      const carried = [...keys.values()].map((k) => `${k.keyOwner} ${fingerprintText(k.fingerprint)}`).join(', ');
      throw new ImepError(
        'E_USAGE',
        `no valid signature of the unit is made with this key (${fingerprintText(pub.fingerprint)})${carried === '' ? '; the unit carries no valid signature' : `; it carries ${carried}`}`,
        { file: opts.unit, hint: 'check that the key and the unit come from the same operator; nothing was trusted' },
      );
    }
    name = hit.keyOwner;
    named = 'unit';
  }
  if (name === undefined) {
    throw new ImepError(
      'E_USAGE',
      `this is a bare public key that names no operator (${fingerprintText(pub.fingerprint)}): pass --name <the operator its owner signs as> or --unit <a unit they signed>; nothing was trusted`,
      { file, hint: 'a file from `imep keys export` carries the name; its owner sees the name with `imep keys list`' },
    );
  }
  const t = await trustPublicKey(name, pub.pem, store);
  return { ...t, named, fileNames: pub.operator };
}

export interface EmbeddedKey {
  readonly keyOwner: string;
  readonly fingerprint: string;
  readonly key: KeyObject;
}

/** The signers' keys a unit's records carry, from signatures that verify over their records (by fingerprint). */
export async function embeddedKeys(unitDir: string): Promise<Map<string, EmbeddedKey>> {
  const adj = await readdir(join(unitDir, UNIT_FILES.adjudicationDir)).catch(() => [] as string[]);
  const paths = [
    UNIT_FILES.precommit,
    UNIT_FILES.seal,
    UNIT_FILES.closeout,
    ...adj
      .filter((n) => ADJUDICATION_RECORD_RE.test(n) || CROSS_CHECK_RECORD_RE.test(n))
      .map((n) => `${UNIT_FILES.adjudicationDir}/${n}`),
  ];
  const records: Record<string, unknown>[] = [];
  for (const p of paths) {
    const bytes = await readFile(join(unitDir, p)).catch(() => null);
    const r = bytes === null ? null : parseObject(bytes);
    if (r !== null) records.push(r);
  }
  const log = await readFile(join(unitDir, UNIT_FILES.amendments), 'utf8').catch(() => '');
  for (const line of log.split('\n')) {
    const r = line.trim() === '' ? null : parseObject(line);
    if (r !== null) records.push(r);
  }
  const out = new Map<string, EmbeddedKey>();
  for (const r of records) {
    const check = checkRecordSignature(r);
    if (check.status !== 'valid' || out.has(check.block.fingerprint)) continue;
    const key = decodePublicKey(check.block.publicKey);
    if (key !== null)
      out.set(check.block.fingerprint, { keyOwner: check.block.keyOwner, fingerprint: check.block.fingerprint, key });
  }
  return out;
}

/** Trusts the key with `fingerprint` that a unit's signatures carry, under `name` (default: the owner it names). */
export async function trustKeyFromUnit(
  unitDir: string,
  fingerprint: string,
  name: string | undefined,
  opts: KeyStoreOptions = {},
): Promise<TrustedKey> {
  const keys = await embeddedKeys(unitDir);
  const hit = keys.get(fingerprint);
  if (hit === undefined) {
    const carried = [...keys.values()].map((k) => `${k.keyOwner} ${fingerprintText(k.fingerprint)}`).join(', ');
    throw new ImepError(
      'E_USAGE',
      `no valid signature of the unit is made with the key ${fingerprintText(fingerprint)}${carried === '' ? '; the unit carries no valid signature' : `; it carries ${carried}`}`,
      { file: unitDir, hint: 'nothing was trusted' },
    );
  }
  return trustPublicKey(name ?? hit.keyOwner, hit.key.export({ type: 'spki', format: 'pem' }).toString(), opts);
}

/**
 * Stops trusting a key, named by its operator name or fingerprint: removes its `.pub`. Refuses the store's own
 * signing keys (removing one would leave its private key without the public half every record it signed needs).
 */
export async function revokeKey(
  which: string,
  fingerprint: string | null,
  opts: KeyStoreOptions = {},
): Promise<StoredKey[]> {
  const dir = opts.dir ?? keysDir();
  const all = await listKeys({ dir });
  const hits = all.filter((k) =>
    fingerprint !== null ? k.fingerprint === fingerprint : k.file === join(dir, `${keyFileStem(which)}.pub`),
  );
  if (hits.length === 0)
    throw new ImepError(
      'E_USAGE',
      `no trusted key ${fingerprint !== null ? fingerprintText(fingerprint) : `named ${which}`} in ${dir}`,
      { field: 'key', hint: '`imep keys list` shows the trusted keys' },
    );
  const own = hits.find((k) => k.own);
  if (own !== undefined) {
    throw new ImepError(
      'E_USAGE',
      `${own.operator}'s key is this store's own signing key, not an imported one; revoking it here would orphan its private key`,
      {
        file: own.file,
        hint: 'to retire it, move both its .key and .pub out of the key store (records it signed then verify as untrusted here)',
      },
    );
  }
  for (const k of hits) await rm(k.file, { force: true });
  return hits;
}
