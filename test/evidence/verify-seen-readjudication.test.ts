/**
 * The seen store (src/evidence/seen-store.ts) and a re-adjudication: adjudicate runs again from the adjudicated
 * state and writes adjudication-002, the stage ('adjudicated') and the root (the seal's) unchanged. A machine that
 * verified the unit with adjudication 002 refuses it with 002 deleted (exit 7), and likewise a post-seal amendment
 * deleted; a machine that never saw them verifies the rolled-back unit (exit 0). Each machine is a fresh HOME.
 */
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicate, amend } from '../../src/evidence/index.js';
import { imep } from '../campaign/cli-support.js';
import { isolateKeys } from '../signing/helpers.js';
import { buildUnit, clock, copyUnit, removeTree, REVIEWER, RUNNER, tempDir } from './helpers.js';

let root: string;
let keys: { dir: string; restore: () => void };
let twice: string;
let once: string;
let homes = 0;

async function freshHome(): Promise<string> {
  const home = join(root, `home-${++homes}`);
  await mkdir(home, { recursive: true });
  return home;
}

const verify = (dir: string, home: string, ...more: string[]) =>
  imep(['campaign', 'verify', dir, ...more], root, undefined, { HOME: home, IMEP_SEEN_DIR: '' });

const adjudicateOnce = (dir: string, c: number) =>
  adjudicate(dir, {
    adjudicator: { name: 'frozen-adjudicator', version: 1 },
    result: { verdict: 'not detected', b: 1, c },
    artifacts: {},
    operator: REVIEWER,
    now: clock,
  });

beforeAll(async () => {
  keys = await isolateKeys();
  root = await tempDir('imep-seen-readj-');
  twice = join(root, 'twice');
  await buildUnit(twice, 'sealed');
  await adjudicateOnce(twice, 0);
  once = join(root, 'once');
  await copyUnit(twice, once);
  await adjudicateOnce(twice, 1);
});
afterAll(async () => {
  keys.restore();
  await removeTree(root);
  await removeTree(join(keys.dir, '..'));
});

describe('a rollback of a re-adjudication or of an amendment is refused where the later one was seen (exit 7)', () => {
  it('adjudication 002 deleted: exit 7 naming adjudication 002 after it was seen; exit 0 on a fresh machine', async () => {
    // the rollback: adjudication 002's record and artifacts removed, consistently (the unit is intact without them)
    const rolled = join(root, 'rolled-readj');
    await copyUnit(twice, rolled);
    await chmod(join(rolled, 'adjudication'), 0o755);
    await rm(join(rolled, 'adjudication', 'adjudication-002.json'));
    await rm(join(rolled, 'adjudication', '002'), { recursive: true, force: true });

    const fresh = await verify(rolled, await freshHome());
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain('verified to stage: adjudicated (not closed out)');

    const home = await freshHome();
    const seen = await verify(twice, home);
    expect(seen.code, seen.stderr).toBe(0);
    const v = await verify(rolled, home);
    expect(v.code, `${v.stdout}${v.stderr}`).toBe(7);
    const lines = v.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /this machine saw it at stage 'adjudicated' \(root [0-9a-f]{12}…, seal root [0-9a-f]{12}…, adjudication 002 [0-9a-f]{12}…, \d+ amendments?\) on .* \(verify\), and it now shows stage 'adjudicated' \(.*adjudication 001 /,
    );
    // moving forward again is no rollback
    expect((await verify(twice, home)).code).toBe(0);
  });

  it('adjudication 002 replaced by other bytes at the same number: exit 7', async () => {
    const home = await freshHome();
    expect((await verify(twice, home)).code).toBe(0);
    // the same seal and adjudication 001, then another adjudication 002 (another result)
    const other = join(root, 'other-002');
    await copyUnit(once, other);
    await adjudicateOnce(other, 2);
    const fresh = await verify(other, await freshHome());
    expect(fresh.code, fresh.stderr).toBe(0);
    const v = await verify(other, home);
    expect(v.code, `${v.stdout}${v.stderr}`).toBe(7);
    expect(v.stderr).toMatch(
      /adjudication 002 ([0-9a-f]{12})….* and it now shows .*adjudication 002 (?!\1)[0-9a-f]{12}…/,
    );
  });

  it('a post-seal amendment deleted: exit 7 after it was seen; exit 0 on a fresh machine', async () => {
    const unit = join(root, 'amended');
    await buildUnit(unit, 'sealed');
    await adjudicateOnce(unit, 0);
    const before = await readFile(join(unit, 'amendments.jsonl'), 'utf8').catch(() => '');
    await amend(unit, { text: 'note after adjudication', affects: ['protocol'], author: RUNNER, now: clock });
    const rolled = join(root, 'rolled-amend');
    await copyUnit(unit, rolled);
    await chmod(rolled, 0o755);
    await chmod(join(rolled, 'amendments.jsonl'), 0o644).catch(() => undefined);
    await writeFile(join(rolled, 'amendments.jsonl'), before);
    if (before === '') await rm(join(rolled, 'amendments.jsonl'));

    const fresh = await verify(rolled, await freshHome());
    expect(fresh.code, fresh.stderr).toBe(0);
    const home = await freshHome();
    expect((await verify(unit, home)).code).toBe(0);
    const v = await verify(rolled, home);
    expect(v.code, `${v.stdout}${v.stderr}`).toBe(7);
    expect(v.stderr).toMatch(/amendments?\) on .* \(verify\), and it now shows stage 'adjudicated'/);
  });
});
