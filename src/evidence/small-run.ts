import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ImepError } from '../core/index.js';
import { ioError } from './io/atomic-write.js';
import { readRows } from './io/durable-append.js';
import { currentOperator } from './operator.js';
import { loadFrozenProtocol } from './transitions/precommit.js';
import { readRecord, writeRecord } from './io/record-file.js';
import { RowWriter } from './io/row-writer.js';
import { newRunId, RUN_ID_RE, RunRecordSchema, type RunRecord } from './records/run-record.js';
import { UNIT_FILES, unitPaths, type Operator } from './unit-layout.js';
import { requireAction } from './unit-state.js';

/**
 * Probe and smoke runs: small runs stored apart from the formal evidence, in probe/<runId>/ and
 * smoke/<runId>/ (rows.jsonl, timings.jsonl, traces/, run.json). Any number may run while the unit
 * is 'precommitted'. They are sealed with the unit, never counted as formal rows, and their
 * existence makes later amendments 'after-smoke'.
 */

export type SmallRunKind = 'probe' | 'smoke';

export interface SmallRunOptions {
  readonly label?: string;
  readonly operator?: Operator;
  readonly now?: () => Date;
  readonly runId?: string;
}

export class SmallRun extends RowWriter {
  constructor(
    readonly dir: string,
    readonly kind: SmallRunKind,
    readonly runId: string,
    readonly folder: string,
  ) {
    super(
      { rows: join(folder, 'rows.jsonl'), timings: join(folder, 'timings.jsonl'), tracesDir: join(folder, 'traces') },
      0,
      async () => {
        await requireAction(dir, kind);
      },
      unitPaths(dir).header,
    );
  }

  /** Records completion (rows done) in the small run's run.json. */
  async finish(now: () => Date = () => new Date()): Promise<RunRecord> {
    await this.close();
    await requireAction(this.dir, this.kind);
    const file = join(this.folder, 'run.json');
    const r = await readRecord(file, RunRecordSchema);
    if (r.kind !== 'ok')
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `the ${this.kind} run record is ${r.kind === 'missing' ? 'missing' : r.reason}`,
        { file },
      );
    const { rows } = await readRows(this.files.rows);
    const done: RunRecord = { ...r.value, completedAt: now().toISOString(), rowsDone: rows.length };
    await writeRecord(file, done);
    return done;
  }
}

export async function startSmallRun(dir: string, kind: SmallRunKind, opts: SmallRunOptions = {}): Promise<SmallRun> {
  const snap = await requireAction(dir, kind);
  await loadFrozenProtocol(dir);
  const now = (opts.now ?? (() => new Date()))();
  const runId = opts.runId ?? newRunId(kind, now);
  if (!RUN_ID_RE.test(runId)) throw new ImepError('E_USAGE', `bad run id '${runId}'`, { field: 'runId' });
  const folder = join(dir, kind === 'probe' ? UNIT_FILES.probeDir : UNIT_FILES.smokeDir, runId);
  try {
    await mkdir(folder, { recursive: false });
    await mkdir(join(folder, 'traces'));
  } catch (e) {
    throw ioError(folder, `create the ${kind} run folder`, e, 'each small run needs a new run id');
  }
  await writeRecord(join(folder, 'run.json'), {
    kind: 'imep.run',
    version: 1,
    unitId: snap.header.id,
    runId,
    runKind: kind,
    label: opts.label ?? null,
    sessions: [
      {
        action: 'start',
        at: now.toISOString(),
        operator: opts.operator ?? currentOperator(),
        resumedAtSeq: null,
        tornBytes: null,
        droppedSideLines: null,
      },
    ],
    completedAt: null,
    rowsDone: null,
  } satisfies RunRecord);
  return new SmallRun(dir, kind, runId, folder);
}

/** The small runs of one kind (run ids, sorted). */
export async function listSmallRuns(dir: string, kind: SmallRunKind): Promise<string[]> {
  const folder = join(dir, kind === 'probe' ? UNIT_FILES.probeDir : UNIT_FILES.smokeDir);
  return (await readdir(folder, { withFileTypes: true }).catch(() => []))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}
