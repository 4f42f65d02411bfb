/**
 * The seen store (src/evidence/seen-store.ts) records only what passed every check of `verify`: a forged copy of a
 * unit — the same precommit.json, other sealed bytes, its seal re-signed by a key this machine does not trust — is
 * refused (exit 5) and leaves the store untouched, so the genuine unit verified afterwards is not taken for a
 * rollback (exit 0, not 7). Likewise a refusal for --expected-stage (exit 3).
 */
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { merkleRoot } from '../../src/evidence/manifest.js';
import { imep } from '../campaign/cli-support.js';
import { isolateKeys, readJson, rewrite } from '../signing/helpers.js';
import { buildUnit, copyUnit, removeTree, RUNNER, tempDir } from './helpers.js';

let root: string;
let keys: { dir: string; restore: () => void };
let genuine: string;
let forged: string;
let homes = 0;

async function freshHome(): Promise<string> {
  const home = join(root, `home-${++homes}`);
  await mkdir(home, { recursive: true });
  return home;
}

const verify = (dir: string, home: string, ...more: string[]) =>
  imep(['campaign', 'verify', dir, ...more], root, undefined, { HOME: home, IMEP_SEEN_DIR: '' });

const storeFiles = (home: string): Promise<string[]> => readdir(join(home, '.imep', 'seen')).catch(() => []);

beforeAll(async () => {
  keys = await isolateKeys();
  root = await tempDir('imep-seen-poison-');
  genuine = join(root, 'genuine');
  await buildUnit(genuine, 'sealed', { rich: true });
  // the forgery: the genuine precommit, other timings, the seal rebuilt over them and signed by another key
  forged = join(root, 'forged');
  await copyUnit(genuine, forged);
  const timings = 'rows/timings.jsonl';
  await chmod(join(forged, 'rows'), 0o755);
  await chmod(join(forged, timings), 0o644);
  const bytes = Buffer.concat([await readFile(join(forged, timings)), Buffer.from('{"seq":0,"wallMs":99}\n')]);
  await writeFile(join(forged, timings), bytes);
  const attacker = join(root, 'attacker-keys');
  await rewrite(
    forged,
    'seal.json',
    (r) => {
      const files = (r['files'] as Array<{ path: string; size: number; sha256: string }>).map((f) =>
        f.path === timings ? { ...f, size: bytes.length, sha256: sha256Hex(bytes) } : f,
      );
      r['files'] = files;
      (r['merkle'] as { root: string }).root = merkleRoot(files);
    },
    { signer: RUNNER.id, keysDir: attacker },
  );
});
afterAll(async () => {
  keys.restore();
  await removeTree(root);
  await removeTree(join(keys.dir, '..'));
});

describe('a unit refused by verify is not recorded as seen', () => {
  it('the forgery has the genuine precommit and another seal root', async () => {
    expect(await readFile(join(forged, 'precommit.json'))).toEqual(await readFile(join(genuine, 'precommit.json')));
    const a = (await readJson(genuine, 'seal.json'))['merkle'] as { root: string };
    const b = (await readJson(forged, 'seal.json'))['merkle'] as { root: string };
    expect(b.root).not.toBe(a.root);
  });

  it('a forged copy signed by an untrusted key (exit 5) leaves the store untouched; the genuine unit then verifies (exit 0)', async () => {
    const home = await freshHome();
    const f = await verify(forged, home);
    expect(f.code, `${f.stdout}${f.stderr}`).toBe(5);
    expect(await storeFiles(home)).toEqual([]);
    const g = await verify(genuine, home);
    expect(g.code, `${g.stdout}${g.stderr}`).toBe(0);
    expect(await storeFiles(home)).toHaveLength(1);
  });

  it('a refusal for --expected-stage (exit 3) records nothing either', async () => {
    const home = await freshHome();
    const f = await verify(forged, home, '--expected-stage', 'closed');
    expect(f.code, `${f.stdout}${f.stderr}`).toBe(3);
    expect(await storeFiles(home)).toEqual([]);
    expect((await verify(genuine, home)).code).toBe(0);
  });

  it('a rollback is still refused before the other checks (exit 7, not 5)', async () => {
    const home = await freshHome();
    expect((await verify(genuine, home)).code).toBe(0);
    const f = await verify(forged, home);
    expect(f.code, `${f.stdout}${f.stderr}`).toBe(7);
  });

  it('`keys trust` of a forged unit records nothing when the unit does not then verify trusted', async () => {
    const home = await freshHome();
    const attackerSeal = (await readJson(forged, 'seal.json'))['signature'] as { fingerprint?: string } | undefined;
    const fp = attackerSeal?.fingerprint;
    expect(fp).toMatch(/^[0-9a-f]{64}$/);
    const t = await imep(['keys', 'trust', forged, '--fingerprint', `ed25519:${fp!}`], root, undefined, {
      HOME: home,
      IMEP_SEEN_DIR: '',
      IMEP_KEYS_DIR: join(home, 'keys'),
    });
    expect(t.code, t.stderr).toBe(0);
    // this machine's key store holds only the attacker's key now: the runner's own records stay untrusted
    expect(await storeFiles(home)).toEqual([]);
  });
});
