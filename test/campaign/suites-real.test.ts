/**
 * protocols/suites/ on real MIKASA-Robo (mikasa-robo-suite 1.0.0, ManiSkill 3.0.0b15, PhysX CPU, lavapipe): the
 * standard VLA set (RememberColor3/5/9-VLA, InterceptMedium-VLA) with the memory policy mikasa-vla-memory and with
 * its memoryless control mikasa-vla-no-memory, each through closeout and its report, at n = 8 seeds per task (the
 * shipped protocols register 100; the same file is run with only `n` changed). `bash scripts/sims/mikasa.sh test`
 * runs it with IMEP_REAL_MIKASA=1 and IMEP_PYTHON set; without IMEP_REAL_MIKASA it is skipped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectSameAsA, recordedFrames, runShortSuite, successes } from '../helpers/suite-run.js';

const REAL = process.env['IMEP_REAL_MIKASA'] === '1';
const N = 8;
const TASKS = ['RememberColor3-VLA', 'RememberColor5-VLA', 'RememberColor9-VLA', 'InterceptMedium-VLA'];

describe.skipIf(!REAL)('protocols/suites on real MIKASA-Robo (IMEP_REAL_MIKASA=1)', () => {
  const dir = REAL ? mkdtempSync(join(tmpdir(), 'imep-suites-')) : '';
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('mikasa-vla-standard: memory matters on every task; per-task verdicts in one Holm family; filmstrips from the render', async () => {
    expect(process.env['IMEP_PYTHON'], 'IMEP_PYTHON (the venv bash scripts/setup-sims.sh mikasa prints)').toBeTruthy();
    const { stdout, unit, rows, report } = await runShortSuite(dir, 'mikasa-vla-standard', N, 100);
    expect(rows).toHaveLength(TASKS.length * 3 * N);
    expect(rows.every((x) => x.status === 'ok')).toBe(true);
    // MIKASA's seed stream (START_SEED + i), every task
    expect([...new Set(rows.map((x) => x.seed))].sort()).toEqual(Array.from({ length: N }, (_, i) => 4242424242 + i));
    for (const task of ['RememberColor3-VLA', 'RememberColor5-VLA', 'RememberColor9-VLA']) {
      expect(successes(rows, task, 'A'), task).toBe(N); // the known-answer policy touches the cued colour
      expect(successes(rows, task, 'N_blk'), task).toBeLessThan(N); // blocked: colour 0, right only when it was cued
    }
    expect(successes(rows, 'InterceptMedium-VLA', 'A')).toBeGreaterThanOrEqual(N - 2); // 58/70 measured
    expect(successes(rows, 'InterceptMedium-VLA', 'N_blk')).toBe(0); // the ball taken for still: always missed
    expectSameAsA(rows, ['C']); // C replicates A exactly

    expect(stdout).toContain('Q1_eligibility: holds');
    for (const task of TASKS) expect(stdout).toMatch(new RegExp(`^\\s*Q1_eligibility@${task}: \\S+`, 'm'));
    expect(stdout).toMatch(/^\s*Q1_eligibility@InterceptMedium-VLA: holds — /m); // b ≥ 6, c = 0: p ≤ 2^−6, Holm ×4 < 0.05

    expect(report).toContain('## Suite: mikasa-vla-standard');
    for (const task of TASKS) expect(report).toContain(`## Task ${task}`);
    expect(report).toContain('Q1_eligibility_tasks');
    // frames from the evaluator-only base-camera render, asked for only in the recorded episodes
    const frames = recordedFrames(unit);
    expect(frames).toHaveLength(TASKS.length * 2 * 2); // tasks × conditions [A, N_blk] × units 2
    for (const f of frames) {
      expect(f.length).toBeGreaterThan(5);
      expect(f.every((x) => x.width === 64 && x.height === 64)).toBe(true); // 128 px, downsample 2
    }
  }, 900_000);

  it('mikasa-vla-standard-memoryless: the control never uses its reads — blocking them changes no action', async () => {
    const { stdout, rows } = await runShortSuite(dir, 'mikasa-vla-standard-memoryless', N, 100);
    expect(rows).toHaveLength(TASKS.length * 3 * N);
    expectSameAsA(rows, ['N_blk', 'C']);
    expect(successes(rows, 'InterceptMedium-VLA', 'A')).toBe(0);
    for (const task of TASKS) expect(stdout).toMatch(new RegExp(`^\\s*Q1_eligibility@${task}: (?!holds)\\S+`, 'm'));
    expect(stdout).not.toContain('Q1_eligibility: holds');
  }, 900_000);
});
