/**
 * The shard plan of a frozen campaign plan (pure): which UNITS each of N shards runs, and a hashed
 * manifest of each shard.
 *
 * A unit is a task–seed scope (src/protocol/plan.ts scopeId) with ALL its conditions, waves and
 * attempts — or, in a chain protocol, a chain with all its positions. A shard never splits a unit, so a
 * scope's attempts (whose bank persists across attempts) always run in one process, in order.
 *
 * The rule (SHARD_RULE) is the runner's own (`shardFilter` below, which the runner's shards
 * (src/campaign/shard.ts) and this plan both call so the two cannot drift): number the units by first appearance in plan order
 * (0, 1, 2, …); unit k goes to shard k mod N. Shard i's rows are the plan seqs of its units, kept in
 * plan order; the union of the N shards is the whole plan, each seq exactly once.
 *
 * Each shard's manifest (its units and seq ranges) is hashed together with the campaign it belongs to
 * (protocol hash, plan hash, rule, N), so a manifest — and a shard folder checked against it — can never
 * be taken for another campaign's. The plan record (`cluster/shards.json`, shard-record.ts) carries every
 * manifest and a self-hash over the whole.
 */
import { canonicalHash, ImepError } from '../core/index.js';
import type { Plan, PlannedEpisode } from './plan.js';

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
export function shardFilter(
  episodes: readonly PlannedEpisode[],
  spec: ShardSpec,
): <U extends { readonly scopeId: string }>(unit: U) => boolean {
  const ordinal = new Map<string, number>();
  for (const e of episodes) if (!ordinal.has(e.scopeId)) ordinal.set(e.scopeId, ordinal.size);
  return (unit) => (ordinal.get(unit.scopeId) ?? -1) % spec.count === spec.index;
}

export const SHARD_RULE = 'scope-ordinal-mod-n';

export interface ShardUnit {
  readonly task: string;
  readonly seed: number;
  readonly scopeId: string;
}

/** Inclusive seq ranges [first, last], ascending and disjoint. */
export type SeqRange = readonly [number, number];

export interface ShardManifest {
  readonly index: number;
  readonly count: number;
  /** The shard's units, in plan order. */
  readonly units: readonly ShardUnit[];
  /** The shard's plan seqs, as ascending inclusive ranges. */
  readonly seqs: readonly SeqRange[];
  /** Number of rows (episodes) the shard writes. */
  readonly rows: number;
  /** SHA-256 over the campaign (protocol + plan hash, rule, N) and this manifest (manifestHash). */
  readonly sha256: string;
}

export interface ShardPlan {
  readonly rule: typeof SHARD_RULE;
  readonly protocolId: string;
  readonly protocolHash: string;
  readonly planHash: string;
  readonly count: number;
  /** Units and rows of the whole plan. */
  readonly units: number;
  readonly rows: number;
  readonly shards: readonly ShardManifest[];
}

/** The distinct units (scopes) of a plan, in order of first appearance. */
export function planUnits(plan: Pick<Plan, 'episodes'>): ShardUnit[] {
  const seen = new Map<string, ShardUnit>();
  for (const e of plan.episodes)
    if (!seen.has(e.scopeId)) seen.set(e.scopeId, { task: e.task, seed: e.seed, scopeId: e.scopeId });
  return [...seen.values()];
}

/** Ascending seqs → inclusive ranges. */
export function toRanges(seqs: readonly number[]): SeqRange[] {
  const out: [number, number][] = [];
  for (const s of seqs) {
    const last = out.at(-1);
    if (last !== undefined && s === last[1] + 1) last[1] = s;
    else out.push([s, s]);
  }
  return out;
}

/** Inclusive ranges → the seqs, ascending. */
export function fromRanges(ranges: readonly SeqRange[]): number[] {
  const out: number[] = [];
  for (const [a, b] of ranges) for (let s = a; s <= b; s++) out.push(s);
  return out;
}

/** The hash that binds one shard manifest to its campaign. */
export function manifestHash(
  campaign: Pick<ShardPlan, 'protocolHash' | 'planHash'>,
  m: Pick<ShardManifest, 'index' | 'count' | 'units' | 'seqs' | 'rows'>,
): string {
  return canonicalHash({
    kind: 'imep.shard-manifest',
    version: 1,
    rule: SHARD_RULE,
    protocolHash: campaign.protocolHash,
    planHash: campaign.planHash,
    index: m.index,
    count: m.count,
    units: m.units.map((u) => ({ task: u.task, seed: u.seed, scopeId: u.scopeId })),
    seqs: m.seqs.map(([a, b]) => [a, b]),
    rows: m.rows,
  });
}

/** Checks a requested shard count against a plan's units (E_USAGE with the fix, for `--shards N` or `--shard i/N`). */
export function checkShardCount(count: number, units: number, field: '--shards' | '--shard' = '--shards'): void {
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new ImepError('E_USAGE', `the shard count must be a positive integer, got ${String(count)}`, { field });
  }
  if (count > units) {
    throw new ImepError(
      'E_USAGE',
      `${count} shards for ${units} unit${units === 1 ? '' : 's'}: every shard needs at least one unit (a task–seed scope with all its conditions and attempts, never split)`,
      {
        field,
        hint:
          field === '--shards'
            ? `use --shards ${units} or fewer`
            : `use --shard I/${units} or fewer shards (the cluster's status and merge refuse more)`,
      },
    );
  }
}

/**
 * Splits a frozen plan into `count` shards by unit. Refuses (E_USAGE) a count that is not a positive
 * integer, or more shards than units (a shard would run nothing).
 */
export function planShards(
  plan: Pick<Plan, 'protocolId' | 'protocolHash' | 'planHash' | 'episodes'>,
  count: number,
): ShardPlan {
  const units = planUnits(plan);
  checkShardCount(count, units.length);
  const campaign = { protocolHash: plan.protocolHash, planHash: plan.planHash };
  const shards: ShardManifest[] = [];
  for (let index = 0; index < count; index++) {
    const include = shardFilter(plan.episodes, { index, count });
    const mine = units.filter((u) => include({ ...u, episodes: [] }));
    const scopes = new Set(mine.map((u) => u.scopeId));
    const seqs = plan.episodes.filter((e) => scopes.has(e.scopeId)).map((e) => e.seq);
    const body = { index, count, units: mine, seqs: toRanges(seqs), rows: seqs.length };
    shards.push({ ...body, sha256: manifestHash(campaign, body) });
  }
  return {
    rule: SHARD_RULE,
    protocolId: plan.protocolId,
    protocolHash: plan.protocolHash,
    planHash: plan.planHash,
    count,
    units: units.length,
    rows: plan.episodes.length,
    shards,
  };
}

/** Shard indices as a SLURM array spec: [0,1,2,3] → "0-3", [1,3,4,5] → "1,3-5". */
export function arraySpec(indices: readonly number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  if (sorted.length === 0) throw new ImepError('E_INTERNAL', 'an array job needs at least one task');
  return toRanges(sorted)
    .map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`))
    .join(',');
}
