/**
 * Sharding, minimal (issue #8 builds the cluster layer on it): `--shard i/N` runs only the units of
 * shard i (0 ≤ i < N, as SLURM_ARRAY_TASK_ID counts). A unit here is a (task, seed) pair: shard =
 * (ordinal of the pair in plan order) mod N, so a shard holds every condition and every attempt of its
 * pairs and a scope's attempts are never split. Rows keep their plan seq and bytes (rows are
 * deterministic: the union of the shards' rows, in seq order, is byte-identical to an unsharded run).
 *
 * A shard writes APART from the evidence unit, into `<unit dir>.shards/shard-<i>-of-<N>/`:
 *   shard.json    { unitId, protocolHash, planHash, index, count, rows, complete } (atomic)
 *   rows.jsonl    the shard's rows in seq order (durable appends), timings.jsonl, traces/<stream>.jsonl
 * Re-running the same shard resumes after its last durable row. Merging shards into the unit's formal
 * run (start → append in seq order → complete → seal) is the cluster layer's job.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { canonicalJson } from '../../core/canonical-json.js';
import { ImepError } from '../../core/errors.js';
import type { PlannedEpisode } from '../../protocol/plan.js';
import { writeJsonAtomic } from '../atomic-write.js';
import { appendJsonLine, readJsonLines, repairTornTail, truncateFromSeq } from '../durable-append.js';
import { readRecord } from '../record-file.js';
import type { SeqLine } from '../row-writer.js';
import type { RowTarget } from './row-sink.js';
import type { UnitJob } from './types.js';

export interface ShardSpec {
  readonly index: number;
  readonly count: number;
}

export function parseShard(raw: string): ShardSpec {
  const m = /^(\d+)\/(\d+)$/.exec(raw.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(count) || count < 1 || !(index >= 0 && index < count)) {
    throw new ImepError('E_USAGE', `expected i/N with 0 ≤ i < N (e.g. 0/4), got '${raw}'`, { field: '--shard' });
  }
  return { index, count };
}

/** The units (task, seed pairs) of shard `spec`, as a filter over segment units. */
export function shardFilter(episodes: readonly PlannedEpisode[], spec: ShardSpec): (unit: UnitJob) => boolean {
  const ordinal = new Map<string, number>();
  for (const e of episodes) if (!ordinal.has(e.scopeId)) ordinal.set(e.scopeId, ordinal.size);
  return (unit) => (ordinal.get(unit.scopeId) ?? -1) % spec.count === spec.index;
}

export function shardDir(unitDir: string, spec: ShardSpec): string {
  return join(`${unitDir}.shards`, `shard-${spec.index}-of-${spec.count}`);
}

/** The shard folder's `shard.json` (version 1); src/cluster reads it through this one schema. */
export const ShardRecordSchema = z.object({
  kind: z.literal('imep.shard'),
  version: z.literal(1),
  unitId: z.string(),
  protocolHash: z.string(),
  planHash: z.string(),
  index: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  rows: z.number().int().nonnegative(),
  complete: z.boolean(),
});
export type ShardRecord = z.infer<typeof ShardRecordSchema>;

class ShardTarget implements RowTarget {
  constructor(private readonly dir: string) {}
  appendRow(row: SeqLine): Promise<void> {
    return appendJsonLine(join(this.dir, 'rows.jsonl'), row);
  }
  appendTiming(timing: SeqLine): Promise<void> {
    return appendJsonLine(join(this.dir, 'timings.jsonl'), timing);
  }
  async appendTrace(stream: string, entry: SeqLine): Promise<void> {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(stream)) throw new ImepError('E_USAGE', `bad trace stream name '${stream}'`, { field: 'stream' });
    await appendJsonLine(join(this.dir, 'traces', `${stream}.jsonl`), entry);
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
}

/** Opens (creating or resuming) the shard folder; `seqs` are the shard's plan seqs, ascending. */
export async function openShard(
  dir: string,
  meta: { unitId: string; protocolHash: string; planHash: string; spec: ShardSpec },
  seqs: readonly number[],
  perUnit: number,
): Promise<OpenShard> {
  const file = join(dir, 'shard.json');
  const record: ShardRecord = {
    kind: 'imep.shard',
    version: 1,
    unitId: meta.unitId,
    protocolHash: meta.protocolHash,
    planHash: meta.planHash,
    index: meta.spec.index,
    count: meta.spec.count,
    rows: seqs.length,
    complete: false,
  };
  const found = await readRecord(file, ShardRecordSchema);
  if (found.kind === 'bad') throw new ImepError('E_UNIT_TAMPERED', `shard.json ${found.reason}`, { file });
  if (found.kind === 'ok') {
    const v = found.value;
    if (v.protocolHash !== record.protocolHash || v.planHash !== record.planHash || v.index !== record.index || v.count !== record.count) {
      throw new ImepError('E_PROTOCOL_FROZEN', 'this shard folder belongs to another protocol, plan or shard split', { file, hint: 'use a fresh campaigns directory for a different split' });
    }
  } else {
    await mkdir(join(dir, 'traces'), { recursive: true }).catch((e: unknown) => {
      throw new ImepError('E_IO', 'cannot create the shard folder', { file: dir, cause: e });
    });
    await writeJsonAtomic(file, record);
  }
  const rowsFile = join(dir, 'rows.jsonl');
  await repairTornTail(rowsFile);
  const read = await readJsonLines(rowsFile);
  const done = read.lines.length;
  read.lines.forEach((line, i) => {
    const seq = (line as { seq?: unknown }).seq;
    if (seq !== seqs[i]) throw new ImepError('E_UNIT_TAMPERED', `line ${i + 1} has seq ${String(seq)}; this shard's row ${i + 1} is seq ${String(seqs[i])}`, { file: rowsFile });
  });
  const startSeq = seqs[done] ?? Infinity;
  const cut = Number.isFinite(startSeq) ? startSeq : Number.MAX_SAFE_INTEGER;
  await truncateFromSeq(join(dir, 'timings.jsonl'), cut);
  for (const name of (await readdir(join(dir, 'traces')).catch(() => [] as string[])).filter((n) => n.endsWith('.jsonl'))) {
    await truncateFromSeq(join(dir, 'traces', name), cut);
  }
  const existing = new Map<number, string>();
  read.lines.slice(Math.max(0, done - perUnit)).forEach((line) => existing.set((line as { seq: number }).seq, canonicalJson(line)));
  return { dir, target: new ShardTarget(dir), expected: seqs.slice(done), startSeq, existing, record };
}

export async function completeShard(shard: OpenShard): Promise<void> {
  await writeJsonAtomic(join(shard.dir, 'shard.json'), { ...shard.record, complete: true });
}
