/**
 * The documented key flow (issue 35, item 1), through the built CLI: the producer's `imep keys export > FILE`
 * carries the operator's name, so the reviewer's `imep keys trust FILE` (whatever the file is called) trusts the key
 * under the name the unit's signatures give and `verify` exits 0. A bare PEM (earlier exports) still reads: its name
 * comes from --name, or from the signatures of a unit given with --unit, or trust refuses with one line saying so.
 * A key trusted under another name makes `verify` say so in words, with the commands that fix it (exit 5, as before).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorKey } from '../../src/signing/key-store.js';
import { parsePublicKeyFile } from '../../src/signing/public-key-file.js';
import { imep } from '../campaign/cli-support.js';
import { buildUnit, removeTree, REVIEWER, RUNNER, tempDir } from '../evidence/helpers.js';
import { isolateKeys } from './helpers.js';

let root: string;
let producerKeys: { dir: string; restore: () => void };
let unit: string;
let runnerFile: string;
let reviewerFile: string;
let runnerFp: string;
let reviewerFp: string;

beforeAll(async () => {
  producerKeys = await isolateKeys();
  root = await tempDir('imep-keyflow-');
  unit = join(root, 'unit');
  await buildUnit(unit, 'closed');
  runnerFp = (await operatorKey(RUNNER.id)).fingerprint;
  reviewerFp = (await operatorKey(REVIEWER.id)).fingerprint;
  // the producer's side, as the README has it: `imep keys export > alice.pub` (a file name unrelated to the operator)
  runnerFile = join(root, 'alice.pub');
  reviewerFile = join(root, 'bob.pub');
  for (const [op, file] of [
    [RUNNER.id, runnerFile],
    [REVIEWER.id, reviewerFile],
  ] as const) {
    const e = await imep(['keys', 'export', op], root, undefined, { IMEP_KEYS_DIR: producerKeys.dir });
    expect(e.code, e.stderr).toBe(0);
    await writeFile(file, e.stdout);
  }
});
afterAll(async () => {
  producerKeys.restore();
  await removeTree(root);
  await removeTree(join(producerKeys.dir, '..'));
});

/** A reviewer's machine: its own HOME and key store. */
async function reviewer(name: string): Promise<(args: string[]) => ReturnType<typeof imep>> {
  const home = join(root, name);
  await mkdir(home, { recursive: true });
  return (args) => imep(args, root, undefined, { HOME: home, IMEP_KEYS_DIR: join(home, 'keys') });
}

describe('the key flow as documented', () => {
  it('the exported file names its operator and fingerprint, and still reads as a plain public key', async () => {
    const text = await readFile(runnerFile, 'utf8');
    expect(text).toContain(`operator: ${JSON.stringify(RUNNER.id)}`);
    expect(text).toContain(`fingerprint: ed25519:${runnerFp}`);
    expect(text).toMatch(/-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/);
    const parsed = parsePublicKeyFile(text, runnerFile);
    expect([parsed.operator, parsed.fingerprint]).toEqual([RUNNER.id, runnerFp]);
  });

  it('`keys trust alice.pub` trusts the key under the name it carries; verify then exits 0', async () => {
    const run = await reviewer('flow');
    const t = await run(['keys', 'trust', runnerFile]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout.trim()).toMatch(
      new RegExp(
        `^trusted ${RUNNER.id} ed25519:${runnerFp} \\(.*${RUNNER.id}\\.pub; name from the name the file carries\\)$`,
      ),
    );
    expect((await run(['keys', 'trust', reviewerFile])).code).toBe(0);
    const v = await run(['campaign', 'verify', unit]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toContain('intact and signed by trusted keys');
    expect(v.stdout).toMatch(/; 0 errors, 0 warnings|; 0 errors,/);
  });

  it('the exported files in a --trusted-keys folder vouch under their names, whatever the files are called', async () => {
    const ci = join(root, 'ci-keys');
    await mkdir(ci);
    await writeFile(join(ci, 'alice.pub'), await readFile(runnerFile));
    await writeFile(join(ci, 'bob.pub'), await readFile(reviewerFile));
    const run = await reviewer('ci');
    const v = await run(['campaign', 'verify', unit, '--trusted-keys', ci, '--require-signatures']);
    expect(v.code, v.stderr).toBe(0);
  });

  it('a bare PEM: refused without a name (one line, exit 2); --unit takes the name from the signatures; --name as given', async () => {
    const bare = join(root, 'bare-alice.pub');
    await writeFile(bare, parsePublicKeyFile(await readFile(runnerFile, 'utf8'), runnerFile).pem);
    const run = await reviewer('bare');
    const refused = await run(['keys', 'trust', bare]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('bare public key that names no operator');
    expect(refused.stderr).toContain('--name');
    expect(refused.stderr).toContain('--unit');
    expect((await run(['keys', 'list'])).stdout).not.toContain(runnerFp);

    const fromUnit = await run(['keys', 'trust', bare, '--unit', unit]);
    expect(fromUnit.code, fromUnit.stderr).toBe(0);
    expect(fromUnit.stdout).toContain(`trusted ${RUNNER.id} ed25519:${runnerFp}`);
    expect(fromUnit.stdout).toContain("name from the name the unit's signatures give it");

    // a key the unit was not signed with: refused, naming the keys it carries
    const stranger = join(root, 'stranger.pub');
    const s = await operatorKey('stranger');
    await writeFile(stranger, s.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const notIn = await run(['keys', 'trust', stranger, '--unit', unit]);
    expect(notIn.code).toBe(2);
    expect(notIn.stderr).toContain('no valid signature of the unit is made with this key');
    expect(notIn.stderr).toContain(`${RUNNER.id} ed25519:${runnerFp}`);

    const named = await run(['keys', 'trust', bare, '--name', 'carol']);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toMatch(/^trusted carol ed25519:[0-9a-f]{64} \(.*; name from --name\)/);
  });

  it('a file whose fingerprint line is not its key is refused (exit 2), nothing trusted', async () => {
    const edited = join(root, 'edited.pub');
    const text = await readFile(runnerFile, 'utf8');
    await writeFile(edited, text.replace(`ed25519:${runnerFp}`, `ed25519:${reviewerFp}`));
    const run = await reviewer('edited');
    const r = await run(['keys', 'trust', edited]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the file was edited');
    expect((await run(['keys', 'list'])).stdout).not.toContain(runnerFp);
  });

  it('a key trusted under another name: verify says so in words and gives the commands that fix it (exit 5)', async () => {
    const run = await reviewer('renamed');
    const bare = join(root, 'alice-bare.pub');
    await writeFile(bare, parsePublicKeyFile(await readFile(runnerFile, 'utf8'), runnerFile).pem);
    // the old flow: the key trusted under the file's stem
    expect((await run(['keys', 'trust', bare, '--name', 'alice'])).code).toBe(0);
    expect((await run(['keys', 'trust', reviewerFile])).code).toBe(0);
    const v = await run(['campaign', 'verify', unit]);
    expect(v.code).toBe(5);
    expect(v.stdout).toContain('files intact, signers NOT trusted here');
    expect(v.stdout).toMatch(/; 0 errors, 2 signed by keys not trusted here/);
    expect(v.stdout).not.toContain('[error]');
    const line = v.stderr.trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain(
      `${RUNNER.id}'s key ed25519:${runnerFp} (precommit.json, seal.json) is trusted here under another name, 'alice'`,
    );
    expect(line).toContain(`while the unit's signatures name '${RUNNER.id}'`);
    const fix =
      /— trust it under the name it signs with: (?:npx )?imep (keys trust .+) && (?:npx )?imep (keys revoke alice)$/.exec(
        line,
      );
    expect(fix, line).not.toBeNull();
    // the commands, run as printed, fix it
    for (const cmd of [fix![1]!, fix![2]!]) {
      const r = await run(cmd.split(' '));
      expect(r.code, r.stderr).toBe(0);
    }
    const ok = await run(['campaign', 'verify', unit]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('intact and signed by trusted keys');
  });

  it('in a --trusted-keys folder, a bare key under another name: the fix is renaming the file', async () => {
    const ci = join(root, 'ci-renamed');
    await mkdir(ci);
    await writeFile(join(ci, 'alice.pub'), parsePublicKeyFile(await readFile(runnerFile, 'utf8'), runnerFile).pem);
    await writeFile(join(ci, 'bob.pub'), await readFile(reviewerFile));
    const run = await reviewer('ci-renamed');
    const v = await run(['campaign', 'verify', unit, '--trusted-keys', ci]);
    expect(v.code).toBe(5);
    expect(v.stderr).toContain(
      `give the key file the name it signs with: mv ${join(ci, 'alice.pub')} ${join(ci, `${RUNNER.id}.pub`)}`,
    );
  });
});
