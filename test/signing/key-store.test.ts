import { chmod, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import {
  exportPublicKey,
  keyFileStem,
  keysDir,
  operatorKey,
  operatorOfStem,
  removeKey,
  trustedKeys,
  trustPublicKey,
} from '../../src/signing/key-store.js';
import { removeTree, tempDir } from '../evidence/helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-keystore-');
});
afterAll(async () => removeTree(root));

async function caught(p: Promise<unknown>): Promise<import('../../src/core/errors.js').ImepError> {
  try {
    await p;
  } catch (e) {
    if (isImepError(e)) return e;
    throw e;
  }
  throw new Error('expected an ImepError');
}

describe('key store', () => {
  it('defaults to ~/.imep/keys and honours IMEP_KEYS_DIR', () => {
    expect(keysDir({})).toMatch(/[/\\]\.imep[/\\]keys$/);
    expect(keysDir({ IMEP_KEYS_DIR: '/x/y' })).toBe('/x/y');
  });

  it('creates a key pair on first use (0600 files in a 0700 folder) and reuses it', async () => {
    const dir = join(root, 'first-use');
    const a = await operatorKey('alice@lab', { dir });
    expect(a.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect((await readdir(dir)).sort()).toEqual(['alice@lab.key', 'alice@lab.pub']);
    expect((await stat(a.keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(a.pubFile)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const again = await operatorKey('alice@lab', { dir });
    expect(again.fingerprint).toBe(a.fingerprint);
    const other = await operatorKey('bob', { dir });
    expect(other.fingerprint).not.toBe(a.fingerprint);
  });

  it('gives one key to concurrent first uses of the same operator', async () => {
    const dir = join(root, 'race');
    const keys = await Promise.all(Array.from({ length: 8 }, () => operatorKey('carol', { dir })));
    expect(new Set(keys.map((k) => k.fingerprint)).size).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(['carol.key', 'carol.pub']);
  });

  it('encodes operator ids that are not plain file names, reversibly', () => {
    for (const id of ['runner-session', 'root@host-1', 'a b/c', '.hidden', 'ü:x', '50%']) {
      const stem = keyFileStem(id);
      expect(stem).toMatch(/^[A-Za-z0-9_@+%-][A-Za-z0-9._@+%-]*$/);
      expect(operatorOfStem(stem)).toBe(id);
    }
  });

  it('refuses a private key readable by others', async () => {
    const dir = join(root, 'perm');
    const k = await operatorKey('dave', { dir });
    await chmod(k.keyFile, 0o644);
    const e = await caught(operatorKey('dave', { dir }));
    expect(e.code).toBe('E_USAGE');
    expect(e.oneLine()).toContain('chmod 600');
  });

  it('lists trusted keys, imports another operator’s public key, and forgets removed ones', async () => {
    const mine = join(root, 'mine');
    const theirs = join(root, 'theirs');
    const erin = await operatorKey('erin', { dir: theirs });
    await operatorKey('frank', { dir: mine });
    expect((await trustedKeys({ dir: mine })).map((t) => t.operator)).toEqual(['frank']);
    const t = await trustPublicKey('erin', await exportPublicKey('erin', { dir: theirs }), { dir: mine });
    expect(t.fingerprint).toBe(erin.fingerprint);
    expect((await trustedKeys({ dir: mine })).map((x) => x.operator)).toEqual(['erin', 'frank']);
    // a different key under a trusted name is refused
    const mallory = await operatorKey('mallory', { dir: theirs });
    const e = await caught(
      trustPublicKey('erin', mallory.publicKey.export({ type: 'spki', format: 'pem' }).toString(), { dir: mine }),
    );
    expect(e.code).toBe('E_USAGE');
    await removeKey('erin', { dir: mine });
    expect((await trustedKeys({ dir: mine })).map((x) => x.operator)).toEqual(['frank']);
    expect(await trustedKeys({ dir: join(root, 'absent') })).toEqual([]);
  });

  it('refuses a .pub that is not the private key’s', async () => {
    const dir = join(root, 'mismatch');
    await operatorKey('gina', { dir });
    const other = await operatorKey('hank', { dir });
    await writeFile(join(dir, 'gina.pub'), other.publicKey.export({ type: 'spki', format: 'pem' }).toString(), {
      mode: 0o600,
    });
    const e = await caught(operatorKey('gina', { dir }));
    expect(e.code).toBe('E_USAGE');
    expect(e.file).toBe(join(dir, 'gina.pub'));
  });

  it('fails with E_IO naming the folder when keys cannot be created', async () => {
    const blocker = join(root, 'blocker');
    await writeFile(blocker, 'not a folder');
    const e = await caught(operatorKey('ivy', { dir: join(blocker, 'keys') }));
    expect(e.code).toBe('E_IO');
    expect(e.oneLine()).toContain('IMEP_KEYS_DIR');
  });
});
