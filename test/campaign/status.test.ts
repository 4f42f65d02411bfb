import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatStatus, startRun, unitPaths, unitStatus } from '../../src/campaign/index.js';
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
    await run.appendRow(row(0));
    await run.appendRow({ ...row(1), error: 'simulator timeout' });
    await appendFile(unitPaths(dir).rows, '{"seq":2');
    const s = await unitStatus(dir);
    expect(s).toMatchObject({
      state: 'running',
      next: 'imep campaign resume',
      runId: 'formal-2',
      ranBy: ['runner-session'],
      rows: { done: 2, planned: 4, failures: 1, tornTail: true },
      failedRuns: ['formal-failed'],
      smokes: ['smoke-1'],
      integrity: null,
    });
    expect(s.amendments).toHaveLength(1);
    const text = formatStatus(s);
    expect(text).toContain('rows 2/4 done, 1 failed, torn final line');
    expect(text).toContain('A1 [after-smoke]');
  });

  it('summarises a closed unit with integrity, adjudication and cross-check', async () => {
    const dir = join(root, 'closed');
    await buildUnit(dir, 'closed', { rich: true });
    const s = await unitStatus(dir);
    expect(s).toMatchObject({
      state: 'closed',
      closed: true,
      rows: { done: 4, planned: 4, failures: 0, tornTail: false },
      adjudication: { count: 1, operator: 'review-session', override: null },
      crossCheck: { outcome: 'agrees' },
      problems: [],
    });
    expect(s.integrity?.ok && s.integrity.scope).toBe('closeout');
    expect(formatStatus(s)).toContain('integrity OK (closeout root');
  });
});
