/**
 * Issue #32 item 8: a machine that saw a unit at a stage remembers it (src/evidence/seen-store.ts) and refuses a later
 * rollback with its own exit code (7), one line saying what it saw, when, and how to proceed. The three rollbacks of
 * the issue — closeout.json deleted; the sealed-stage files restored; the adjudicated-stage files restored — each
 * verify "intact" by default on a machine that never saw the later stage (the lower stage printed), and are refused
 * on one that did. Each machine is a fresh HOME (the store lives in ~/.imep/seen).
 */
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adjudicate,
  closeout,
  crossCheck,
  readSeen,
  rememberSeen,
  rollbackOf,
  SEEN_FORMAT,
  SEEN_VERSION,
  type SeenState,
} from '../../src/evidence/index.js';
import { isImepError } from '../../src/core/errors.js';
import { imep } from '../campaign/cli-support.js';
import { isolateKeys } from '../signing/helpers.js';
import { buildUnit, clock, copyUnit, removeTree, REVIEWER, tempDir } from './helpers.js';

let root: string;
let keys: { dir: string; restore: () => void };
let unit: string;
let sealedCopy: string;
let adjudicatedCopy: string;
let homes = 0;

/** A fresh machine: its own HOME, no IMEP_SEEN_DIR (so the store is HOME/.imep/seen). */
async function freshHome(): Promise<string> {
  const home = join(root, `home-${++homes}`);
  await mkdir(home, { recursive: true });
  return home;
}

const verify = (dir: string, home: string, ...more: string[]) =>
  imep(['campaign', 'verify', dir, ...more], root, undefined, { HOME: home, IMEP_SEEN_DIR: '' });

async function writable(dir: string): Promise<void> {
  await chmod(dir, 0o755);
}

beforeAll(async () => {
  keys = await isolateKeys();
  root = await tempDir('imep-seen-');
  unit = join(root, 'unit');
  await buildUnit(unit, 'sealed');
  sealedCopy = join(root, 'sealed-stage');
  await copyUnit(unit, sealedCopy);
  await adjudicate(unit, {
    adjudicator: { name: 'frozen-adjudicator', version: 1 },
    result: { verdict: 'not detected', b: 1, c: 0 },
    artifacts: {},
    operator: REVIEWER,
    now: clock,
  });
  adjudicatedCopy = join(root, 'adjudicated-stage');
  await copyUnit(unit, adjudicatedCopy);
  await crossCheck(unit, { outcome: 'agrees', method: 'rerun', operator: REVIEWER, now: clock });
  await closeout(unit, { operator: REVIEWER, now: clock, notes: 'closed in test' });
});
afterAll(async () => {
  keys.restore();
  await removeTree(root);
  await removeTree(join(keys.dir, '..'));
});

/** The three rollbacks of the issue, each a folder holding the unit as a rollback leaves it. */
async function rollbacks(): Promise<Array<{ name: string; dir: string; stage: string }>> {
  const noCloseout = join(root, `no-closeout-${homes}`);
  await copyUnit(unit, noCloseout);
  await writable(noCloseout);
  await rm(join(noCloseout, 'closeout.json'));
  return [
    { name: 'closeout.json deleted', dir: noCloseout, stage: 'adjudicated (not closed out)' },
    { name: 'sealed-stage files restored', dir: sealedCopy, stage: 'sealed (not adjudicated)' },
    { name: 'adjudicated-stage files restored', dir: adjudicatedCopy, stage: 'adjudicated (not closed out)' },
  ];
}

describe('a machine remembers the stage it saw a unit at and refuses a rollback (exit 7)', () => {
  it('a fresh machine that never saw the later stage verifies each rollback (exit 0, the lower stage printed)', async () => {
    for (const r of await rollbacks()) {
      const v = await verify(r.dir, await freshHome());
      expect(v.code, `${r.name}: ${v.stderr}`).toBe(0);
      expect(v.stdout).toContain(`verified to stage: ${r.stage}`);
    }
  });

  it('after verifying the closed unit, each rollback is refused with exit 7 and one line naming what was seen', async () => {
    for (const r of await rollbacks()) {
      const home = await freshHome();
      const seen = await verify(unit, home);
      expect(seen.code, seen.stderr).toBe(0);
      expect(seen.stdout).toContain('verified to stage: closed out');
      const v = await verify(r.dir, home);
      expect(v.code, `${r.name}: ${v.stdout}${v.stderr}`).toBe(7);
      const lines = v.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /unit unit-under-test was rolled back: this machine saw it at stage 'closed' \(root [0-9a-f]{12}…, seal root [0-9a-f]{12}…, adjudication 001 [0-9a-f]{12}…, 0 amendments\) on \d{4}-\d\d-\d\dT[\d:.]+Z \(verify\), and it now shows stage '(sealed|adjudicated)'/,
      );
      expect(lines[0]).toContain(join(home, '.imep', 'seen'));
      expect(lines[0]).toContain('--accept-rollback');
      // the same refusal whatever else the reviewer asks for
      expect((await verify(r.dir, home, '--require-signatures')).code).toBe(7);
    }
  });

  it('having seen the adjudicated stage refuses the sealed-stage files; the later stage itself still verifies', async () => {
    const home = await freshHome();
    expect((await verify(adjudicatedCopy, home)).code).toBe(0);
    expect((await verify(sealedCopy, home)).code).toBe(7);
    expect((await verify(unit, home)).code).toBe(0); // moving forward is no rollback
    expect((await verify(adjudicatedCopy, home)).code).toBe(7);
  });

  it('--accept-rollback records the intended rollback as the new baseline', async () => {
    const home = await freshHome();
    expect((await verify(unit, home)).code).toBe(0);
    const accepted = await verify(sealedCopy, home, '--accept-rollback');
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain('warning: rollback accepted and recorded in');
    expect((await verify(sealedCopy, home)).code).toBe(0);
    const store = join(home, '.imep', 'seen');
    const { readdir } = await import('node:fs/promises');
    const [file] = await readdir(store);
    const lines = (await readFile(join(store, file!), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l: { event: string; stage: string }) => `${l.event}:${l.stage}`)).toEqual([
      'verify:closed',
      'accept-rollback:sealed',
    ]);
    expect(lines[0]).toMatchObject({ format: SEEN_FORMAT, version: SEEN_VERSION, unitId: 'unit-under-test' });
  });

  it('a machine that closed the unit out itself (it never verified it) refuses the adjudicated-stage files', async () => {
    const home = await freshHome();
    const own = join(root, 'own');
    await buildUnit(own, 'cross-checked');
    const before = join(root, 'own-adjudicated');
    await copyUnit(own, before);
    const closed = await imep(['campaign', 'closeout', own], root, undefined, { HOME: home, IMEP_SEEN_DIR: '' });
    expect(closed.code, closed.stderr).toBe(0);
    const v = await verify(before, home);
    expect(v.code, v.stderr).toBe(7);
    expect(v.stderr).toMatch(
      /this machine saw it at stage 'closed' .* \(closeout\), and it now shows stage 'adjudicated'/,
    );
    // and closing out the restored copy again is refused before anything is written
    const again = await imep(['campaign', 'closeout', before], root, undefined, { HOME: home, IMEP_SEEN_DIR: '' });
    expect(again.code).toBe(7);
    expect(await readFile(join(before, 'closeout.json')).catch(() => null)).toBeNull();
  });

  it('a damaged store refuses (exit 2) naming the file, rather than forgetting what it saw', async () => {
    const home = await freshHome();
    expect((await verify(unit, home)).code).toBe(0);
    const store = join(home, '.imep', 'seen');
    const { readdir } = await import('node:fs/promises');
    const [file] = await readdir(store);
    await writeFile(join(store, file!), '{"format":"something-else"}\n');
    const v = await verify(sealedCopy, home);
    expect(v.code).toBe(2);
    expect(v.stderr).toContain(join(store, file!));
    expect(v.stderr).toContain('line 1 is not a imep-seen v1 or v2 record of this unit');
  });
});

describe('rollbackOf: a lower stage, another seal root, another closeout root', () => {
  const base: SeenState = {
    unitId: 'u',
    precommitSha256: 'a'.repeat(64),
    stage: 'closed',
    root: 'c'.repeat(64),
    sealRoot: 'b'.repeat(64),
    adjudication: { n: 2, sha256: '2'.repeat(64) },
    amendments: 3,
  };
  it('refuses each, and nothing else', async () => {
    const dir = await tempDir('imep-seen-store-');
    await rememberSeen(base, { event: 'verify', dir: 'x' }, dir);
    const lines = await readSeen(base, dir);
    expect(rollbackOf(lines, base)).toBeNull();
    expect(rollbackOf(lines, { ...base, stage: 'adjudicated', root: base.sealRoot })?.stage).toBe('closed');
    expect(rollbackOf(lines, { ...base, root: 'd'.repeat(64) })?.root).toBe(base.root);
    expect(rollbackOf(lines, { ...base, sealRoot: 'e'.repeat(64) })).not.toBeNull();
    try {
      await rememberSeen({ ...base, stage: 'sealed', root: base.sealRoot }, { event: 'verify', dir: 'x' }, dir);
      expect.unreachable();
    } catch (e) {
      expect(isImepError(e) && e.code).toBe('E_ROLLBACK');
    }
    // a lower adjudication number, other bytes at the same number, none, or fewer amendments
    expect(rollbackOf(lines, { ...base, adjudication: { n: 1, sha256: '2'.repeat(64) } })).not.toBeNull();
    expect(rollbackOf(lines, { ...base, adjudication: { n: 2, sha256: '3'.repeat(64) } })).not.toBeNull();
    expect(rollbackOf(lines, { ...base, adjudication: null })).not.toBeNull();
    expect(rollbackOf(lines, { ...base, amendments: 2 })).not.toBeNull();
    expect(rollbackOf(lines, { ...base, adjudication: { n: 3, sha256: '3'.repeat(64) }, amendments: 4 })).toBeNull();
    // another precommit is another unit instance (a re-run): not a rollback
    expect(await readSeen({ ...base, precommitSha256: 'f'.repeat(64) }, dir)).toEqual([]);
    await removeTree(dir);
  });

  it('reads a version 1 store (stage and roots only) and appends version 2 lines to it', async () => {
    const dir = await tempDir('imep-seen-store-v1-');
    const { seenFile } = await import('../../src/evidence/index.js');
    const v1 = {
      format: SEEN_FORMAT,
      version: 1,
      unitId: base.unitId,
      precommitSha256: base.precommitSha256,
      stage: 'adjudicated',
      root: base.sealRoot,
      sealRoot: base.sealRoot,
      at: '2026-12-05T07:00:00.000Z',
      event: 'verify',
      dir: 'x',
    };
    await writeFile(seenFile(base, dir), `${JSON.stringify(v1)}\n`);
    const old = await readSeen(base, dir);
    expect(old).toHaveLength(1);
    const adjudicated = { ...base, stage: 'adjudicated' as const, root: base.sealRoot };
    // a v1 line knows no adjudication number: none is compared against it
    expect(
      rollbackOf(old, { ...adjudicated, adjudication: { n: 1, sha256: '1'.repeat(64) }, amendments: 0 }),
    ).toBeNull();
    expect(rollbackOf(old, { ...base, stage: 'sealed', root: base.sealRoot, adjudication: null })?.version).toBe(1);
    await rememberSeen(adjudicated, { event: 'verify', dir: 'x' }, dir);
    const both = await readSeen(base, dir);
    expect(both.map((l) => l.version)).toEqual([1, SEEN_VERSION]);
    expect(rollbackOf(both, { ...adjudicated, adjudication: { n: 1, sha256: '2'.repeat(64) } })?.version).toBe(2);
    await removeTree(dir);
  });
});
