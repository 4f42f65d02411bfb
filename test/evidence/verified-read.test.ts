/**
 * Read-twice (TOCTOU) hole: a file swapped between the verification and the consumer's read must be
 * refused (E_UNIT_TAMPERED naming the file), never computed on. The swap is made from the test seam
 * `verifiedReadTestHooks.afterVerify`, i.e. after the unit verified intact and before any input is read.
 */
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { amend, readUnitState, verifyUnit } from '../../src/evidence/index.js';
import { listAdjudicationRecords } from '../../src/evidence/unit-state.js';
import { adjudicateUnit } from '../../src/adjudication/index.js';
import { crossCheckUnit } from '../../src/crosscheck/index.js';
import { loadSealedInputs } from '../../src/adjudication/sealed-inputs.js';
import { readVerified, verifiedReadTestHooks } from '../../src/evidence/io/verified-read.js';
import { loadReportInputs } from '../../src/report/index.js';
import { sha256Hex } from '../../src/core/hash.js';
import { copyUnit, expectImepError, removeTree, tempDir } from './helpers.js';
import { blackoutOutcome, blackoutProtocol, buildSealedUnit, clock, REVIEWER } from '../adjudication/fixtures.js';

let root: string;
let sealed: string;
let adjudicated: string;
/** A unit amended before its seal (sealed prefix) and, adjudicated, once more after it (bound by the chain). */
let amendedSealed: string;
let amendedAdjudicated: string;
beforeAll(async () => {
  root = await tempDir('imep-verified-read-');
  sealed = join(root, 'sealed');
  await buildSealedUnit(sealed, blackoutProtocol(), blackoutOutcome);
  adjudicated = join(root, 'adjudicated');
  await copyUnit(sealed, adjudicated);
  await adjudicateUnit(adjudicated, { operator: REVIEWER, now: clock });
  amendedSealed = join(root, 'amended-sealed');
  await buildSealedUnit(amendedSealed, blackoutProtocol(), blackoutOutcome, { amendBeforeSeal: true });
  amendedAdjudicated = join(root, 'amended-adjudicated');
  await copyUnit(amendedSealed, amendedAdjudicated);
  await adjudicateUnit(amendedAdjudicated, { operator: REVIEWER, now: clock });
  await amend(amendedAdjudicated, {
    text: 'a note after the adjudication',
    affects: ['gates.sham_validity.substitutionFraction.denominator'],
    author: REVIEWER,
    now: clock,
  });
});
afterAll(async () => removeTree(root));
afterEach(() => {
  delete verifiedReadTestHooks.afterVerify;
});

let n = 0;
async function copy(from: string): Promise<string> {
  const dir = join(root, `copy-${n++}`);
  await copyUnit(from, dir);
  return dir;
}

/** Replaces `path` by other bytes with an atomic rename (as an attacker's swap would), keeping the permissions. */
async function swap(dir: string, path: string): Promise<void> {
  const file = join(dir, path);
  const parent = dirname(file);
  const bytes = await readFile(file);
  const text = bytes.toString('utf8');
  const flipped = text.includes('"success":true')
    ? text.replace('"success":true', '"success":false')
    : text.replace('"', '"x');
  await chmod(parent, 0o755);
  await writeFile(`${file}.swap`, flipped);
  await rename(`${file}.swap`, file);
  await chmod(file, 0o444);
  await chmod(parent, 0o555);
}

/** Swaps `path` once, right after the next verification passes. */
function swapAfterVerify(path: string): void {
  verifiedReadTestHooks.afterVerify = async (dir) => {
    delete verifiedReadTestHooks.afterVerify;
    await swap(dir, path);
  };
}

async function refuses(p: Promise<unknown>, dir: string, path: string): Promise<void> {
  const e = await expectImepError(p, 'E_UNIT_TAMPERED');
  expect(e.file).toBe(join(dir, path));
  expect(e.message).toContain(path);
}

describe('a file swapped after verification is refused, not computed on', () => {
  it('readVerified returns the bytes whose SHA-256 it checked, and refuses others naming the file', async () => {
    const dir = await copy(sealed);
    const bytes = await readFile(join(dir, 'rows/rows.jsonl'));
    expect((await readVerified(dir, 'rows/rows.jsonl', sha256Hex(bytes))).equals(bytes)).toBe(true);
    await refuses(readVerified(dir, 'rows/rows.jsonl', sha256Hex('other')), dir, 'rows/rows.jsonl');
    await refuses(readVerified(dir, 'rows/rows.jsonl', undefined), dir, 'rows/rows.jsonl');
  });

  for (const path of ['rows/rows.jsonl', 'protocol.json', 'unit.json', 'precommit.json']) {
    it(`adjudication: ${path}`, async () => {
      const dir = await copy(sealed);
      swapAfterVerify(path);
      await refuses(adjudicateUnit(dir, { operator: REVIEWER, now: clock }), dir, path);
      if (path !== 'unit.json') expect((await readUnitState(dir)).state).toBe('sealed');
      expect((await listAdjudicationRecords(dir)).adjudications).toEqual([]);
      expect((await verifyUnit(dir)).ok).toBe(false); // the swapped bytes stay; a later verify reports them
    });
  }

  it('loading the sealed inputs on its own verifies first and refuses a swapped rows.jsonl', async () => {
    const dir = await copy(sealed);
    swapAfterVerify('rows/rows.jsonl');
    await refuses(loadSealedInputs(dir), dir, 'rows/rows.jsonl');
  });

  for (const path of [
    'rows/rows.jsonl',
    'protocol.json',
    'adjudication/001/adjudication.json',
    'adjudication/adjudication-001.json',
  ]) {
    it(`cross-check: ${path}`, async () => {
      const dir = await copy(adjudicated);
      swapAfterVerify(path);
      await refuses(crossCheckUnit(dir, { operator: REVIEWER, now: clock }), dir, path);
      expect((await listAdjudicationRecords(dir)).crossChecks).toEqual([]);
    });
  }

  for (const path of ['rows/rows.jsonl', 'protocol.json', 'adjudication/001/adjudication.json']) {
    it(`report: ${path}`, async () => {
      const dir = await copy(adjudicated);
      swapAfterVerify(path);
      await refuses(loadReportInputs(dir), dir, path);
    });
  }

  it('the regeneration refuses a swapped rows.jsonl', async () => {
    const dir = await copy(adjudicated);
    swapAfterVerify('rows/rows.jsonl');
    await refuses(adjudicateUnit(dir, { regenerate: true }), dir, 'rows/rows.jsonl');
  });

  it('adjudication: amendments.jsonl (the log is read once against the hash the verification saw)', async () => {
    const dir = await copy(amendedSealed);
    swapAfterVerify('amendments.jsonl');
    await refuses(adjudicateUnit(dir, { operator: REVIEWER, now: clock }), dir, 'amendments.jsonl');
    expect((await readUnitState(dir)).state).toBe('sealed');
    expect((await listAdjudicationRecords(dir)).adjudications).toEqual([]);
  });

  it('adjudication: rows/run.json (the operators who ran the conditions come from the sealed bytes)', async () => {
    const dir = await copy(sealed);
    swapAfterVerify('rows/run.json');
    await refuses(adjudicateUnit(dir, { operator: REVIEWER, now: clock }), dir, 'rows/run.json');
    expect((await readUnitState(dir)).state).toBe('sealed');
    expect((await listAdjudicationRecords(dir)).adjudications).toEqual([]);
    expect((await verifyUnit(dir)).ok).toBe(false);
  });

  it('the regeneration and the report refuse a swapped amendments.jsonl (sealed prefix and post-seal lines)', async () => {
    const dir = await copy(amendedAdjudicated);
    swapAfterVerify('amendments.jsonl');
    await refuses(adjudicateUnit(dir, { regenerate: true }), dir, 'amendments.jsonl');
    expect((await listAdjudicationRecords(dir)).adjudications).toEqual(['adjudication-001.json']);
    const other = await copy(amendedAdjudicated);
    swapAfterVerify('amendments.jsonl');
    await refuses(loadReportInputs(other), other, 'amendments.jsonl');
  });

  it('an intact amended unit reads its log once and still adjudicates, regenerates and reports', async () => {
    const dir = await copy(amendedSealed);
    let calls = 0;
    verifiedReadTestHooks.afterVerify = () => {
      calls++;
    };
    const a = await adjudicateUnit(dir, { operator: REVIEWER, now: clock });
    expect(a.adjudication.amendments.log.map((x) => x.id)).toEqual(['A1']);
    await amend(dir, {
      text: 'a note after the adjudication',
      affects: ['gates.sham_validity.substitutionFraction.denominator'],
      author: REVIEWER,
      now: clock,
    });
    expect((await adjudicateUnit(dir, { regenerate: true })).text).toBe(a.text);
    expect((await loadReportInputs(dir)).laterAmendments.map((x) => x.id)).toEqual(['A2']);
    expect(calls).toBeGreaterThan(0);
  });

  it('an intact unit still adjudicates, cross-checks and reports (the hook without a swap changes nothing)', async () => {
    const dir = await copy(sealed);
    let calls = 0;
    verifiedReadTestHooks.afterVerify = () => {
      calls++;
    };
    const a = await adjudicateUnit(dir, { operator: REVIEWER, now: clock });
    expect((await adjudicateUnit(dir, { regenerate: true })).text).toBe(a.text);
    expect((await crossCheckUnit(dir, { operator: REVIEWER, now: clock })).outcome).toBe('agrees');
    expect((await loadReportInputs(dir)).adjudication.unit).toEqual(a.adjudication.unit);
    expect(calls).toBeGreaterThan(0);
  });
});
