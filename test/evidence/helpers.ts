import { createHash } from 'node:crypto';
import { chmod, cp, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { isImepError, type ErrorCode } from '../../src/core/errors.js';
import {
  adjudicate,
  amend,
  closeout,
  completeRun,
  createUnit,
  crossCheck,
  explicitOperator,
  failRun,
  precommit,
  seal,
  startRun,
  startSmallRun,
  type PrecommitInput,
  type UnitState,
} from '../../src/evidence/index.js';

export const RUNNER = explicitOperator('runner-session');
export const REVIEWER = explicitOperator('review-session');

let tick = 0;
/** A deterministic clock: each call one second later. */
export const clock = (): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++));

export async function tempDir(prefix = 'imep-campaign-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** rm -rf that also works for non-root users on 0555 directories. */
export async function removeTree(dir: string): Promise<void> {
  const walk = async (d: string): Promise<void> => {
    await chmod(d, 0o755).catch(() => undefined);
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => []))
      if (e.isDirectory()) await walk(join(d, e.name));
  };
  await walk(dir);
  await rm(dir, { recursive: true, force: true });
}

export const PROTOCOL = {
  campaign: 'R27-test',
  conditions: ['A', 'N'],
  seeds: { task: 'shell-game', start: 8701, end: 8702 },
  gates: { shamValidity: { denominator: 'all-reads', threshold: 1 } },
  criterion: { kind: 'mcnemar-exact', alpha: 0.05 },
};
export const PLAN = {
  cells: [
    { task: 'shell-game', condition: 'A' },
    { task: 'shell-game', condition: 'N' },
  ],
  rows: 4,
};
export const PLANNED_ROWS = 4;

export function precommitInput(over: Partial<PrecommitInput> = {}): PrecommitInput {
  return {
    protocol: PROTOCOL,
    plan: PLAN,
    planHash: 'plan-hash-from-the-plan-module',
    plannedRows: PLANNED_ROWS,
    code: { gitCommit: '0123456789abcdef0123456789abcdef01234567', dirty: false, packageVersion: '0.1.0' },
    checkpointHashes: { 'memoryvla-lite.onnx': 'a'.repeat(64) },
    seeds: [{ task: 'shell-game', start: 8701, end: 8702 }],
    packageVersions: { zod: '4.x' },
    nodeVersion: 'v20.0.0',
    operator: RUNNER,
    now: clock,
    ...over,
  };
}

/** Deterministic row content for seq i. */
export function row(seq: number): { seq: number; condition: string; seed: number; success: boolean; digest: string } {
  return {
    seq,
    condition: seq % 2 === 0 ? 'A' : 'N',
    seed: 8701 + Math.floor(seq / 2),
    success: seq % 3 !== 1,
    digest: `d${seq * 7919}`,
  };
}

export interface BuildOptions {
  /** Add an amendment before the seal, a smoke run, a failed run, traces and timings. */
  readonly rich?: boolean;
}

/** Builds a unit in `dir` and drives it through the lifecycle up to `target`. */
export async function buildUnit(dir: string, target: UnitState, opts: BuildOptions = {}): Promise<void> {
  await createUnit(dir, { id: 'unit-under-test', operator: RUNNER, now: clock });
  if (target === 'created') return;
  await precommit(dir, precommitInput());
  if (opts.rich) {
    const s = await startSmallRun(dir, 'smoke', { runId: 'smoke-1', operator: RUNNER, now: clock });
    await s.appendRow(row(0));
    await s.appendTiming({ seq: 0, wallMs: 12.5 });
    await s.finish(clock);
    await amend(dir, {
      text: 'tighten the sham-validity denominator',
      affects: ['gates.shamValidity.denominator'],
      author: RUNNER,
      now: clock,
    });
    const f = await startRun(dir, { runId: 'formal-failed', operator: RUNNER, now: clock });
    await f.appendRow(row(0));
    await failRun(dir, { reason: 'bridge wiring failed the path check', operator: RUNNER, now: clock });
  }
  if (target === 'precommitted') return;
  const run = await startRun(dir, { runId: 'formal-1', operator: RUNNER, now: clock });
  if (target === 'running') return;
  for (let i = 0; i < PLANNED_ROWS; i++) {
    if (opts.rich) await run.appendTrace('memory-reads', { seq: i, read: 'cognitive', substituted: true });
    await run.appendRow(row(i));
    if (opts.rich) await run.appendTiming({ seq: i, wallMs: 100 + i });
  }
  await completeRun(dir, { now: clock });
  if (target === 'run-complete') return;
  await seal(dir, { operator: RUNNER, now: clock });
  if (target === 'sealed') return;
  await adjudicate(dir, {
    adjudicator: { name: 'frozen-adjudicator', version: 1 },
    result: { verdict: 'not detected', b: 1, c: 0 },
    artifacts: opts.rich ? { 'report.md': '# verdict\nnot detected\n' } : {},
    operator: REVIEWER,
    now: clock,
  });
  if (target === 'adjudicated') return;
  await crossCheck(dir, {
    outcome: 'agrees',
    method: 'adjudicator rerun on a second machine',
    operator: REVIEWER,
    now: clock,
  });
  if (target === 'cross-checked') return;
  await closeout(dir, { operator: REVIEWER, now: clock, notes: 'closed in test' });
}

/** SHA-256 of every file under dir (relative path → hash), for "nothing changed" checks. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        out[`${r}/`] = 'dir';
        await walk(join(d, e.name), r);
      } else
        out[r] = createHash('sha256')
          .update(await readFile(join(d, e.name)))
          .digest('hex');
    }
  };
  await walk(dir, '');
  return out;
}

export async function copyUnit(from: string, to: string): Promise<void> {
  await cp(from, to, { recursive: true });
}

export async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** Awaits a rejection and checks it is an ImepError with `code`; returns it. */
export async function expectImepError(
  p: Promise<unknown>,
  code: ErrorCode,
): Promise<import('../../src/core/errors.js').ImepError> {
  try {
    await p;
  } catch (e) {
    if (!isImepError(e)) throw e;
    expect(e.code, e.oneLine()).toBe(code);
    return e;
  }
  throw new Error(`expected ${code}, but it resolved`);
}
