/**
 * Read-once inside verify: the hashing pass reads the amendment log and the adjudication records into memory and
 * every later check (the sealed prefix and hash chain, the records' self-hashes, the signature chain) works from
 * those buffers. The seam `verifiedReadTestHooks.afterHashing` puts the genuine bytes back between the hashing and
 * the checks: verify must still judge the tampered bytes it hashed (and consumers then vouch by), not pass.
 */
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { amend, verifyUnit } from '../../src/evidence/index.js';
import { adjudicateUnit } from '../../src/adjudication/index.js';
import { verifiedReadTestHooks } from '../../src/evidence/io/verified-read.js';
import { copyUnit, removeTree, tempDir } from './helpers.js';
import { blackoutOutcome, blackoutProtocol, buildSealedUnit, clock, REVIEWER } from '../adjudication/fixtures.js';

let root: string;
/** Sealed with an amendment, adjudicated, amended once more after the seal; not closed. */
let unit: string;
beforeAll(async () => {
  root = await tempDir('imep-verify-read-once-');
  unit = join(root, 'unit');
  await buildSealedUnit(unit, blackoutProtocol(), blackoutOutcome, { amendBeforeSeal: true });
  await adjudicateUnit(unit, { operator: REVIEWER, now: clock });
  await amend(unit, {
    text: 'a note after the adjudication',
    affects: ['gates.sham_validity.substitutionFraction.denominator'],
    author: REVIEWER,
    now: clock,
  });
});
afterAll(async () => removeTree(root));
afterEach(() => {
  delete verifiedReadTestHooks.afterHashing;
});

let n = 0;
async function copy(): Promise<string> {
  const dir = join(root, `copy-${n++}`);
  await copyUnit(unit, dir);
  return dir;
}

/** Puts `bytes` at `path` with an atomic rename (as an attacker's swap would), keeping the permissions. */
async function put(dir: string, path: string, bytes: Buffer | string): Promise<void> {
  const file = join(dir, path);
  const parent = dirname(file);
  await chmod(parent, 0o755);
  await writeFile(`${file}.swap`, bytes);
  await rename(`${file}.swap`, file);
  await chmod(file, 0o444);
  await chmod(parent, 0o555);
}

/** Tampers `path` on disk, and puts its genuine bytes back once verify has hashed it, before its later checks. */
async function tamperThenRestoreAfterHashing(
  dir: string,
  path: string,
  tampered: (genuine: string) => string,
): Promise<void> {
  const genuine = await readFile(join(dir, path));
  await put(dir, path, tampered(genuine.toString('utf8')));
  let restored = 0;
  verifiedReadTestHooks.afterHashing = async (d) => {
    if (d !== dir) return;
    restored++;
    await put(dir, path, genuine);
  };
  const r = await verifyUnit(dir);
  expect(restored).toBe(1);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.issues.map((i) => i.path)).toContain(path);
}

describe('verify checks the bytes it hashed, not a second read', () => {
  it('the unit verifies intact, with the post-seal amendment pending (the seam changes nothing by itself)', async () => {
    const dir = await copy();
    let called = 0;
    verifiedReadTestHooks.afterHashing = () => {
      called++;
    };
    const r = await verifyUnit(dir);
    expect(called).toBe(1);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.pending).toContain('amendments.jsonl');
  });

  it('post-seal amendments tampered when hashed and restored before the chain check: verify fails on amendments.jsonl', async () => {
    const dir = await copy();
    await tamperThenRestoreAfterHashing(dir, 'amendments.jsonl', (g) => `${g}not an amendment\n`);
  });

  it('an adjudication record tampered when hashed and restored before its self-hash and signature checks: verify fails on it', async () => {
    const dir = await copy();
    await tamperThenRestoreAfterHashing(dir, 'adjudication/adjudication-001.json', (g) => g.replace('"', '"x'));
  });
});
