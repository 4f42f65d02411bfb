/**
 * Running a shipped suite protocol (protocols/suites/) for real at a smaller n, as the real-simulator CI tests do:
 * the file with only `n` changed, through closeout and its report, in one campaigns dir (so a memoryless control's
 * declared seed reuse finds the memory run), and the rows read back.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { imep } from '../campaign/cli-support.js';
import { ROOT } from '../campaign/helpers.js';
import { readUnitRows, type UnitRow } from './unit-rows.js';

export interface SuiteRow extends UnitRow {
  readonly task: string;
}

export interface SuiteRun {
  readonly stdout: string;
  readonly unit: string;
  readonly rows: SuiteRow[];
  /** The rendered report (report.md). */
  readonly report: string;
}

/** protocols/suites/<name>.yaml with `n: <registered>` replaced by `n: <n>`, through closeout in `dir`/campaigns. */
export async function runShortSuite(dir: string, name: string, n: number, registered: number): Promise<SuiteRun> {
  const text = readFileSync(join(ROOT, 'protocols/suites', `${name}.yaml`), 'utf8');
  expect(text).toMatch(new RegExp(`^n: ${registered}$`, 'm'));
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text.replace(new RegExp(`^n: ${registered}$`, 'm'), `n: ${n}`));
  const r = await imep(
    ['campaign', 'run', file, '--through', 'closeout', '--same-operator-reason', 'real-simulator suite CI test'].concat(
      ['--batch', '1', '--campaigns-dir', 'campaigns'],
    ),
    dir,
  );
  expect(r.code, r.stderr).toBe(0);
  const id = readdirSync(join(dir, 'campaigns')).find((d) => new RegExp(`^${name}-[0-9a-f]{12}$`).test(d));
  expect(id, `${name}'s unit in ${dir}/campaigns`).toBeDefined();
  const unit = join(dir, 'campaigns', id as string);
  const report = readFileSync(join(dir, 'campaigns', 'reports', id as string, 'report.md'), 'utf8');
  return { stdout: r.stdout, unit, rows: readUnitRows<SuiteRow>(unit), report };
}

/** How many of `task`'s units succeeded under `condition`. */
export const successes = (rows: readonly SuiteRow[], task: string, condition: string): number =>
  rows.filter((x) => x.task === task && x.condition === condition && x.success === true).length;

/** `condition`'s rows by `<task>/<seed>`. */
export const byTaskSeed = (rows: readonly SuiteRow[], condition: string): Map<string, SuiteRow> =>
  new Map(rows.filter((x) => x.condition === condition).map((x) => [`${x.task}/${x.seed}`, x]));

/** Every listed condition's row equals A's for the same task and seed (actions and outcome): a replicate, or a
 *  policy that never uses its reads. */
export function expectSameAsA(rows: readonly SuiteRow[], conditions: readonly string[]): void {
  const a = byTaskSeed(rows, 'A');
  for (const cond of conditions)
    for (const [k, x] of byTaskSeed(rows, cond))
      expect([cond, k, x.actionDigest, x.success]).toEqual([cond, k, a.get(k)?.actionDigest, a.get(k)?.success]);
}

/** The recorded frames lines (traces/frames.jsonl): per line, the sizes of its frames. */
export function recordedFrames(unit: string): { width: number; height: number }[][] {
  return readFileSync(join(unit, 'traces/frames.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as { frames: { width: number; height: number }[] }).frames);
}
