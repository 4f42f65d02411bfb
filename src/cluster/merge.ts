/**
 * `imep cluster merge UNIT`: the shards' rows → the unit's formal run → the usual seal.
 *
 *   precommitted → refuse unless every shard is complete and belongs to this campaign (merge-read.ts),
 *   and no task of the unit's jobs is still queued or running → formal run started with run id
 *   `cluster-merge-…` → every operator who ran a shard (shard.json's operators) entered in the run record
 *   as a 'shard' session, before any row — the run record is what the same-operator check of adjudication,
 *   closeout and the signature chain reads, so a shard's operator can no more adjudicate than the merging
 *   one → rows, timings and traces appended in seq order (each trace and timing line before
 *   its row, as the store requires; durable chunk by chunk) → the tasks' logs and session records copied
 *   into `<unit>/cluster/` and `cluster/merge.json` written → run complete → seal.
 *
 * The merged rows file is the shards' row lines in seq order, byte for byte — and rows are deterministic,
 * so it is byte-identical to a single-process run of the campaign. Traces are too: each shard writes a
 * segment's donor assignment before the first row it owns, so the assignment is kept once, at the
 * lowest seq (where a single process writes it), after checking that every shard recorded the same one.
 * Timings are what each shard measured.
 *
 * A merge interrupted part-way leaves the unit 'running' under its `cluster-merge-` run: merging again
 * resumes it (the store truncates side lines of uncommitted rows; appending continues at the next seq).
 * A merged unit is sealed; merging it again only says so — unless the seal was interrupted (unit.json
 * 'sealed' with no seal.json: `sealInterrupted`), which merging again completes with the seal itself, as
 * `imep campaign resume` does for a single-process run.
 */
import { copyFile, mkdir, open, readdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { canonicalJson, ImepError } from '../core/index.js';
import { FailureBudgetWatch } from '../campaign/index.js';
import {
  lockUnit,
  fsyncDir,
  ioError,
  writeAll,
  writeJsonAtomic,
  completeRun,
  readRunRecord,
  resumeRun,
  startRun,
  isSealedState,
  currentOperator,
  writeRecord,
  RunRecordSchema,
  seal,
  unitPaths,
  type Operator,
  readUnitState,
  requireAction,
} from '../evidence/index.js';
import { clusterPaths, MergeRecordSchema } from './cluster-layout.js';
import { ensureShardPlan, openClusterUnit, type ClusterUnit } from './cluster-unit.js';
import { latestJobs, readJobs } from './jobs.js';
import { checkCoverage, checkShardFolders, readShard, type SeqText, type ShardContent } from './merge-read.js';
import { ACTIVE_STATES, Slurm } from './slurm.js';
import { shardCountOf } from './status.js';

export const MERGE_RUN_PREFIX = 'cluster-merge-';

export interface MergeOptions {
  readonly operator?: Operator;
  readonly now?: () => Date;
  readonly say?: (line: string) => void;
  /** SLURM access for the still-running check (default: the real commands; skipped where squeue is missing). */
  readonly slurm?: Slurm;
  /** Rows per durable chunk (default 1024). */
  readonly chunk?: number;
}

export interface MergeResult {
  readonly unit: string;
  readonly rows: number;
  readonly shards: number;
  /** The seq the merge continued at (0 for a fresh merge), null when the unit was sealed already. */
  readonly resumedAt: number | null;
  readonly merkleRoot: string | null;
}

export interface MergedLines {
  readonly rows: readonly SeqText[];
  readonly timings: readonly SeqText[];
  readonly traces: ReadonlyMap<string, readonly SeqText[]>;
}

const bySeq = (a: SeqText, b: SeqText): number => a.seq - b.seq;

/** The donor assignment of a segment, once: the lowest-seq line, after checking the shards agree. */
function dedupeDonors(lines: readonly SeqText[], file: string): SeqText[] {
  const kept = new Map<string, { line: SeqText; body: string }>();
  for (const line of lines) {
    const { seq: _seq, ...rest } = JSON.parse(line.text) as Record<string, unknown>;
    const key = canonicalJson({
      wave: rest['wave'] ?? null,
      condition: rest['condition'] ?? null,
      task: rest['task'] ?? null,
    });
    const body = canonicalJson(rest);
    const have = kept.get(key);
    if (have === undefined) kept.set(key, { line, body });
    else {
      if (have.body !== body)
        throw new ImepError(
          'E_UNIT_TAMPERED',
          `the shards recorded different donor assignments for ${key} (seq ${have.line.seq} and seq ${line.seq})`,
          { file },
        );
      if (line.seq < have.line.seq) kept.set(key, { line, body });
    }
  }
  return [...kept.values()].map((k) => k.line).sort(bySeq);
}

/** The shards' lines in merged order (pure; stable within a seq). */
export function mergeLines(shards: readonly ShardContent[], tracesDir = 'traces'): MergedLines {
  const rows = shards.flatMap((s) => s.rows).sort(bySeq);
  const timings = shards.flatMap((s) => s.timings).sort(bySeq);
  const streams = [...new Set(shards.flatMap((s) => [...s.traces.keys()]))].sort();
  const traces = new Map<string, SeqText[]>();
  for (const stream of streams) {
    const all = shards.flatMap((s) => s.traces.get(stream) ?? []).sort(bySeq);
    traces.set(stream, stream === 'donors' ? dedupeDonors(all, join(tracesDir, 'donors.jsonl')) : all);
  }
  return { rows, timings, traces };
}

/** Appends lines (already serialised) to a file, one write + fsync. */
async function appendBlock(file: string, lines: readonly SeqText[]): Promise<void> {
  if (lines.length === 0) return;
  let created = false;
  const fh = await open(file, 'ax', 0o644)
    .then((h) => {
      created = true;
      return h;
    })
    .catch(async (e: unknown) => {
      if ((e as { code?: string }).code !== 'EEXIST') throw ioError(file, 'create', e);
      return open(file, 'a');
    });
  try {
    await writeAll(fh, new TextEncoder().encode(lines.map((l) => `${l.text}\n`).join('')));
    await fh.sync();
  } catch (e) {
    throw ioError(file, 'append lines', e);
  } finally {
    await fh.close().catch(() => undefined);
  }
  if (created) await fsyncDir(join(file, '..'));
}

/** Lines of a seq-sorted list with first ≤ seq ≤ last, from a moving start index. */
function takeRange(list: readonly SeqText[], from: { i: number }, first: number, last: number): SeqText[] {
  while (from.i < list.length && list[from.i]!.seq < first) from.i++;
  const out: SeqText[] = [];
  while (from.i < list.length && list[from.i]!.seq <= last) out.push(list[from.i++]!);
  return out;
}

/** Writes the merged lines with seq ≥ `next` into the unit's formal-run files, chunk by chunk. */
async function writeMerged(unitDir: string, merged: MergedLines, next: number, chunk: number): Promise<void> {
  const p = unitPaths(unitDir);
  await mkdir(p.tracesDir, { recursive: true });
  await mkdir(p.rowsDir, { recursive: true });
  const rows = merged.rows.filter((r) => r.seq >= next);
  const cursors = { timings: { i: 0 }, traces: new Map([...merged.traces.keys()].map((k) => [k, { i: 0 }])) };
  for (let at = 0; at < rows.length; at += chunk) {
    const block = rows.slice(at, at + chunk);
    const first = block[0]!.seq;
    const last = block.at(-1)!.seq;
    const lo = at === 0 ? next : first;
    for (const [stream, lines] of merged.traces)
      await appendBlock(join(p.tracesDir, `${stream}.jsonl`), takeRange(lines, cursors.traces.get(stream)!, lo, last));
    await appendBlock(p.timings, takeRange(merged.timings, cursors.timings, lo, last));
    await requireAction(unitDir, 'append');
    await appendBlock(p.rows, block);
  }
}

/** Copies the regular files of a scratch folder into the unit (logs, sessions). */
async function copyFolder(from: string, to: string): Promise<number> {
  const names = await readdir(from, { withFileTypes: true }).catch(() => []);
  const files = names.filter((d) => d.isFile());
  if (files.length === 0) return 0;
  await mkdir(to, { recursive: true });
  for (const d of files)
    await copyFile(join(from, d.name), join(to, d.name)).catch((e: unknown) =>
      Promise.reject(ioError(join(from, d.name), `copy into ${to}`, e)),
    );
  await fsyncDir(to);
  return files.length;
}

/** Refuses while a task of the unit's jobs is still queued or running (where squeue exists). */
async function assertNoActiveTask(unit: ClusterUnit, count: number, slurm: Slurm): Promise<void> {
  const latest = latestJobs(await readJobs(unit.dir), count);
  const ids = [...new Set(latest.filter((j) => j !== null).map((j) => j.jobId))];
  if (ids.length === 0) return;
  if (!(await slurm.available())) return;
  const active = (await slurm.squeue(ids)).filter((t) => ACTIVE_STATES.has(t.state));
  if (active.length > 0) {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `task${active.length > 1 ? 's' : ''} ${active.map((t) => `${t.jobId}_${t.task ?? ''} (${t.state})`).join(', ')} of this unit ${active.length > 1 ? 'are' : 'is'} still queued or running`,
      {
        hint: `wait for them (imep cluster status ${unit.dir}) or scancel them, then merge`,
      },
    );
  }
}

/**
 * Enters every operator who ran a shard into the merge's run record as a 'shard' session (once per id;
 * idempotent, so a resumed merge adds only what an interrupted one had not).
 */
async function recordShardOperators(unitDir: string, operators: readonly Operator[], now: Date): Promise<void> {
  const run = await readRunRecord(unitDir);
  const have = new Set(run.sessions.filter((s) => s.action === 'shard').map((s) => s.operator.id));
  const add: Operator[] = [];
  for (const o of operators) {
    if (have.has(o.id)) continue;
    have.add(o.id);
    add.push(o);
  }
  if (add.length === 0) return;
  const sessions = add.map((operator) => ({
    action: 'shard' as const,
    at: now.toISOString(),
    operator,
    resumedAtSeq: null,
    tornBytes: null,
    droppedSideLines: null,
  }));
  await writeRecord(
    unitPaths(unitDir).runRecord,
    RunRecordSchema.parse({ ...run, sessions: [...run.sessions, ...sessions] }),
  );
}

function mergeRunId(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return `${MERGE_RUN_PREFIX}${stamp}-${randomBytes(4).toString('hex')}`;
}

export async function mergeCluster(unitDir: string, opts: MergeOptions = {}): Promise<MergeResult> {
  const opened = await openClusterUnit(unitDir);
  // one writer per unit: the merge writes the unit's formal run, as `campaign run/resume` does (same lock)
  const lock = await lockUnit(opened.dir);
  try {
    // the state as it is under the lock (protocol and plan are frozen; only the state can have moved)
    const snap = await readUnitState(opened.dir);
    return await mergeLocked({ ...opened, state: snap.state }, snap.sealInterrupted, opts);
  } finally {
    await lock.release();
  }
}

/** `sealInterrupted`: a seal killed between unit.json ('sealed') and seal.json, completed here, never reported as sealed. */
async function mergeLocked(unit: ClusterUnit, sealInterrupted: boolean, opts: MergeOptions): Promise<MergeResult> {
  const say = opts.say ?? ((l: string) => process.stdout.write(`${l}\n`));
  const now = opts.now ?? (() => new Date());
  const operator = opts.operator ?? currentOperator();
  const chunk = opts.chunk ?? 1024;
  if (isSealedState(unit.state) && !sealInterrupted) {
    say(`unit ${unit.dir} is '${unit.state}': merged and sealed already; next: imep campaign status ${unit.dir}`);
    return { unit: unit.dir, rows: unit.plan.episodes.length, shards: 0, resumedAt: null, merkleRoot: null };
  }
  if (unit.state === 'running' || unit.state === 'run-complete' || sealInterrupted) {
    const run = await readRunRecord(unit.dir);
    if (!run.runId.startsWith(MERGE_RUN_PREFIX)) {
      throw new ImepError(
        'E_OUT_OF_ORDER',
        `unit ${unit.dir} has a formal run (${run.runId}) that is not a cluster merge; shards and a formal run are alternatives`,
        {
          hint: `finish that run: imep campaign resume ${unit.dir}`,
        },
      );
    }
  }
  let next = 0;
  let shardCount = 0;
  if (unit.state !== 'run-complete' && !sealInterrupted) {
    const { count } = await shardCountOf(unit);
    shardCount = count;
    const { plan, record } = await ensureShardPlan(unit, count, { write: false });
    const folders = await checkShardFolders(unit, plan.shards);
    await assertNoActiveTask(unit, count, opts.slurm ?? new Slurm());
    const shards: ShardContent[] = [];
    for (const m of plan.shards) shards.push(await readShard(unit, m));
    checkCoverage(unit, shards);
    const merged = mergeLines(shards, unitPaths(unit.dir).tracesDir);
    // the registered execution-failure budget over the whole run (each shard kept only its own share): a merge that
    // spends it is refused before it writes anything
    new FailureBudgetWatch(
      unit.protocol.executionFailures.budget,
      unit.plan.episodes,
      merged.rows.map((r) => JSON.parse(r.text) as { seq: number }),
      `nothing was merged; fix the cause, then remove the folders of the shards whose units failed (${unit.dir}.shards/shard-I-of-N) and run those shards again before the merge`,
    ).assertWithin();
    let runId: string;
    if (unit.state === 'precommitted') {
      runId = mergeRunId(now());
      await startRun(unit.dir, { operator, now, runId });
    } else {
      const r = await resumeRun(unit.dir, { operator, now });
      runId = r.report.runId;
      next = r.report.nextSeq;
      say(`resuming the merge of ${unit.dir} at row ${next} of ${merged.rows.length}`);
    }
    await recordShardOperators(
      unit.dir,
      folders.flatMap((f) => f.operators),
      now(),
    );
    await writeMerged(unit.dir, merged, next, chunk);
    const paths = clusterPaths(unit.dir);
    await mkdir(paths.dir, { recursive: true });
    await copyFolder(paths.taskLogs, paths.logs);
    await copyFolder(paths.taskSessions, paths.sessions);
    await writeJsonAtomic(
      paths.merge,
      MergeRecordSchema.parse({
        kind: 'imep.cluster-merge',
        version: 1,
        count,
        shardPlanSha256: record.sha256,
        rows: merged.rows.length,
        shards: shards.map((s, i) => ({
          index: s.index,
          manifestSha256: plan.shards[i]!.sha256,
          rows: s.rows.length,
          rowsSha256: s.rowsSha256,
          operators: folders[i]!.operators.map((o) => o.id),
        })),
        runId,
        operator: operator.id,
        mergedAt: now().toISOString(),
      }),
    );
    await completeRun(unit.dir, { now });
  }
  const sealed = await seal(unit.dir, { operator, now });
  const rows = unit.plan.episodes.length;
  if (sealInterrupted) {
    say(
      `completed the interrupted seal of ${unit.dir} (${rows} rows, merged already): Merkle root ${sealed.record.merkle.root}`,
    );
    say(`next: imep campaign adjudicate ${unit.dir}`);
    return { unit: unit.dir, rows, shards: 0, resumedAt: null, merkleRoot: sealed.record.merkle.root };
  }
  say(
    `merged ${shardCount > 0 ? `${shardCount} shards` : 'the shards'} (${rows} rows) into ${unit.dir}; sealed: Merkle root ${sealed.record.merkle.root}`,
  );
  say(`next: imep campaign adjudicate ${unit.dir}`);
  return { unit: unit.dir, rows, shards: shardCount, resumedAt: next, merkleRoot: sealed.record.merkle.root };
}
