/**
 * Reading and checking the shards of a unit before a merge. Refusals, each one line:
 *   a shard folder from ANOTHER campaign (its shard.json names another protocol/plan hash or unit), or
 *     whose record is not one imep wrote (version 2: it names the operators who ran the shard)                       → E_PROTOCOL_FROZEN / E_UNIT_TAMPERED, naming the file
 *   any shard missing or not complete                          → E_OUT_OF_ORDER, listing every such shard
 *   a shard's rows not exactly its manifest's seqs, a row that is not the planned episode at its seq
 *     (seq, wave, condition, task, seed, attempt, scope, episode id), a line not in canonical form,
 *     a torn tail, or a seq held by two shards                 → E_UNIT_TAMPERED, naming the file and line
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson, ImepError, sha256Hex } from '../core/index.js';
import { notPlannedError, planMismatch, readRecord } from '../evidence/index.js';
import { shardDir } from '../campaign/index.js';
import type { PlannedEpisode } from '../protocol/index.js';
import { ShardFolderRecordSchema, type ShardFolderRecord } from './cluster-layout.js';
import { shardRowsDone, type ClusterUnit } from './cluster-unit.js';
import { fromRanges, type ShardManifest } from '../protocol/index.js';

/** One line of a seq-keyed JSON-lines file, with its exact text. */
export interface SeqText {
  readonly seq: number;
  readonly text: string;
}

export interface ShardContent {
  readonly index: number;
  readonly dir: string;
  readonly rows: readonly SeqText[];
  readonly rowsSha256: string;
  readonly timings: readonly SeqText[];
  /** Trace lines by stream name. */
  readonly traces: ReadonlyMap<string, readonly SeqText[]>;
}

/** Lines of a JSON-lines file (missing → none); a torn tail or a line without seq is refused. */
async function seqLines(file: string, required: boolean): Promise<{ lines: SeqText[]; bytes: Buffer }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT' && !required) return { lines: [], bytes: Buffer.alloc(0) };
    throw new ImepError('E_IO', 'cannot read the shard file', { file, cause: e });
  }
  const text = bytes.toString('utf8');
  if (text.length > 0 && !text.endsWith('\n'))
    throw new ImepError('E_UNIT_TAMPERED', 'the file ends in a torn line, but its shard is marked complete', { file });
  const lines: SeqText[] = [];
  const parts = text.length === 0 ? [] : text.slice(0, -1).split('\n');
  parts.forEach((line, i) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ImepError('E_UNIT_TAMPERED', `line ${i + 1} is not valid JSON`, { file });
    }
    const seq = (value as { seq?: unknown } | null)?.seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
      throw new ImepError('E_UNIT_TAMPERED', `line ${i + 1} has no non-negative integer "seq"`, { file });
    if (canonicalJson(value) !== line)
      throw new ImepError('E_UNIT_TAMPERED', `line ${i + 1} (seq ${seq}) is not in the canonical form imep writes`, {
        file,
      });
    lines.push({ seq, text: line });
  });
  return { lines, bytes };
}

/** Checks every shard folder's record; refuses foreign, missing and incomplete shards (see above). Returns the records, in manifest order. */
export async function checkShardFolders(
  unit: ClusterUnit,
  manifests: readonly ShardManifest[],
): Promise<ShardFolderRecord[]> {
  const count = manifests.length;
  const open: string[] = [];
  const records: ShardFolderRecord[] = [];
  for (const m of manifests) {
    const dir = shardDir(unit.dir, { index: m.index, count });
    const file = join(dir, 'shard.json');
    const r = await readRecord(file, ShardFolderRecordSchema);
    if (r.kind === 'missing') {
      open.push(`${m.index} (never run)`);
      continue;
    }
    if (r.kind === 'bad')
      throw new ImepError('E_UNIT_TAMPERED', `shard ${m.index}/${count}: shard.json ${r.reason}`, { file });
    const v = r.value;
    if (v.protocolHash !== unit.protocolHash || v.planHash !== unit.plan.planHash) {
      const what =
        v.protocolHash !== unit.protocolHash
          ? `protocol hash ${v.protocolHash.slice(0, 12)}…, this unit's is ${unit.protocolHash.slice(0, 12)}…`
          : `plan hash ${v.planHash.slice(0, 12)}…, this unit's is ${unit.plan.planHash.slice(0, 12)}…`;
      throw new ImepError('E_PROTOCOL_FROZEN', `shard ${m.index}/${count} belongs to another campaign (${what})`, {
        file,
        hint: 'remove that shard folder and resubmit the shard: imep cluster submit UNIT --shards N',
      });
    }
    if (v.unitId !== unit.id || v.index !== m.index || v.count !== count || v.rows !== m.rows) {
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `shard ${m.index}/${count}: shard.json names unit ${v.unitId}, shard ${v.index}/${v.count} with ${v.rows} rows; expected unit ${unit.id}, shard ${m.index}/${count} with ${m.rows} rows`,
        { file },
      );
    }
    if (!v.complete) {
      const got = await shardRowsDone(unit.dir, m.index, count).catch(() => 0);
      open.push(`${m.index} (${got}/${m.rows} rows)`);
    }
    records.push(v);
  }
  if (open.length > 0) {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `${open.length} of ${count} shards ${open.length === 1 ? 'is' : 'are'} not complete: shard ${open.join(', shard ')}; merge waits for every shard`,
      {
        file: `${unit.dir}.shards`,
        hint: `see imep cluster status ${unit.dir}; resubmit what failed: imep cluster submit ${unit.dir} --shards ${count}`,
      },
    );
  }
  return records;
}

/** Reads one complete shard and checks its rows against its manifest and the plan. */
export async function readShard(unit: ClusterUnit, m: ShardManifest): Promise<ShardContent> {
  const dir = shardDir(unit.dir, { index: m.index, count: m.count });
  const rowsFile = join(dir, 'rows.jsonl');
  const { lines: rows, bytes } = await seqLines(rowsFile, true);
  const seqs = fromRanges(m.seqs);
  if (rows.length !== seqs.length) {
    throw new ImepError(
      'E_UNIT_TAMPERED',
      `shard ${m.index}/${m.count} holds ${rows.length} rows; its manifest (${m.sha256.slice(0, 12)}…) lists ${seqs.length}`,
      { file: rowsFile },
    );
  }
  const episodes: readonly PlannedEpisode[] = unit.plan.episodes;
  rows.forEach((r, i) => {
    if (r.seq !== seqs[i]) {
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `line ${i + 1} is seq ${r.seq}; shard ${m.index}/${m.count}'s row ${i + 1} is seq ${String(seqs[i])} (a unit missing or duplicated)`,
        { file: rowsFile },
      );
    }
    const planned = episodes[r.seq];
    const row = JSON.parse(r.text) as Record<string, unknown>;
    const off = planMismatch(row, planned);
    if (off !== undefined) throw notPlannedError(rowsFile, i + 1, row, planned, off);
  });
  const timings = (await seqLines(join(dir, 'timings.jsonl'), false)).lines;
  const traces = new Map<string, SeqText[]>();
  const names = (await readdir(join(dir, 'traces')).catch(() => [] as string[]))
    .filter((n) => n.endsWith('.jsonl'))
    .sort();
  for (const name of names)
    traces.set(name.slice(0, -'.jsonl'.length), (await seqLines(join(dir, 'traces', name), false)).lines);
  return { index: m.index, dir, rows, rowsSha256: sha256Hex(bytes), timings, traces };
}

/** No seq held twice, none missing: the shards together are the plan. */
export function checkCoverage(unit: ClusterUnit, shards: readonly ShardContent[]): void {
  const owner = new Map<number, number>();
  for (const s of shards) {
    for (const r of s.rows) {
      const other = owner.get(r.seq);
      if (other !== undefined) {
        throw new ImepError(
          'E_UNIT_TAMPERED',
          `seq ${r.seq} (unit ${unit.plan.episodes[r.seq]?.scopeId ?? '?'}) is in shard ${other} and shard ${s.index}`,
          { file: join(s.dir, 'rows.jsonl') },
        );
      }
      owner.set(r.seq, s.index);
    }
  }
  const missing = unit.plan.episodes.find((e) => !owner.has(e.seq));
  if (missing !== undefined) {
    throw new ImepError(
      'E_UNIT_TAMPERED',
      `seq ${missing.seq} (task ${missing.task}, seed ${missing.seed}) is in no shard`,
      { file: `${unit.dir}.shards` },
    );
  }
}
