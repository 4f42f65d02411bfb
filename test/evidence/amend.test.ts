import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  amend,
  classifyAmendment,
  readAmendments,
  startRun,
  startSmallRun,
  unitPaths,
  unitStatus,
  verifyUnit,
  type AmendInput,
} from '../../src/evidence/index.js';
import { buildUnit, expectImepError, removeTree, REVIEWER, row, RUNNER, tempDir } from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-amend-');
});
afterAll(async () => removeTree(root));

const note = (text: string): AmendInput => ({ text, affects: ['gates.shamValidity'], author: RUNNER });

describe('amendments', () => {
  it('are classified from the unit at the time, never by the user', async () => {
    const dir = join(root, 'classes');
    await buildUnit(dir, 'precommitted');
    const protocolBefore = await readFile(unitPaths(dir).protocol);
    expect((await amend(dir, note('before any data'))).classification).toBe('before-data');
    const probe = await startSmallRun(dir, 'probe', { operator: RUNNER });
    await probe.appendRow(row(0));
    expect((await amend(dir, note('after the probe'))).classification).toBe('after-smoke');
    const run = await startRun(dir, { operator: RUNNER });
    expect((await amend(dir, note('at launch, no formal row yet'))).classification).toBe('after-smoke');
    await run.appendRow(row(0));
    expect((await amend(dir, note('during the run'))).classification).toBe('after-formal-data');
    const log = await readAmendments(dir);
    expect(log.amendments.map((a) => [a.id, a.stateAtAmendment])).toEqual([
      ['A1', 'precommitted'],
      ['A2', 'precommitted'],
      ['A3', 'running'],
      ['A4', 'running'],
    ]);
    expect(await readFile(unitPaths(dir).protocol)).toEqual(protocolBefore); // never changes protocol.json
    // @ts-expect-error the classification cannot be chosen
    const chosen: AmendInput = { text: 'x', affects: ['y'], classification: 'before-data' };
    expect(chosen).toBeDefined();
  });

  it('classifyAmendment covers every state', () => {
    expect(classifyAmendment('precommitted', false, 0)).toBe('before-data');
    expect(classifyAmendment('precommitted', false, 2)).toBe('after-smoke');
    expect(classifyAmendment('precommitted', true, 0)).toBe('after-formal-data'); // a failed run existed
    expect(classifyAmendment('sealed', false, 0)).toBe('after-formal-data');
    expect(classifyAmendment('cross-checked', true, 1)).toBe('after-formal-data');
  });

  it('a failed formal run makes later amendments after-formal-data', async () => {
    const dir = join(root, 'failed');
    await buildUnit(dir, 'precommitted', { rich: true }); // includes a failed formal run
    expect((await amend(dir, note('after a failed run'))).classification).toBe('after-formal-data');
  });

  it('after the seal: extends the hash chain, the unit still verifies, and status lists every amendment', async () => {
    const dir = join(root, 'sealed');
    await buildUnit(dir, 'sealed', { rich: true });
    const a = await amend(dir, {
      text: 'post-data change of the denominator',
      affects: ['gates.shamValidity.denominator'],
      author: REVIEWER,
    });
    expect(a).toMatchObject({ id: 'A2', classification: 'after-formal-data', stateAtAmendment: 'sealed' });
    const v = await verifyUnit(dir);
    expect(v.ok && v.pending).toEqual(['amendments.jsonl']);
    const s = await unitStatus(dir);
    expect(s.amendments.map((x) => `${x.id}:${x.classification}`)).toEqual(['A1:after-smoke', 'A2:after-formal-data']);
  });

  it('an edited amendment breaks the chain (E_UNIT_TAMPERED naming the file and line)', async () => {
    const dir = join(root, 'edited');
    await buildUnit(dir, 'precommitted');
    await amend(dir, note('one'));
    await amend(dir, note('two'));
    const file = unitPaths(dir).amendments;
    await writeFile(file, (await readFile(file, 'utf8')).replace('"one"', '"uno"'));
    const err = await expectImepError(readAmendments(dir), 'E_UNIT_TAMPERED');
    expect(err.file).toBe(file);
    expect(err.message).toContain('amendment line 2 breaks the hash chain');
  });

  it('refuses before precommit and empty input', async () => {
    const dir = join(root, 'created');
    await buildUnit(dir, 'created');
    await expectImepError(amend(dir, note('too early')), 'E_OUT_OF_ORDER');
    const pre = join(root, 'pre');
    await buildUnit(pre, 'precommitted');
    await expectImepError(amend(pre, { text: ' ', affects: ['x'] }), 'E_USAGE');
    await expectImepError(amend(pre, { text: 'x', affects: [] }), 'E_USAGE');
  });
});
