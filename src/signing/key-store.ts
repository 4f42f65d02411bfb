import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { link, mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ImepError } from '../core/index.js';
import { parsePublicKeyFile } from './public-key-file.js';
import { fingerprintOf, spkiDer } from './signature-block.js';

/**
 * Per-operator Ed25519 keys: `<keys dir>/<operator>.key` (PKCS#8 PEM, the private key) and
 * `<operator>.pub` (SPKI PEM), both mode 0600 in a 0700 folder. The keys dir is `~/.imep/keys`, or
 * `IMEP_KEYS_DIR` when set. A key is created on its operator's first signature; creation is atomic
 * (written to a temp file, then hard-linked into place), so two processes signing for the same new
 * operator at once end up with one key.
 *
 * The `.pub` files are also the TRUST STORE of verification: a signed record verifies only when its
 * key's fingerprint is that of some `<operator>.pub` here. To verify another operator's records on
 * this machine, import its public key (`trustPublicKey`); removing a `.pub` revokes trust in it.
 * Operator ids that are not plain file names are percent-encoded (`keyFileStem`).
 */

export const KEYS_DIR_ENV = 'IMEP_KEYS_DIR';

export function keysDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[KEYS_DIR_ENV]?.trim();
  return fromEnv ? fromEnv : join(homedir(), '.imep', 'keys');
}

const PLAIN = /^[A-Za-z0-9_@+-][A-Za-z0-9._@+-]{0,127}$/;

/** The file stem of an operator's key: the id itself when it is a plain file name, else percent-encoded. */
export function keyFileStem(operator: string): string {
  if (operator === '') throw new ImepError('E_USAGE', 'an operator id must not be empty', { field: 'operator' });
  if (PLAIN.test(operator)) return operator;
  let out = '';
  for (const b of Buffer.from(operator, 'utf8')) {
    const c = String.fromCharCode(b);
    out +=
      /[A-Za-z0-9_@+-]/.test(c) || (c === '.' && out !== '') ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out.length > 240)
    throw new ImepError('E_USAGE', 'the operator id is too long to name a key file', {
      field: 'operator',
      hint: 'use a shorter IMEP_OPERATOR',
    });
  return out;
}

/** The operator id of a key file stem (inverse of keyFileStem for the ids it does not shorten). */
export function operatorOfStem(stem: string): string {
  try {
    return decodeURIComponent(stem);
  } catch {
    return stem;
  }
}

export interface OperatorKey {
  readonly operator: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** base64 SPKI DER (as embedded in signatures). */
  readonly publicKeyB64: string;
  readonly fingerprint: string;
  readonly keyFile: string;
  readonly pubFile: string;
}

export interface KeyStoreOptions {
  /** The keys dir (default: keysDir()). */
  readonly dir?: string;
}

function paths(operator: string, dir: string): { keyFile: string; pubFile: string } {
  const stem = keyFileStem(operator);
  return { keyFile: join(dir, `${stem}.key`), pubFile: join(dir, `${stem}.pub`) };
}

function ioFail(file: string, doing: string, e: unknown): ImepError {
  const code = (e as { code?: unknown } | null)?.code;
  return new ImepError('E_IO', `cannot ${doing} (${String(code ?? e)})`, {
    file,
    hint: `signing keys live in ~/.imep/keys; set ${KEYS_DIR_ENV} to a writable folder`,
    cause: e,
  });
}

async function ensureDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw ioFail(dir, 'create the keys folder', e);
  }
}

/** Writes `bytes` to `file` with mode 0600 unless it exists; returns false when it already existed. */
async function createExclusive(file: string, bytes: string): Promise<boolean> {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await link(tmp, file);
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === 'EEXIST') return false;
    throw ioFail(file, 'write a key file', e);
  } finally {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}

async function readKeyFile(file: string): Promise<string | null> {
  try {
    if (process.platform !== 'win32') {
      const st = await stat(file);
      if ((st.mode & 0o077) !== 0) {
        throw new ImepError(
          'E_USAGE',
          `the private key is readable by others (mode ${(st.mode & 0o777).toString(8)})`,
          {
            file,
            hint: `chmod 600 ${file}`,
          },
        );
      }
    }
    return await readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof ImepError) throw e;
    if ((e as { code?: string }).code === 'ENOENT') return null;
    throw ioFail(file, 'read a key file', e);
  }
}

function toOperatorKey(
  operator: string,
  privateKey: KeyObject,
  files: { keyFile: string; pubFile: string },
): OperatorKey {
  const publicKey = createPublicKey(privateKey);
  return {
    operator,
    privateKey,
    publicKey,
    publicKeyB64: spkiDer(publicKey).toString('base64'),
    fingerprint: fingerprintOf(publicKey),
    ...files,
  };
}

/** Keys this process created (`<keys dir>\0<operator>`): an identity with no history before this command. */
const createdHere = new Set<string>();

/** Whether this process created `operator`'s key (in `dir`, default keysDir()): no key of that name existed before this command. */
export function keyCreatedInThisProcess(operator: string, dir: string = keysDir()): boolean {
  return createdHere.has(`${dir}\u0000${operator}`);
}

/**
 * The operator's signing key, created on first use (E_IO when the keys dir cannot be written; E_USAGE
 * for a private key readable by others, or a .pub that is not the key's).
 */
export async function operatorKey(operator: string, opts: KeyStoreOptions = {}): Promise<OperatorKey> {
  const dir = opts.dir ?? keysDir();
  const files = paths(operator, dir);
  let pem = await readKeyFile(files.keyFile);
  if (pem === null) {
    await ensureDir(dir);
    const { privateKey } = generateKeyPairSync('ed25519');
    if (await createExclusive(files.keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()))
      createdHere.add(`${dir}\u0000${operator}`);
    pem = await readKeyFile(files.keyFile);
    if (pem === null) throw ioFail(files.keyFile, 'read the key just created', new Error('vanished'));
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (e) {
    throw new ImepError('E_USAGE', 'not a private key (PKCS#8 PEM expected)', {
      file: files.keyFile,
      hint: 'restore the key file or remove it (and its .pub) to create a new key',
      cause: e,
    });
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new ImepError('E_USAGE', `not an Ed25519 key (${String(privateKey.asymmetricKeyType)})`, {
      file: files.keyFile,
    });
  }
  const key = toOperatorKey(operator, privateKey, files);
  const pubPem = key.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  if (!(await createExclusive(files.pubFile, pubPem))) {
    const existing = await readFile(files.pubFile, 'utf8').catch((e: unknown) =>
      Promise.reject(ioFail(files.pubFile, 'read a public key', e)),
    );
    if (existing !== pubPem) {
      throw new ImepError('E_USAGE', `this public key is not the one of ${operator}'s private key`, {
        file: files.pubFile,
        hint: 'restore the matching pair, or remove both files to create a new key',
      });
    }
  }
  return key;
}

export interface TrustedKey {
  /** The operator the .pub file names (its `operator:` line), else the one it is named after (its stem). */
  readonly operator: string;
  readonly fingerprint: string;
  readonly file: string;
}

/** Every trusted public key (the `.pub` files of the keys dir); none when the folder does not exist. */
export async function trustedKeys(opts: KeyStoreOptions = {}): Promise<TrustedKey[]> {
  const dir = opts.dir ?? keysDir();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return [];
    throw ioFail(dir, 'list the keys folder', e);
  }
  const out: TrustedKey[] = [];
  for (const name of names.filter((n) => n.endsWith('.pub')).sort()) {
    const file = join(dir, name);
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text === null) continue;
    try {
      // the operator the file names (`imep keys export` writes it), else its stem (a bare PEM)
      const pub = parsePublicKeyFile(text, file);
      out.push({
        operator: pub.operator ?? operatorOfStem(name.slice(0, -'.pub'.length)),
        fingerprint: pub.fingerprint,
        file,
      });
    } catch {
      // not an Ed25519 public key: not trusted
    }
  }
  return out;
}

/** The operator's public key (SPKI PEM), creating the key pair on first use. */
export async function exportPublicKey(operator: string, opts: KeyStoreOptions = {}): Promise<string> {
  const key = await operatorKey(operator, opts);
  return key.publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

/** Trusts another operator's public key (SPKI PEM) by writing `<operator>.pub`; refuses to replace a different one. */
export async function trustPublicKey(operator: string, pem: string, opts: KeyStoreOptions = {}): Promise<TrustedKey> {
  const dir = opts.dir ?? keysDir();
  const { pubFile } = paths(operator, dir);
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (e) {
    throw new ImepError('E_USAGE', 'not a public key (SPKI PEM expected)', { field: 'pem', cause: e });
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new ImepError('E_USAGE', 'not an Ed25519 public key', { field: 'pem' });
  const text = key.export({ type: 'spki', format: 'pem' }).toString();
  await ensureDir(dir);
  if (!(await createExclusive(pubFile, text))) {
    const existing = await readFile(pubFile, 'utf8').catch(() => '');
    if (existing !== text)
      throw new ImepError('E_USAGE', `a different public key is already trusted for ${operator}`, {
        file: pubFile,
        hint: 'remove it first if the operator really has a new key',
      });
  }
  return { operator, fingerprint: fingerprintOf(key), file: pubFile };
}

/** Removes an operator's key pair (or trusted public key): records it signed no longer verify here. */
export async function removeKey(operator: string, opts: KeyStoreOptions = {}): Promise<void> {
  const dir = opts.dir ?? keysDir();
  const { keyFile, pubFile } = paths(operator, dir);
  for (const f of [keyFile, pubFile])
    await rm(f, { force: true }).catch((e: unknown) => Promise.reject(ioFail(f, 'remove a key file', e)));
}
