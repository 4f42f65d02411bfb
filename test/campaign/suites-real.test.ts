/**
 * protocols/suites/ on real MIKASA-Robo (mikasa-robo-suite 1.0.0, ManiSkill 3.0.0b15, PhysX CPU, lavapipe): the
 * standard VLA set (RememberColor3/5/9-VLA, InterceptMedium-VLA) with the memory policy mikasa-vla-memory and with
 * its memoryless control mikasa-vla-no-memory, each through closeout and its report, at n = 8 seeds per task (the
 * shipped protocols register 100; the same file is run with only `n` changed). `bash scripts/sims/mikasa.sh test`
 * runs it with IMEP_REAL_MIKASA=1 and IMEP_PYTHON set; without IMEP_REAL_MIKASA it is skipped.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readUnitRows, type UnitRow } from '../helpers/unit-rows.js';
import { ROOT } from './helpers.js';
import { imep } from './cli-support.js';

const REAL = process.env['IMEP_REAL_MIKASA'] === '1';
const N = 8;
const TASKS = ['RememberColor3-VLA', 'RememberColor5-VLA', 'RememberColor9-VLA', 'InterceptMedium-VLA'];

interface Row extends UnitRow {
  readonly task: string;
}

/** The shipped protocol with only `n` changed, written into `dir`. */
function shortCopy(dir: string, name: string): string {
  const text = readFileSync(join(ROOT, 'protocols/suites', `${name}.yaml`), 'utf8');
  expect(text).toMatch(/^n: 100$/m);
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text.replace(/^n: 100$/m, `n: ${N}`));
  return file;
}

async function runSuite(dir: string, name: string): Promise<{ stdout: string; unit: string; rows: Row[] }> {
  const r = await imep(
    [
      'campaign',
      'run',
      shortCopy(dir, name),
      '--through',
      'closeout',
      '--same-operator-reason',
      'real-MIKASA suite CI test',
      '--batch',
      '1',
      '--campaigns-dir',
      'campaigns',
    ],
    dir,
  );
  expect(r.code, r.stderr).toBe(0);
  const id = readdirSync(join(dir, 'campaigns')).find((d) => new RegExp(`^${name}-[0-9a-f]{12}$`).test(d));
  expect(id, `${name}'s unit in ${dir}/campaigns`).toBeDefined();
  const unit = join(dir, 'campaigns', id as string);
  return { stdout: r.stdout, unit, rows: readUnitRows<Row>(unit) };
}

const successes = (rows: readonly Row[], task: string, condition: string): number =>
  rows.filter((x) => x.task === task && x.condition === condition && x.success === true).length;

const byTaskSeed = (rows: readonly Row[], condition: string): Map<string, Row> =>
  new Map(rows.filter((x) => x.condition === condition).map((x) => [`${x.task}/${x.seed}`, x]));

function report(dir: string, unit: string): string {
  const id = unit.split('/').pop() as string;
  const reports = join(dir, 'campaigns', 'reports');
  expect(readdirSync(reports)).toContain(id);
  return readFileSync(join(reports, id, 'report.md'), 'utf8');
}

describe.skipIf(!REAL)('protocols/suites on real MIKASA-Robo (IMEP_REAL_MIKASA=1)', () => {
  const dir = REAL ? mkdtempSync(join(tmpdir(), 'imep-suites-')) : '';
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('mikasa-vla-standard: memory matters on every task; per-task verdicts in one Holm family; filmstrips from the render', async () => {
    expect(process.env['IMEP_PYTHON'], 'IMEP_PYTHON (the venv bash scripts/setup-sims.sh mikasa prints)').toBeTruthy();
    const { stdout, unit, rows } = await runSuite(dir, 'mikasa-vla-standard');
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
    // C replicates A exactly
    const a = byTaskSeed(rows, 'A');
    for (const [k, c] of byTaskSeed(rows, 'C')) expect([k, c.actionDigest]).toEqual([k, a.get(k)?.actionDigest]);

    expect(stdout).toContain('Q1_eligibility: holds');
    for (const task of TASKS) expect(stdout).toMatch(new RegExp(`^\\s*Q1_eligibility@${task}: \\S+`, 'm'));
    expect(stdout).toMatch(/^\s*Q1_eligibility@InterceptMedium-VLA: holds$/m); // b ≥ 6, c = 0: p ≤ 2^−6, Holm ×4 < 0.05

    const md = report(dir, unit);
    expect(md).toContain('## Suite: mikasa-vla-standard');
    for (const task of TASKS) expect(md).toContain(`## Task ${task}`);
    expect(md).toContain('Q1_eligibility_tasks');
    // frames from the evaluator-only base-camera render, asked for only in the recorded episodes
    const frames = readFileSync(join(unit, 'traces/frames.jsonl'), 'utf8').trimEnd().split('\n');
    expect(frames).toHaveLength(TASKS.length * 2 * 2); // tasks × conditions [A, N_blk] × units 2
    for (const line of frames) {
      const f = JSON.parse(line) as { frames: { step: number; width: number; height: number }[] };
      expect(f.frames.length).toBeGreaterThan(5);
      expect(f.frames.every((x) => x.width === 64 && x.height === 64)).toBe(true); // 128 px, downsample 2
    }
  }, 900_000);

  it('mikasa-vla-standard-memoryless: the control never uses its reads — blocking them changes no action', async () => {
    const { stdout, rows } = await runSuite(dir, 'mikasa-vla-standard-memoryless');
    expect(rows).toHaveLength(TASKS.length * 3 * N);
    const a = byTaskSeed(rows, 'A');
    for (const cond of ['N_blk', 'C'])
      for (const [k, x] of byTaskSeed(rows, cond)) {
        expect([k, x.actionDigest, x.success]).toEqual([k, a.get(k)?.actionDigest, a.get(k)?.success]);
      }
    expect(successes(rows, 'InterceptMedium-VLA', 'A')).toBe(0);
    for (const task of TASKS) expect(stdout).toMatch(new RegExp(`^\\s*Q1_eligibility@${task}: (?!holds)\\S+`, 'm'));
    expect(stdout).not.toContain('Q1_eligibility: holds');
  }, 900_000);
});
