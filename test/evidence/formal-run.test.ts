import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completeRun,
  failRun,
  loadUnit,
  readRunRecord,
  readUnitState,
  resumeRun,
  startRun,
  startSmallRun,
  unitPaths,
} from '../../src/evidence/index.js';
import {
  buildUnit,
  clock,
  exists,
  expectImepError,
  PLANNED_ROWS,
  removeTree,
  row,
  RUNNER,
  REVIEWER,
  tempDir,
} from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-run-');
});
afterAll(async () => removeTree(root));

async function runAll(dir: string, from: number, to: number, append: (seq: number) => Promise<void>): Promise<void> {
  for (let i = from; i < to; i++) await append(i);
}

describe('formal run', () => {
  it('interrupted + resumed rows are byte-identical to an uninterrupted run', async () => {
    const a = join(root, 'straight');
    const b = join(root, 'interrupted');
    await buildUnit(a, 'precommitted');
    await buildUnit(b, 'precommitted');

    const ra = await startRun(a, { runId: 'formal-1', operator: RUNNER });
    await runAll(a, 0, PLANNED_ROWS, async (i) => {
      await ra.appendTrace('reads', { seq: i, n: i });
      await ra.appendRow(row(i));
      await ra.appendTiming({ seq: i, wallMs: Math.random() });
    });

    const rb = await startRun(b, { runId: 'formal-1', operator: RUNNER });
    await runAll(b, 0, 2, async (i) => {
      await rb.appendTrace('reads', { seq: i, n: i });
      await rb.appendRow(row(i));
      await rb.appendTiming({ seq: i, wallMs: Math.random() });
    });
    // crash while running seq 2: its trace line was written, the row append was torn
    await rb.appendTrace('reads', { seq: 2, n: 2 });
    await appendFile(unitPaths(b).rows, '{"condition":"A","dig');

    const state = await loadUnit(b);
    expect(state.state).toBe('running');
    const { run, report } = await resumeRun(b, { operator: REVIEWER, now: clock });
    expect(report.nextSeq).toBe(2);
    expect(report.tornRow?.bytes).toBe(21);
    expect(report.droppedSideLines).toBe(1);
    await runAll(b, 2, PLANNED_ROWS, async (i) => {
      await run.appendTrace('reads', { seq: i, n: i });
      await run.appendRow(row(i));
      await run.appendTiming({ seq: i, wallMs: Math.random() });
    });

    expect(await readFile(unitPaths(b).rows)).toEqual(await readFile(unitPaths(a).rows));
    expect(await readFile(join(unitPaths(b).tracesDir, 'reads.jsonl'))).toEqual(
      await readFile(join(unitPaths(a).tracesDir, 'reads.jsonl')),
    );
    expect(await readFile(unitPaths(b).timings)).not.toEqual(await readFile(unitPaths(a).timings)); // timings live apart: they differ
    const rec = await readRunRecord(b);
    expect(rec.sessions.map((s) => [s.action, s.operator.id, s.resumedAtSeq])).toEqual([
      ['start', 'runner-session', null],
      ['resume', 'review-session', 2],
    ]);
    await completeRun(b);
    expect((await readUnitState(b)).state).toBe('run-complete');
  });

  it('rows must arrive in seq order', async () => {
    const d = join(root, 'order');
    await buildUnit(d, 'precommitted');
    const r = await startRun(d, { operator: RUNNER });
    await r.appendRow(row(0));
    const err = await expectImepError(r.appendRow(row(2)), 'E_OUT_OF_ORDER');
    expect(err.message).toBe('row seq 2 arrived but the next row is seq 1');
    await expectImepError(r.appendRow(row(0)), 'E_OUT_OF_ORDER');
    await expectImepError(r.appendTiming({ seq: 5 }), 'E_OUT_OF_ORDER');
  });

  it('a failed run is renamed into failed-runs/<runId>/, not deleted, and a new run can start', async () => {
    const d = join(root, 'failed');
    await buildUnit(d, 'precommitted');
    const r = await startRun(d, { runId: 'formal-bad', operator: RUNNER });
    await r.appendTrace('reads', { seq: 0 });
    await r.appendRow(row(0));
    const target = await failRun(d, { reason: 'bridge wiring invalid', operator: RUNNER, now: clock });
    expect(target).toBe(join(d, 'failed-runs', 'formal-bad'));
    expect((await readFile(join(target, 'rows', 'rows.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(1);
    expect(await exists(join(target, 'traces', 'reads.jsonl'))).toBe(true);
    expect(JSON.parse(await readFile(join(target, 'failure.json'), 'utf8'))).toMatchObject({
      reason: 'bridge wiring invalid',
      rowsDone: 1,
    });
    expect((await readUnitState(d)).state).toBe('precommitted');
    expect(await readdir(join(d, 'rows'))).toEqual([]);
    // the old handle cannot write any more
    await expectImepError(r.appendRow(row(1)), 'E_OUT_OF_ORDER');
    const again = await startRun(d, { runId: 'formal-good', operator: RUNNER });
    await again.appendRow(row(0));
    expect((await readUnitState(d)).header.spec?.runId).toBe('formal-good');
  });

  it('probe and smoke runs are stored apart and never count as formal rows', async () => {
    const d = join(root, 'small');
    await buildUnit(d, 'precommitted');
    const p = await startSmallRun(d, 'probe', { runId: 'p1', operator: RUNNER });
    await p.appendRow(row(0));
    const s = await startSmallRun(d, 'smoke', { runId: 's1', operator: RUNNER, label: 'wiring smoke' });
    await s.appendRow(row(0));
    await s.appendRow(row(1));
    expect((await s.finish(clock)).rowsDone).toBe(2);
    expect(await exists(join(d, 'probe', 'p1', 'rows.jsonl'))).toBe(true);
    expect(await exists(join(d, 'smoke', 's1', 'rows.jsonl'))).toBe(true);
    expect(await exists(unitPaths(d).rows)).toBe(false);
    await expectImepError(startSmallRun(d, 'smoke', { runId: 's1', operator: RUNNER }), 'E_IO');
    await startRun(d, { operator: RUNNER });
    await expectImepError(p.appendRow(row(1)), 'E_OUT_OF_ORDER'); // small runs only while precommitted
  });
});
