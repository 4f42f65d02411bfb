/**
 * The two ways to run part of a campaign outside its formal run: a shard (`run FILE --shard i/N`, rows kept
 * apart in <unit>.shards/ with their plan seqs) and a probe or smoke run (`probe|smoke FILE --n K`, the first
 * K units of every segment, renumbered, stored under the unit's probe/ or smoke/ folder).
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkShardCount, planUnits, episodesPerUnit, type PlannedEpisode } from '../protocol/index.js';
import { ImepError } from '../core/index.js';
import {
  NEXT_COMMAND,
  currentOperator,
  startSmallRun,
  type SmallRunKind,
  lockShard,
  readUnitState,
  readRows,
  failureSummary,
  failureSectionLines,
  readJsonLines,
} from '../evidence/index.js';
import {
  arrivalKeyOf,
  batchOf,
  openCampaign,
  progressFor,
  say,
  type Campaign,
  type CampaignOptions,
} from './campaign-setup.js';
import { announceSimulators, assemble, assembleAndPrecommit, type Assembly } from './assemble.js';
import { readDurableDonors, runPlan } from './run-plan.js';
import { RowSink } from './row-sink.js';
import { FailureBudgetWatch } from './failure-budget.js';
import { completeShard, openShard, shardDir, shardFilter, type ShardSpec } from './shard.js';
import { exists } from './unit-dir.js';

export async function runShard(
  c: Campaign,
  spec: ShardSpec,
  opts: CampaignOptions,
  assembled: Assembly | null,
): Promise<void> {
  let assembly = assembled;
  // the shard's simulators and policy are closed as soon as its rows are run (before the shard is completed and its
  // lock released: a resubmitted task never finds this one's servers still up); the finally is the safety net
  const closeHeld = async (): Promise<void> => {
    await assembly?.close();
  };
  try {
    await runShardOf(c, spec, opts, (a) => (assembly = a), assembly, closeHeld);
  } finally {
    await assembly?.close();
  }
}

async function runShardOf(
  c: Campaign,
  spec: ShardSpec,
  opts: CampaignOptions,
  hold: (a: Assembly) => void,
  assembled: Assembly | null,
  closeHeld: () => Promise<void>,
): Promise<void> {
  const snap = await readUnitState(c.dir);
  if (snap.state !== 'precommitted') {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${c.dir} is '${snap.state}'; shards run on a precommitted unit only (the formal run and shards are alternatives)`,
      {
        hint: `next: ${NEXT_COMMAND[snap.state]} ${c.dir}`,
      },
    );
  }
  // as `cluster plan` does: a shard without a unit would leave a split that status and merge refuse, rows stranded
  checkShardCount(spec.count, planUnits(c.plan).length, '--shard');
  const include = shardFilter(c.plan.episodes, spec);
  const mine = c.plan.episodes.filter((e) => include({ task: e.task, seed: e.seed, scopeId: e.scopeId, episodes: [] }));
  const operator = opts.operator ?? currentOperator();
  // one task per shard: a resubmitted task while the first still runs refuses instead of writing its rows twice
  const dir = shardDir(c.dir, spec);
  await mkdir(dirname(dir), { recursive: true }).catch((e: unknown) => {
    throw new ImepError('E_IO', 'cannot create the shards folder', { file: dirname(dir), cause: e });
  });
  const lock = await lockShard(dir, `shard ${spec.index}/${spec.count} of ${c.dir}`);
  try {
    const shard = await openShard(
      dir,
      { unitId: snap.header.id, protocolHash: c.hash, planHash: c.plan.planHash, spec, operator },
      mine.map((e) => e.seq),
      episodesPerUnit(c.protocol),
    );
    const todo = mine.filter((e) => e.seq >= shard.startSeq);
    // the registered execution-failure budget, on the shard's own units (a shard cannot see the others' rows)
    const budget = new FailureBudgetWatch(
      c.protocol.executionFailures.budget,
      mine,
      (await readJsonLines(join(shard.dir, 'rows.jsonl'))).lines as { seq: number }[],
      `fix the cause and run the shard again (imep campaign run ${c.file} --shard ${spec.index}/${spec.count}: it goes on at its next unit), or remove ${shard.dir} to run the shard from its start`,
    );
    const sink = new RowSink(budget.wrap(shard.target), shard.expected, shard.existing, join(shard.dir, 'rows.jsonl'));
    try {
      budget.assertWithin();
      if (todo.length > 0) {
        const durableDonors = shard.startSeq > 0 ? await readDurableDonors(join(shard.dir, 'traces')) : null;
        const arrivalKey = await arrivalKeyOf(c.dir);
        const a = assembled ?? (await assemble(c, opts));
        hold(a);
        announceSimulators(a, opts);
        await runPlan({
          protocol: c.protocol,
          episodes: c.plan.episodes,
          policies: a.policy,
          envs: a.simulators.envs,
          batchSize: batchOf(opts),
          sink,
          startSeq: shard.startSeq,
          arrivalKey,
          ...(durableDonors === null ? {} : { durableDonors }),
          include,
          subscribers: progressFor(opts, todo, `${c.protocol.id} shard ${spec.index}/${spec.count}`),
        });
        await closeHeld();
      }
      await sink.drain();
    } finally {
      await sink.settle();
      await shard.close();
      await closeHeld();
    }
    await completeShard(shard);
    say(opts, `shard ${spec.index}/${spec.count} of ${c.dir}: ${mine.length} rows in ${shard.dir}`);
  } finally {
    await lock.release();
  }
}

/** The first `n` units of every segment of a plan, renumbered seq 0, 1, … (a probe or smoke sub-plan). */
export function smallPlan(episodes: readonly PlannedEpisode[], n: number): PlannedEpisode[] {
  const out: PlannedEpisode[] = [];
  let seg = '';
  let units = new Set<string>();
  for (const e of episodes) {
    const key = `${e.wave}\u001f${e.condition}\u001f${e.task}`;
    if (key !== seg) {
      seg = key;
      units = new Set();
    }
    if (!units.has(e.scopeId)) {
      if (units.size >= n) continue;
      units.add(e.scopeId);
    }
    out.push({ ...e, seq: out.length });
  }
  return out;
}

/** `imep campaign probe|smoke FILE --n K`: a small run stored apart from the formal evidence. */
export async function smallRunCampaign(
  file: string,
  kind: SmallRunKind,
  n: number,
  opts: CampaignOptions,
): Promise<string> {
  if (!Number.isSafeInteger(n) || n < 1)
    throw new ImepError('E_USAGE', `--n must be a positive integer, got ${n}`, { field: '--n' });
  batchOf(opts);
  const c = await openCampaign(file, opts);
  if (!(await exists(c.dir))) {
    // a new unit: it is assembled (simulators and policy checked) before the precommit writes anything, and the
    // small run uses that assembly
    const a = await assembleAndPrecommit(c, opts);
    return smallRun(c, kind, n, opts, a);
  }
  return smallRun(c, kind, n, opts, null);
}

async function smallRun(
  c: Campaign,
  kind: SmallRunKind,
  n: number,
  opts: CampaignOptions,
  precommitted: Assembly | null,
): Promise<string> {
  let assembly = precommitted;
  try {
    const small = await startSmallRun(c.dir, kind, {
      operator: opts.operator ?? currentOperator(),
      label: `${kind} --n ${n}`,
      ...(opts.now ? { now: opts.now } : {}),
    });
    const a = (assembly ??= await assemble(c, opts));
    const episodes = smallPlan(c.plan.episodes, n);
    const sink = new RowSink(
      small,
      episodes.map((e) => e.seq),
      new Map(),
      small.files.rows,
    );
    try {
      const arrivalKey = await arrivalKeyOf(c.dir);
      announceSimulators(a, opts);
      await runPlan({
        protocol: c.protocol,
        episodes,
        policies: a.policy,
        envs: a.simulators.envs,
        batchSize: batchOf(opts),
        sink,
        arrivalKey,
        subscribers: progressFor(opts, episodes, `${kind}`),
      });
      await a.close();
      await sink.drain();
    } finally {
      await sink.settle();
      await small.close();
    }
    await small.finish(opts.now);
    say(
      opts,
      `${kind} run ${small.runId}: ${episodes.length} rows in ${small.folder} (apart from the formal evidence)`,
    );
    // what failed, on the terminal; the formal run is suggested only after a small run in which nothing failed
    const failures = failureSummary((await readRows(small.files.rows)).rows);
    for (const l of failureSectionLines(failures, `a ${kind} run: descriptive, never adjudicated`)) say(opts, l);
    if (failures.failed === 0) say(opts, `next: imep campaign run ${c.file}`);
    else
      say(
        opts,
        `next: fix the cause of the failures above, then run the ${kind} again (imep campaign ${kind} ${c.file} --n ${n})`,
      );
    return small.folder;
  } finally {
    await assembly?.close();
  }
}
