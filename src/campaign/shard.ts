/**
 * Sharding, minimal (issue #8 builds the cluster layer on it): `--shard i/N` runs only the units of
 * shard i (0 ≤ i < N, as SLURM_ARRAY_TASK_ID counts). A unit here is a (task, seed) pair: shard =
 * (ordinal of the pair in plan order) mod N, so a shard holds every condition and every attempt of its
 * pairs and a scope's attempts are never split. Rows keep their plan seq and bytes (rows are
 * deterministic: the union of the shards' rows, in seq order, is byte-identical to an unsharded run).
 *
 * A shard writes APART from the evidence unit, into `<unit dir>.shards/shard-<i>-of-<N>/`:
 *   shard.json    { unitId, protocolHash, planHash, index, count, rows, operators, complete } (atomic;
 *                 version 2). `operators` names everyone who ran (or resumed) the shard, written before
 *                 the run appends a row, so no row exists without its operator on record: the merge
 *                 carries them into the unit's run record, which the same-operator check reads.
 *   rows.jsonl    the shard's rows in seq order, timings.jsonl, traces/<stream>.jsonl — written by the
 *                 runner's RowWriter (row-writer.ts: files kept open for the run; a row and its side lines
 *                 are fdatasync'd in one step before the next row is accepted), following the shard's
 *                 own plan seqs instead of consecutive ones.
 * Re-running the same shard resumes after its last durable row (torn tail and side lines of uncommitted
 * rows truncated, as for a formal run). Merging shards into the unit's formal run (start → append in seq
 * order → complete → seal) is the cluster layer's job.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson, ImepError } from '../core/index.js';
import {
  writeJsonAtomic,
  cutToCommittedRows,
  readJsonLines,
  readRecord,
  RowWriter,
  ShardRecordSchema,
  type Operator,
  type ShardRecord,
} from '../evidence/index.js';
import type { RowTarget } from './row-sink.js';

export { parseShard, shardFilter, type ShardSpec } from '../protocol/index.js';
import type { ShardSpec } from '../protocol/index.js';

export function shardDir(unitDir: string, spec: ShardSpec): string {
  return join(`${unitDir}.shards`, `shard-${spec.index}-of-${spec.count}`);
}

export { ShardRecordSchema, type ShardRecord } from '../evidence/index.js';

/** nextSeq of a writer that has written every row of its shard. */
const DONE = Number.MAX_SAFE_INTEGER;

/**
 * The shard's durable writer: a RowWriter whose next seq follows the shard's plan seqs. Its guard runs at
 * the first append and whenever shard.json changes (else one stat per append): the folder must still be
 * this shard's, not yet complete — a folder removed or re-split under a running task is never written to.
 */
class ShardWriter extends RowWriter {
  private readonly after = new Map<number, number>();

  constructor(dir: string, record: ShardRecord, seqs: readonly number[]) {
    const file = join(dir, 'shard.json');
    super(
      { rows: join(dir, 'rows.jsonl'), timings: join(dir, 'timings.jsonl'), tracesDir: join(dir, 'traces') },
      seqs[0] ?? DONE,
      async () => {
        const now = await readRecord(file, ShardRecordSchema);
        const v = now.kind === 'ok' ? now.value : null;
        if (
          v === null ||
          v.protocolHash !== record.protocolHash ||
          v.planHash !== record.planHash ||
          v.index !== record.index ||
          v.count !== record.count ||
          v.complete
        ) {
          throw new ImepError(
            'E_OUT_OF_ORDER',
            `shard ${record.index}/${record.count}'s folder changed under the running shard (${now.kind === 'ok' ? (now.value.complete ? 'marked complete' : 'another split') : now.kind === 'bad' ? `shard.json ${now.reason}` : 'shard.json removed'}); nothing more is appended`,
            {
              file,
              hint: 'run the shard again (it resumes after its last durable row)',
            },
          );
        }
      },
      file,
    );
    seqs.forEach((seq, i) => this.after.set(seq, seqs[i + 1] ?? DONE));
  }

  protected override seqAfter(seq: number): number {
    return this.after.get(seq) ?? DONE;
  }
}

export interface OpenShard {
  readonly dir: string;
  readonly target: RowTarget;
  /** Seqs still to write, ascending. */
  readonly expected: readonly number[];
  /** First seq still to write (Infinity when complete). */
  readonly startSeq: number;
  /** Durable rows that a resumed run may recompute (canonical JSON by seq). */
  readonly existing: ReadonlyMap<number, string>;
  readonly record: ShardRecord;
  /** Releases the shard's open files (every committed row is durable already). */
  close(): Promise<void>;
}

export interface ShardMeta {
  readonly unitId: string;
  readonly protocolHash: string;
  readonly planHash: string;
  readonly spec: ShardSpec;
  /** Who runs the shard now: added to shard.json's operators before any row is appended. */
  readonly operator: Operator;
}

/** Opens (creating or resuming) the shard folder; `seqs` are the shard's plan seqs, ascending. */
export async function openShard(
  dir: string,
  meta: ShardMeta,
  seqs: readonly number[],
  perUnit: number,
): Promise<OpenShard> {
  const file = join(dir, 'shard.json');
  let record: ShardRecord = {
    kind: 'imep.shard',
    version: 2,
    unitId: meta.unitId,
    protocolHash: meta.protocolHash,
    planHash: meta.planHash,
    index: meta.spec.index,
    count: meta.spec.count,
    rows: seqs.length,
    operators: [meta.operator],
    complete: false,
  };
  const found = await readRecord(file, ShardRecordSchema);
  if (found.kind === 'bad') {
    throw new ImepError('E_UNIT_TAMPERED', `shard.json ${found.reason}`, {
      file,
      hint: 'a shard folder written by another imep version or edited by hand: remove the folder and run the shard again',
    });
  }
  if (found.kind === 'ok') {
    const v = found.value;
    if (
      v.protocolHash !== record.protocolHash ||
      v.planHash !== record.planHash ||
      v.index !== record.index ||
      v.count !== record.count
    ) {
      throw new ImepError('E_PROTOCOL_FROZEN', 'this shard folder belongs to another protocol, plan or shard split', {
        file,
        hint: 'use a fresh campaigns directory for a different split',
      });
    }
    record = v;
    if (!v.operators.some((o) => o.id === meta.operator.id)) {
      record = { ...v, operators: [...v.operators, meta.operator] };
      await writeJsonAtomic(file, record);
    }
  } else {
    await mkdir(join(dir, 'traces'), { recursive: true }).catch((e: unknown) => {
      throw new ImepError('E_IO', 'cannot create the shard folder', { file: dir, cause: e });
    });
    await writeJsonAtomic(file, record);
  }
  const rowsFile = join(dir, 'rows.jsonl');
  const read = await readJsonLines(rowsFile); // complete lines; a torn tail is cut below, once all is checked
  const done = read.lines.length;
  read.lines.forEach((line, i) => {
    const seq = (line as { seq?: unknown }).seq;
    if (seq !== seqs[i])
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `line ${i + 1} has seq ${String(seq)}; this shard's row ${i + 1} is seq ${String(seqs[i])}`,
        { file: rowsFile },
      );
  });
  const startSeq = seqs[done] ?? Infinity;
  const cut = Number.isFinite(startSeq) ? startSeq : Number.MAX_SAFE_INTEGER;
  await mkdir(join(dir, 'traces'), { recursive: true }).catch(() => undefined);
  const traceNames = (await readdir(join(dir, 'traces')).catch(() => [] as string[])).filter((n) =>
    n.endsWith('.jsonl'),
  );
  await cutToCommittedRows(
    rowsFile,
    [join(dir, 'timings.jsonl'), ...traceNames.map((name) => join(dir, 'traces', name))],
    cut,
  );
  const existing = new Map<number, string>();
  read.lines
    .slice(Math.max(0, done - perUnit))
    .forEach((line) => existing.set((line as { seq: number }).seq, canonicalJson(line)));
  const expected = seqs.slice(done);
  const writer = new ShardWriter(dir, record, expected);
  return { dir, target: writer, expected, startSeq, existing, record, close: () => writer.close() };
}

/** Marks the shard complete (after its writer is closed, or with nothing left to write). */
export async function completeShard(shard: OpenShard): Promise<void> {
  await shard.close();
  await writeJsonAtomic(join(shard.dir, 'shard.json'), { ...shard.record, complete: true });
}
