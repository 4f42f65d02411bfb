/**
 * A unit as the cluster layer sees it: its frozen protocol and plan (re-hashed against the precommit),
 * its state, and its shard plan record (`cluster/shards.json`).
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ImepError } from '../core/index.js';
import {
  writeJsonAtomic,
  loadFrozenProtocol,
  readRecord,
  selfHashOk,
  withSelfHash,
  unitPaths,
  readUnitState,
} from '../evidence/index.js';
import type { UnitState } from '../evidence/index.js';
import { shardDir, unitFolderName } from '../campaign/index.js';
import { buildPlan, type Plan, ProtocolSchema, type Protocol, planShards, type ShardPlan } from '../protocol/index.js';
import { clusterPaths, ShardPlanRecordSchema, type ShardPlanRecord } from './cluster-layout.js';

export interface ClusterUnit {
  /** Absolute unit folder. */
  readonly dir: string;
  /** The folder holding it (the campaigns directory). */
  readonly campaignsDir: string;
  readonly id: string;
  readonly state: UnitState;
  readonly protocol: Protocol;
  readonly protocolHash: string;
  readonly plan: Plan;
}

/** Opens a unit folder: refuses a folder without unit.json, a unit not yet precommitted, a plan mismatch. */
export async function openClusterUnit(dirArg: string): Promise<ClusterUnit> {
  const dir = resolve(dirArg);
  const isUnit = await stat(join(dir, 'unit.json')).then(
    () => true,
    () => false,
  );
  if (!isUnit)
    throw new ImepError('E_USAGE', 'not an evidence unit (no unit.json)', {
      file: dir,
      hint: 'give a unit folder, e.g. campaigns/<protocol id>-<hash12>; make one with `imep campaign precommit FILE`',
    });
  const snap = await readUnitState(dir);
  if (snap.state === 'created') {
    throw new ImepError('E_OUT_OF_ORDER', `unit ${dir} was created but never precommitted`, {
      hint: 'run `imep campaign precommit FILE` first',
    });
  }
  const frozen = await loadFrozenProtocol(dir);
  const protocol = ProtocolSchema.parse(frozen.protocol);
  const plan = buildPlan(protocol);
  if (plan.planHash !== frozen.precommit.planHash) {
    throw new ImepError(
      'E_PROTOCOL_FROZEN',
      `the plan this code builds (${plan.planHash.slice(0, 12)}…) is not the precommitted plan (${frozen.precommit.planHash.slice(0, 12)}…)`,
      {
        file: unitPaths(dir).plan,
        hint: 'run the unit with the code that precommitted it (see unit.json spec.code)',
      },
    );
  }
  const expected = unitFolderName(protocol.id, frozen.protocolHash);
  if (basename(dir) !== expected) {
    throw new ImepError(
      'E_USAGE',
      `the unit folder is named ${basename(dir)}, but its frozen protocol makes it ${expected}`,
      {
        file: dir,
        hint: 'shard runs find the unit by that name: rename the folder back',
      },
    );
  }
  return {
    dir,
    campaignsDir: dirname(dir),
    id: snap.header.id,
    state: snap.state,
    protocol,
    protocolHash: frozen.protocolHash,
    plan,
  };
}

/** The stored record of a shard plan (self-hashed). */
export function shardPlanRecord(plan: ShardPlan): ShardPlanRecord {
  return withSelfHash({
    kind: 'imep.cluster-shards' as const,
    version: 1 as const,
    rule: plan.rule,
    protocolId: plan.protocolId,
    protocolHash: plan.protocolHash,
    planHash: plan.planHash,
    count: plan.count,
    units: plan.units,
    rows: plan.rows,
    shards: plan.shards.map((s) => ({
      ...s,
      units: [...s.units],
      seqs: s.seqs.map(([a, b]) => [a, b] as [number, number]),
    })),
  });
}

/** `cluster/shards.json`, checked (canonical bytes, schema, self-hash, campaign); null when absent. */
export async function readShardPlanRecord(unit: ClusterUnit): Promise<ShardPlanRecord | null> {
  const file = clusterPaths(unit.dir).shards;
  const r = await readRecord(file, ShardPlanRecordSchema);
  if (r.kind === 'missing') return null;
  if (r.kind === 'bad')
    throw new ImepError('E_UNIT_TAMPERED', `the shard plan ${r.reason}`, {
      file,
      hint: 'remove it and run `imep cluster plan` again (before any shard has run)',
    });
  if (!selfHashOk(r.value))
    throw new ImepError('E_UNIT_TAMPERED', 'the shard plan does not match its own SHA-256', { file });
  if (r.value.protocolHash !== unit.protocolHash || r.value.planHash !== unit.plan.planHash) {
    throw new ImepError(
      'E_UNIT_TAMPERED',
      `the shard plan belongs to another campaign (protocol ${r.value.protocolHash.slice(0, 12)}…, plan ${r.value.planHash.slice(0, 12)}…)`,
      { file },
    );
  }
  return r.value;
}

/** Durable rows a shard folder holds (0 when it has none). */
export async function shardRowsDone(unitDir: string, index: number, count: number): Promise<number> {
  // complete lines (a torn tail is not a row); the merge checks every line, this only counts them
  const bytes = await readFile(join(shardDir(unitDir, { index, count }), 'rows.jsonl')).catch(() => null);
  let n = 0;
  if (bytes !== null) for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) n++;
  return n;
}

export interface EnsureResult {
  readonly plan: ShardPlan;
  readonly record: ShardPlanRecord;
  /** Whether cluster/shards.json was (re)written now. */
  readonly wrote: boolean;
}

/**
 * The unit's shard plan for `count` shards. An existing `cluster/shards.json` for the same count must be
 * the plan this code computes (else E_UNIT_TAMPERED); one for another count is replaced only while no
 * shard of that split holds rows (else E_OUT_OF_ORDER: a split cannot change mid-campaign). With
 * `write: false` (dry runs) nothing is written.
 */
export async function ensureShardPlan(
  unit: ClusterUnit,
  count: number,
  opts: { write: boolean },
): Promise<EnsureResult> {
  const plan = planShards(unit.plan, count);
  const record = shardPlanRecord(plan);
  const file = clusterPaths(unit.dir).shards;
  const existing = await readShardPlanRecord(unit);
  if (existing !== null && existing.count === count) {
    if (existing.sha256 !== record.sha256) {
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `the recorded shard plan (${existing.sha256.slice(0, 12)}…) is not the plan this code computes for ${count} shards (${record.sha256.slice(0, 12)}…)`,
        { file },
      );
    }
    return { plan, record: existing, wrote: false };
  }
  if (existing !== null) {
    const started: number[] = [];
    for (let i = 0; i < existing.count; i++)
      if ((await shardRowsDone(unit.dir, i, existing.count)) > 0) started.push(i);
    if (started.length > 0) {
      throw new ImepError(
        'E_OUT_OF_ORDER',
        `the unit is already split into ${existing.count} shards and shard${started.length > 1 ? 's' : ''} ${started.join(', ')} hold rows; a split cannot change mid-campaign`,
        {
          file,
          field: '--shards',
          hint: `use --shards ${existing.count}`,
        },
      );
    }
  }
  if (opts.write) {
    await mkdir(clusterPaths(unit.dir).dir, { recursive: true }).catch((e: unknown) => {
      throw new ImepError('E_IO', 'cannot create the cluster folder', { file: clusterPaths(unit.dir).dir, cause: e });
    });
    await writeJsonAtomic(file, record);
  }
  return { plan, record, wrote: opts.write };
}
