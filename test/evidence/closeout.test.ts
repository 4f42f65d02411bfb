import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adjudicate,
  amend,
  closeout,
  createUnit,
  crossCheck,
  merkleRoot,
  readSeal,
  startSmallRun,
  verifyUnit,
  type CloseoutRecord,
} from '../../src/evidence/index.js';
import {
  buildUnit,
  clock,
  copyUnit,
  expectImepError,
  PLANNED_ROWS,
  precommitInput,
  removeTree,
  REVIEWER,
  row,
  RUNNER,
  tempDir,
} from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-closeout-');
});
afterAll(async () => removeTree(root));

describe('closeout', () => {
  it('runs the whole sequence through typed handles; the closeout binds seal, amendments and adjudication', async () => {
    const dir = join(root, 'full');
    const created = await createUnit(dir, { id: 'R27-A', operator: RUNNER, now: clock });
    const pre = await created.precommit(precommitInput());
    await pre.amend({
      text: 'clarify success: any touch of the correct cup',
      affects: ['criterion'],
      author: RUNNER,
      now: clock,
    });
    const probe = await pre.probe({ runId: 'probe-1', operator: RUNNER, now: clock });
    await probe.appendRow(row(0));
    const open = await pre.startRun({ runId: 'formal-1', operator: RUNNER, now: clock });
    for (let i = 0; i < PLANNED_ROWS; i++) await open.appendRow(row(i));
    const complete = await open.complete();
    const sealed = await complete.seal({ operator: RUNNER, now: clock });
    // a stale handle on the run cannot append to the sealed unit
    const stale = await expectImepError(open.appendRow(row(PLANNED_ROWS)), 'E_UNIT_SEALED');
    expect(stale.message).toContain('a sealed unit cannot be appended to');
    await sealed.amend({
      text: 'denominator: reads that carry history',
      affects: ['gates.shamValidity.denominator'],
      author: REVIEWER,
      now: clock,
    });
    const adjudicated = await sealed.adjudicate({
      adjudicator: { name: 'adj', version: 1 },
      result: { verdict: 'holds' },
      operator: REVIEWER,
      now: clock,
    });
    const checked = await adjudicated.crossCheck({
      outcome: 'agrees',
      method: 'rerun on a second machine from verified sealed inputs',
      operator: REVIEWER,
      now: clock,
    });
    const closed = await checked.closeout({ operator: REVIEWER, now: clock, notes: 'all gates passed' });
    expect(closed.state).toBe('closed');

    const record = JSON.parse(await readFile(join(dir, 'closeout.json'), 'utf8')) as CloseoutRecord;
    expect(record.files.map((f) => f.path)).toEqual([
      'adjudication/adjudication-001.json',
      'adjudication/cross-check-001.json',
      'amendments.jsonl',
      'seal.json',
    ]);
    expect(record.merkle.root).toBe(merkleRoot(record.files));
    expect(record.sealRoot).toBe((await readSeal(dir)).merkle.root);
    expect(record.amendments.map((a) => [a.id, a.classification])).toEqual([
      ['A1', 'before-data'],
      ['A2', 'after-formal-data'],
    ]);
    expect(record.crossCheck).toEqual({ file: 'cross-check-001.json', outcome: 'agrees' });
    const v = await closed.verify({ expectedRoot: record.merkle.root });
    expect(v.ok && v.scope).toBe('closeout');
    expect(v.ok && v.pending).toEqual([]);
  });

  it('after closeout every write API refuses with E_UNIT_SEALED', async () => {
    const dir = join(root, 'closed');
    await buildUnit(dir, 'closed', { rich: true });
    const attempts: [string, () => Promise<unknown>][] = [
      ['amend', () => amend(dir, { text: 'late', affects: ['x'], author: REVIEWER })],
      ['adjudicate', () => adjudicate(dir, { adjudicator: 'a', result: null, operator: REVIEWER })],
      ['cross-check', () => crossCheck(dir, { outcome: 'agrees', method: 'm', operator: REVIEWER })],
      ['closeout', () => closeout(dir, { operator: REVIEWER })],
      ['probe', () => startSmallRun(dir, 'probe', { operator: RUNNER })],
    ];
    for (const [name, p] of attempts) {
      const err = await expectImepError(p(), 'E_UNIT_SEALED');
      expect(err.message, name).toContain('nothing can be added after closeout');
    }
    expect((await verifyUnit(dir)).ok).toBe(true);
  });

  it('closeout refuses a tampered unit, naming the file', async () => {
    const base = join(root, 'checked');
    await buildUnit(base, 'cross-checked');
    const dir = join(root, 'checked-tampered');
    await copyUnit(base, dir);
    await appendFile(join(dir, 'rows/rows.jsonl'), JSON.stringify(row(9)) + '\n');
    const err = await expectImepError(closeout(dir, { operator: REVIEWER }), 'E_UNIT_TAMPERED');
    expect(err.file).toBe(join(dir, 'rows/rows.jsonl'));
    expect(err.message).toMatch(/^appended/);
  });

  it('adjudication and cross-check verify the sealed inputs first', async () => {
    const base = join(root, 'sealed');
    await buildUnit(base, 'sealed');
    await appendFile(join(base, 'plan.json'), ' ');
    const err = await expectImepError(
      adjudicate(base, { adjudicator: 'a', result: null, operator: REVIEWER }),
      'E_UNIT_TAMPERED',
    );
    expect(err.file).toBe(join(base, 'plan.json'));
  });
});
