import type { SimulatorEnvironment } from '../records/simulator-environment.js';
import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ImepError } from '../../core/index.js';
import { fsyncDir, ioError, removeStaleTemps } from '../io/atomic-write.js';
import { cutToCommittedRows, readRows, type TornTail } from '../io/durable-append.js';
import { currentOperator } from '../operator.js';
import { checkRowsAgainstPlan, frozenPlanEpisodes } from '../planned-rows.js';
import { loadFrozenProtocol, readPrecommit } from './precommit.js';
import { readRequiredRecord, writeRecord } from '../io/record-file.js';
import { RowWriter } from '../io/row-writer.js';
import { newRunId, RUN_ID_RE, RunRecordSchema, type RunRecord } from '../records/run-record.js';
import { writeUnitHeader } from '../records/unit-header.js';
import { UNIT_FILES, unitPaths, type Operator } from '../unit-layout.js';
import { requireAction } from '../unit-state.js';

/**
 * The formal run: start (precommitted → running), resume after a crash, complete
 * (running → run-complete, only when every planned row is in), and fail-run (the run's rows/ and
 * traces/ are RENAMED into failed-runs/<runId>/, never deleted; the unit returns to precommitted).
 */

export interface RunOptions {
  readonly operator?: Operator;
  readonly now?: () => Date;
  /** Fixes the run id (tests); default `formal-<timestamp>-<hex>`. */
  readonly runId?: string;
  /** The isolation of the policy host this session started (hosted policies only; recorded in the session). */
  readonly policyIsolation?: string;
  /** The isolation of the simulator servers this session runs on (bridged simulators only; recorded in the session). */
  readonly simulatorIsolation?: string;
  /** The resource limits in force on the policy host / simulator servers this session started (one line each). */
  readonly policyLimits?: string;
  readonly simulatorLimits?: string;
  /** What the bridged simulator this session runs on reported about its stack (recorded in the session). */
  readonly simulatorEnvironment?: SimulatorEnvironment;
}

export interface ResumeReport {
  readonly runId: string;
  /** The seq the run continues at. */
  readonly nextSeq: number;
  /** The torn final row line truncated (null when the rows file ended cleanly). */
  readonly tornRow: TornTail | null;
  /** Timing and trace lines of rows that were never committed, removed. */
  readonly droppedSideLines: number;
  /** Leftover temp files of interrupted atomic writes, removed. */
  readonly removedTempFiles: string[];
}

/** A formal run open for appending: the OpenUnit's writing face. */
export class FormalRun extends RowWriter {
  constructor(
    readonly dir: string,
    readonly runId: string,
    nextSeq: number,
  ) {
    const p = unitPaths(dir);
    super(
      { rows: p.rows, timings: p.timings, tracesDir: p.tracesDir },
      nextSeq,
      async () => {
        const snap = await requireAction(dir, 'append');
        if (snap.header.spec?.runId !== runId) {
          throw new ImepError(
            'E_OUT_OF_ORDER',
            `run ${runId} is no longer the unit's current run (now ${snap.header.spec?.runId ?? 'none'})`,
            { file: dir },
          );
        }
      },
      p.header,
    );
  }
}

async function writeRun(dir: string, record: RunRecord): Promise<void> {
  await writeRecord(unitPaths(dir).runRecord, RunRecordSchema.parse(record));
}

export async function readRunRecord(dir: string): Promise<RunRecord> {
  return readRequiredRecord(
    unitPaths(dir).runRecord,
    RunRecordSchema,
    'no formal run has started: run `imep campaign run`',
  );
}

export async function startRun(dir: string, opts: RunOptions = {}): Promise<FormalRun> {
  const snap = await requireAction(dir, 'run');
  await loadFrozenProtocol(dir);
  const paths = unitPaths(dir);
  const rowsExist = await stat(paths.rows).then(
    () => true,
    () => false,
  );
  if (rowsExist) {
    throw new ImepError('E_UNIT_TAMPERED', 'rows.jsonl exists in a unit that has no running formal run', {
      file: paths.rows,
      hint: 'rows are only written by a running formal run; run `imep campaign verify` and inspect the unit',
    });
  }
  const now = (opts.now ?? (() => new Date()))();
  const runId = opts.runId ?? newRunId('formal', now);
  if (!RUN_ID_RE.test(runId)) throw new ImepError('E_USAGE', `bad run id '${runId}'`, { field: 'runId' });
  await writeRun(dir, {
    kind: 'imep.run',
    version: 1,
    unitId: snap.header.id,
    runId,
    runKind: 'formal',
    label: null,
    sessions: [
      {
        action: 'start',
        at: now.toISOString(),
        operator: opts.operator ?? currentOperator(),
        resumedAtSeq: null,
        tornBytes: null,
        droppedSideLines: null,
        ...(opts.policyIsolation === undefined ? {} : { policyIsolation: opts.policyIsolation }),
        ...(opts.simulatorIsolation === undefined ? {} : { simulatorIsolation: opts.simulatorIsolation }),
        ...(opts.policyLimits === undefined ? {} : { policyLimits: opts.policyLimits }),
        ...(opts.simulatorLimits === undefined ? {} : { simulatorLimits: opts.simulatorLimits }),
        ...(opts.simulatorEnvironment === undefined ? {} : { simulatorEnvironment: opts.simulatorEnvironment }),
      },
    ],
    completedAt: null,
    rowsDone: null,
  });
  await writeUnitHeader(dir, {
    ...snap.header,
    status: 'running',
    spec: snap.header.spec === null ? null : { ...snap.header.spec, runId },
  });
  return new FormalRun(dir, runId, 0);
}

export async function resumeRun(
  dir: string,
  opts: Omit<RunOptions, 'runId'> = {},
): Promise<{ run: FormalRun; report: ResumeReport }> {
  await requireAction(dir, 'resume');
  await loadFrozenProtocol(dir);
  const paths = unitPaths(dir);
  const record = await readRunRecord(dir);
  const removedTempFiles = await removeStaleTemps(dir);
  // Checked before anything is cut: every durable row the planned episode at its seq, in canonical form, and
  // side lines beyond the rows of at most the one row in flight (else committed rows are missing).
  const { nextSeq } = await readRows(paths.rows);
  await checkRowsAgainstPlan(paths.rows, await frozenPlanEpisodes(dir));
  const traceFiles = (await readdir(paths.tracesDir).catch(() => [] as string[]))
    .filter((n) => n.endsWith('.jsonl'))
    .sort();
  const { tornRow, droppedSideLines } = await cutToCommittedRows(
    paths.rows,
    [paths.timings, ...traceFiles.map((name) => join(paths.tracesDir, name))],
    nextSeq,
  );
  const now = (opts.now ?? (() => new Date()))();
  await writeRun(dir, {
    ...record,
    sessions: [
      ...record.sessions,
      {
        action: 'resume',
        at: now.toISOString(),
        operator: opts.operator ?? currentOperator(),
        resumedAtSeq: nextSeq,
        tornBytes: tornRow?.bytes ?? 0,
        droppedSideLines,
        ...(opts.policyIsolation === undefined ? {} : { policyIsolation: opts.policyIsolation }),
        ...(opts.simulatorIsolation === undefined ? {} : { simulatorIsolation: opts.simulatorIsolation }),
        ...(opts.policyLimits === undefined ? {} : { policyLimits: opts.policyLimits }),
        ...(opts.simulatorLimits === undefined ? {} : { simulatorLimits: opts.simulatorLimits }),
        ...(opts.simulatorEnvironment === undefined ? {} : { simulatorEnvironment: opts.simulatorEnvironment }),
      },
    ],
  });
  return {
    run: new FormalRun(dir, record.runId, nextSeq),
    report: { runId: record.runId, nextSeq, tornRow, droppedSideLines, removedTempFiles },
  };
}

/** running → run-complete; refused unless every planned row is in and the rows file is intact. */
export async function completeRun(dir: string, opts: { readonly now?: () => Date } = {}): Promise<RunRecord> {
  const snap = await requireAction(dir, 'complete');
  const paths = unitPaths(dir);
  const { plannedRows } = await readPrecommit(dir);
  const { rows, torn } = await readRows(paths.rows);
  if (torn !== null || rows.length !== plannedRows) {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${snap.header.id} has ${rows.length} of ${plannedRows} planned rows${torn ? ' and a torn final line' : ''}; run \`imep campaign resume\` first`,
      {
        file: paths.rows,
      },
    );
  }
  // what is sealed next: every row the planned episode at its seq, in canonical form
  await checkRowsAgainstPlan(paths.rows, await frozenPlanEpisodes(dir));
  const record = await readRunRecord(dir);
  const done: RunRecord = {
    ...record,
    completedAt: (opts.now ?? (() => new Date()))().toISOString(),
    rowsDone: rows.length,
  };
  await writeRun(dir, done);
  await writeUnitHeader(dir, { ...snap.header, status: 'run-complete' });
  return done;
}

export interface FailRunInput {
  readonly reason: string;
  readonly operator?: Operator;
  readonly now?: () => Date;
}

/**
 * Marks the current formal run failed: writes failed-runs/<runId>/failure.json, renames rows/ and
 * traces/ into that folder, recreates them empty and returns the unit to 'precommitted'. Each step
 * is skipped when already done, so an interrupted fail-run can be run again.
 */
export async function failRun(dir: string, input: FailRunInput): Promise<string> {
  const snap = await requireAction(dir, 'fail-run');
  if (input.reason.trim() === '') throw new ImepError('E_USAGE', 'a failed run needs a reason', { field: 'reason' });
  const paths = unitPaths(dir);
  const runId = snap.header.spec?.runId;
  if (runId === null || runId === undefined)
    throw new ImepError('E_UNIT_TAMPERED', 'unit.json names no current run', { file: paths.header });
  const target = join(dir, UNIT_FILES.failedRunsDir, runId);
  const rowsDone = (await readRows(paths.rows).catch(() => ({ rows: [] }))).rows.length;
  try {
    await mkdir(target, { recursive: true });
  } catch (e) {
    throw ioError(target, 'create the failed-run folder', e);
  }
  const failureFile = join(target, 'failure.json');
  if (
    !(await stat(failureFile).then(
      () => true,
      () => false,
    ))
  ) {
    await writeRecord(failureFile, {
      kind: 'imep.failed-run',
      version: 1,
      runId,
      reason: input.reason.trim(),
      at: (input.now ?? (() => new Date()))().toISOString(),
      operator: input.operator ?? currentOperator(),
      rowsDone,
      stateWhenFailed: snap.state,
    });
  }
  for (const [from, name] of [
    [paths.rowsDir, UNIT_FILES.rowsDir],
    [paths.tracesDir, UNIT_FILES.tracesDir],
  ] as const) {
    const to = join(target, name);
    const fromExists = await stat(from).then(
      () => true,
      () => false,
    );
    const toExists = await stat(to).then(
      () => true,
      () => false,
    );
    try {
      if (fromExists && !toExists) await rename(from, to);
      await mkdir(from, { recursive: true });
    } catch (e) {
      throw ioError(from, `rename into ${to}`, e);
    }
  }
  await fsyncDir(target);
  await fsyncDir(dir);
  await writeUnitHeader(dir, {
    ...snap.header,
    status: 'precommitted',
    spec: snap.header.spec === null ? null : { ...snap.header.spec, runId: null },
  });
  return target;
}

/** Whether the unit has formal data: rows in the current run, or any failed run. */
export async function hasFormalData(dir: string): Promise<boolean> {
  const paths = unitPaths(dir);
  const failed = await readdir(join(dir, UNIT_FILES.failedRunsDir)).catch(() => [] as string[]);
  if (failed.length > 0) return true;
  return (
    (await stat(paths.rows).then(
      (s) => s.size,
      () => 0,
    )) > 0
  );
}
