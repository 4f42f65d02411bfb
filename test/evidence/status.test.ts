import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatStatus, startRun, unitPaths, unitStatus } from '../../src/evidence/index.js';
import { buildUnit, removeTree, row, RUNNER, tempDir } from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-status-');
});
afterAll(async () => removeTree(root));

describe('campaign status', () => {
  it('summarises a running unit: rows done/planned, failures, torn tail, small and failed runs', async () => {
    const dir = join(root, 'running');
    await buildUnit(dir, 'precommitted', { rich: true });
    const run = await startRun(dir, { runId: 'formal-2', operator: RUNNER });
    // rows v1 say how an episode ended in `status` (episode-row.ts); a `failure` explains a non-ok one
    await run.appendRow({ ...row(0), status: 'ok', failure: null });
    await run.appendRow({
      ...row(1),
      status: 'failed',
      failure: { code: 'E_BRIDGE_TIMEOUT', message: 'simulator timeout' },
    });
    await run.appendRow({
      ...row(2),
      status: 'removed',
      failure: { code: 'E_DONOR_SHORT', message: 'donor holds fewer records' },
    });
    await appendFile(unitPaths(dir).rows, '{"seq":3');
    const s = await unitStatus(dir);
    expect(s).toMatchObject({
      state: 'running',
      next: 'imep campaign resume',
      runId: 'formal-2',
      ranBy: ['runner-session'],
      rows: { done: 3, planned: 4, failed: 1, removed: 1, unavailable: 0, tornTail: true },
      failedRuns: ['formal-failed'],
      smokes: ['smoke-1'],
      integrity: null,
    });
    expect(s.amendments).toHaveLength(1);
    const text = formatStatus(s);
    expect(text).toContain('rows 3/4 done, 1 failed, 1 removed, 0 unavailable, torn final line');
    expect(text).toContain('A1 [after-smoke]');
  });

  it('summarises a closed unit with integrity, adjudication and cross-check', async () => {
    const dir = join(root, 'closed');
    await buildUnit(dir, 'closed', { rich: true });
    const s = await unitStatus(dir);
    expect(s).toMatchObject({
      state: 'closed',
      closed: true,
      rows: { done: 4, planned: 4, failed: 0, removed: 0, unavailable: 0, tornTail: false },
      adjudication: { count: 1, operator: 'review-session', override: null },
      crossCheck: { outcome: 'agrees' },
      problems: [],
    });
    expect(s.integrity?.ok && s.integrity.scope).toBe('closeout');
    expect(formatStatus(s)).toContain('integrity OK (closeout root');
  });

  it('counts rows by execution status: failed, removed and unavailable apart; ok rows and rows without a status are not counted', async () => {
    const dir = join(root, 'statuses');
    await buildUnit(dir, 'precommitted');
    const run = await startRun(dir, { runId: 'formal-3', operator: RUNNER });
    await run.appendRow({
      ...row(0),
      status: 'unavailable',
      failure: { code: 'E_CONFORMANCE', message: 'condition unavailable' },
    });
    await run.appendRow({ ...row(1), status: 'ok', failure: null });
    await run.appendRow(row(2));
    await run.appendRow({
      ...row(3),
      status: 'failed',
      failure: { code: 'E_SIM_UNAVAILABLE', message: 'reset failed' },
    });
    await run.close();
    const s = await unitStatus(dir);
    expect(s.rows).toEqual({ done: 4, planned: 4, failed: 1, removed: 0, unavailable: 1, tornTail: false });
  });
});
