/**
 * `imep campaign run FILE`: protocol file → evidence unit, the main job of the product.
 *
 *   load + validate the protocol (allowlists disjoint: E_ALLOWLIST_OVERLAP) → plan
 *   unit folder `<campaigns>/<id>-<hash12>/`; another unit of the same id → E_PROTOCOL_FROZEN
 *   new unit: checkpoint verified (path + SHA-256: E_CHECKPOINT_MISSING / E_CHECKPOINT_MISMATCH), the
 *     runtime checked against every condition, seed bands checked against the registry — all before
 *     anything is written — then created and precommitted in a temporary folder renamed into place
 *   precommitted → formal run → run-complete → seal;  running → resume → … ;  run-complete → seal;
 *   sealed or later → its status and the next command (never a second unit for one frozen protocol).
 *
 * Every refusal is an ImepError (one line, non-zero exit in the CLI) thrown before the write it refuses.
 */
import { canonicalJson, ImepError, isImepError } from '../core/index.js';
import { episodesPerUnit, checkShardCount, planUnits } from '../protocol/index.js';
import {
  readRows,
  failureSectionLines,
  failureSummary,
  completeRun,
  resumeRun,
  startRun,
  type FormalRun,
  isSealedState,
  NEXT_COMMAND,
  currentOperator,
  sameOperatorOverride,
  seal,
  formatStatus,
  unitStatus,
  unitPaths,
  lockUnit,
  readUnitState,
} from '../evidence/index.js';
import { checkHandlesPerServer, checkServerCount } from './bridge-envs.js';
import {
  arrivalKeyOf,
  batchOf,
  createAndPrecommit,
  openCampaign,
  openUnit,
  progressFor,
  say,
  type Campaign,
  type CampaignOptions,
} from './campaign-setup.js';
import { announceSimulators, assemble, assembleAndPrecommit, withAssembly, type Assembly } from './assemble.js';
import { runShard } from './campaign-variants.js';
import { readDurableDonors, runPlan } from './run-plan.js';
import { RowSink } from './row-sink.js';
import { interruptedError, STOP_REQUESTED } from './run-stop.js';
import type { UnitJob } from './types.js';
import { FailureBudgetWatch } from './failure-budget.js';
import type { ShardSpec } from './shard.js';
import { exists } from './unit-dir.js';

export type Through = 'seal' | 'closeout';

export interface RunCampaignOptions extends CampaignOptions {
  readonly through?: Through;
  readonly shard?: ShardSpec;
  /** With through 'closeout': why the operator who ran the conditions may adjudicate them (recorded as the override). */
  readonly sameOperatorReason?: string;
  /**
   * With through 'closeout': the post-seal steps (adjudicate → cross-check → closeout → report), run on the sealed
   * unit under its lock. The runner does not know them: src/app/pipeline.ts passes them in.
   */
  readonly afterSeal?: (unitDir: string, opts: RunCampaignOptions) => Promise<void>;
}

/** `imep campaign precommit FILE`: the unit exists and is precommitted afterwards; returns its folder. */
export async function precommitCampaign(file: string, opts: CampaignOptions): Promise<string> {
  const c = await openCampaign(file, opts);
  if (await exists(c.dir)) {
    const snap = await readUnitState(c.dir);
    say(
      opts,
      `unit ${c.dir} is already '${snap.state}' — next: ${NEXT_COMMAND[snap.state]} ${snap.state === 'precommitted' ? c.file : c.dir}`,
    );
    return c.dir;
  }
  await withAssembly(c, opts, (a) => createAndPrecommit(c, a, opts));
  say(opts, `precommitted ${c.dir} (protocol ${c.hash.slice(0, 12)}…, ${c.plan.episodes.length} planned rows)`);
  say(opts, `next: imep campaign run ${c.file}`);
  return c.dir;
}

/** The durable rows a resumed run may recompute: the last `perUnit` rows, by seq. */
async function lastRows(file: string, perUnit: number, nextSeq: number): Promise<Map<number, string>> {
  const rows = (await readRows(file)).rows.filter((r) => r.seq < nextSeq); // the rows resume counted, no later
  return new Map(rows.slice(Math.max(0, rows.length - perUnit)).map((r) => [r.seq, canonicalJson(r)]));
}

/** What a run session records of how its policy host and simulator servers were isolated and limited. */
function sessionIsolation(a: Assembly): Record<string, unknown> {
  const { policy: provider, simulators } = a;
  return {
    ...(provider.isolation === undefined ? {} : { policyIsolation: provider.isolation }),
    ...(provider.limits === undefined ? {} : { policyLimits: provider.limits }),
    ...(simulators.isolation === null ? {} : { simulatorIsolation: simulators.isolation }),
    ...(simulators.limits === null ? {} : { simulatorLimits: simulators.limits }),
    ...(simulators.environment === undefined ? {} : { simulatorEnvironment: simulators.environment }),
  };
}

async function formalRun(c: Campaign, a: Assembly, opts: CampaignOptions): Promise<void> {
  const snap = await readUnitState(c.dir);
  const operator = opts.operator ?? currentOperator();
  const isolation = sessionIsolation(a);
  announceSimulators(a, opts);
  let run: FormalRun;
  let startSeq = 0;
  let existing = new Map<number, string>();
  // the registered execution-failure budget watches what the sink writes; a resume whose rows spent it refuses here,
  // before the run record is touched
  const durable = snap.state === 'precommitted' ? [] : (await readRows(unitPaths(c.dir).rows)).rows;
  const next = `fix the cause and run \`imep campaign resume ${c.dir}\` (it goes on at the next unit; the rows written stay as they are, failed ones included), or set this run aside with \`imep campaign fail-run ${c.dir} --reason "…"\` (its rows move to failed-runs/, the seeds are not spent) and run it again`;
  const budgetOf = (rows: typeof durable): FailureBudgetWatch =>
    new FailureBudgetWatch(c.protocol.executionFailures.budget, c.plan.episodes, rows, next);
  budgetOf(durable).assertWithin();
  if (snap.state === 'precommitted') {
    run = await startRun(c.dir, { operator, ...isolation, ...(opts.now ? { now: opts.now } : {}) });
  } else {
    const r = await resumeRun(c.dir, { operator, ...isolation, ...(opts.now ? { now: opts.now } : {}) });
    run = r.run;
    startSeq = r.report.nextSeq;
    existing = await lastRows(unitPaths(c.dir).rows, episodesPerUnit(c.protocol), startSeq);
    const repaired = r.report.tornRow ? `; truncated a torn final line (${r.report.tornRow.bytes} bytes)` : '';
    say(opts, `resuming ${c.dir} at row ${startSeq} of ${c.plan.episodes.length}${repaired}`);
  }
  // the rows this run goes on from, exactly (the rows it writes are watched as they are appended)
  const budget = budgetOf(durable.filter((r) => r.seq < startSeq));
  const todo = c.plan.episodes.filter((e) => e.seq >= startSeq);
  const sink = new RowSink(
    budget.wrap(run),
    todo.map((e) => e.seq),
    existing,
    unitPaths(c.dir).rows,
  );
  const arrivalKey = await arrivalKeyOf(c.dir);
  const stop = opts.stop;
  try {
    const plan = {
      protocol: c.protocol,
      episodes: c.plan.episodes,
      policies: a.policy,
      envs: a.simulators.envs,
      batchSize: batchOf(opts),
      sink,
      startSeq,
      arrivalKey,
      ...(startSeq > 0 ? { durableDonors: await readDurableDonors(unitPaths(c.dir).tracesDir) } : {}),
      subscribers: progressFor(opts, todo, c.protocol.id, () => sink.written),
      prepassSubscribers: (units: readonly UnitJob[]) =>
        progressFor(
          opts,
          units.flatMap((u) => u.episodes),
          `${c.protocol.id} donor pre-pass`,
          undefined,
          3,
        ),
      ...(stop === undefined ? {} : { abort: () => (stop.requested === null ? undefined : STOP_REQUESTED) }),
    };
    await (stop === undefined
      ? runPlan(plan)
      : stop.armedDuring(
          () => sink.freeze(),
          () => runPlan(plan),
        ));
    await sink.drain();
  } catch (e) {
    // a clean stop (SIGINT/SIGTERM): whatever ended the loop, the rows queued before the request are written, then
    // the one line that says how many rows are durable (counted in the file) and how to go on
    if (stop?.requested != null) {
      await sink.settle();
      const durableRows = (await readRows(unitPaths(c.dir).rows)).rows.length;
      throw interruptedError(durableRows, c.plan.episodes.length, c.dir, stop.command);
    }
    // a budget stop: the terminal gets the Failures section, then the error (its line says how to go on)
    if (isImepError(e) && e.code === 'E_FAILURE_BUDGET')
      for (const l of failureSectionLines(budget.summary())) say(opts, l);
    throw e;
  } finally {
    await sink.settle();
    await run.close();
  }
  await completeRun(c.dir, opts.now ? { now: opts.now } : {});
}

async function sealAndSay(c: Campaign, opts: CampaignOptions): Promise<void> {
  opts.progress?.write(`sealing ${c.dir}: hashing every file into the manifest …\n`);
  const r = await seal(c.dir, { operator: opts.operator ?? currentOperator(), ...(opts.now ? { now: opts.now } : {}) });
  say(opts, `sealed ${c.dir}: ${c.plan.episodes.length} rows, Merkle root ${r.record.merkle.root}`);
}

async function sayWhere(c: Campaign, opts: CampaignOptions): Promise<void> {
  const s = await unitStatus(c.dir);
  say(opts, formatStatus(s));
  // the error text of failed rows on the terminal, not only inside rows/rows.jsonl
  const rows = await readRows(unitPaths(c.dir).rows).then(
    (r) => r.rows,
    () => [],
  );
  for (const l of failureSectionLines(failureSummary(rows))) say(opts, l);
  say(opts, `unit: ${c.dir}`);
  if (s.state !== 'closed') say(opts, `next: ${s.next} ${c.dir}`);
  else say(opts, `next: imep campaign verify ${c.dir}`);
}

async function continueCampaign(c: Campaign, opts: RunCampaignOptions, assembled: Assembly | null): Promise<void> {
  let assembly = assembled;
  // one writer per unit: a second run/resume of it refuses here instead of appending the same rows again
  const lock = await lockUnit(c.dir).catch(async (e: unknown) => {
    await assembly?.close();
    throw e;
  });
  if (lock.tookOverFrom !== null)
    say(
      opts,
      `took over the lock of a process that is gone (pid ${lock.tookOverFrom.pid}, since ${lock.tookOverFrom.startedAt})`,
    );
  try {
    const snap = await readUnitState(c.dir);
    let { state } = snap;
    if (state === 'created')
      throw new ImepError('E_OUT_OF_ORDER', `unit ${c.dir} was created but never precommitted`, {
        hint: 'remove the folder and run again',
      });
    if (state === 'precommitted' || state === 'running') {
      assembly ??= await assemble(c, opts);
      await formalRun(c, assembly, opts);
      state = 'run-complete';
    }
    if (assembly !== null) {
      await assembly.close();
      assembly = null;
    }
    // a seal killed between unit.json ('sealed') and seal.json is completed, never left for adjudication
    if (state === 'run-complete' || snap.sealInterrupted) await sealAndSay(c, opts);
    if (opts.through === 'closeout') {
      if (opts.afterSeal === undefined)
        throw new ImepError(
          'E_INTERNAL',
          "--through closeout needs the pipeline's post-seal steps (run it through src/app/pipeline.ts)",
        );
      await opts.afterSeal(c.dir, opts);
    }
    await sayWhere(c, opts);
  } finally {
    await assembly?.close();
    await lock.release();
  }
}

/**
 * `--through closeout` on a unit this command still runs adjudicates as the operator who ran the conditions: the
 * two-operator rule then needs the user's reason, asked for before anything is written (not after the run).
 */
async function checkSameOperatorReason(c: Campaign, opts: RunCampaignOptions): Promise<void> {
  if (opts.through !== 'closeout' || sameOperatorOverride(opts.sameOperatorReason) !== undefined) return;
  if ((await exists(c.dir)) && isSealedState((await readUnitState(c.dir)).state)) return; // run already: another session may adjudicate
  throw new ImepError(
    'E_USAGE',
    '--through closeout adjudicates as the operator who runs the conditions in this same command, which the two-operator rule allows only with a recorded reason',
    {
      field: '--same-operator-reason',
      hint: 'pass --same-operator-reason "<why one operator may adjudicate its own run>" (recorded in the adjudication), or stop at the seal and adjudicate from another session',
    },
  );
}

/** `imep campaign run FILE [--through seal|closeout] [--shard i/N]`. */
export async function runCampaign(file: string, opts: RunCampaignOptions): Promise<string> {
  batchOf(opts);
  const c = await openCampaign(file, opts);
  await checkSameOperatorReason(c, opts);
  if (opts.envs === undefined) {
    checkServerCount(c.protocol, c.file, opts.simulators?.servers);
    checkHandlesPerServer(c.protocol, c.file, batchOf(opts), opts.simulators?.servers);
  }
  if (opts.shard !== undefined) checkShardCount(opts.shard.count, planUnits(c.plan).length, '--shard');
  if (await exists(c.dir)) {
    await (opts.shard !== undefined ? runShard(c, opts.shard, opts, null) : continueCampaign(c, opts, null));
    return c.dir;
  }
  // a new unit (what its sandboxes would bind was checked with precommit's other write-free checks, openCampaign):
  // it is assembled — simulators and policy opened, every condition checked — before the precommit writes anything,
  // and its run uses that assembly
  const a = await assembleAndPrecommit(c, opts);
  await (opts.shard !== undefined ? runShard(c, opts.shard, opts, a) : continueCampaign(c, opts, a));
  return c.dir;
}

/** `imep campaign resume UNIT`: continues an interrupted formal run from the unit's frozen protocol. */
export async function resumeCampaign(unitDir: string, opts: RunCampaignOptions): Promise<string> {
  const c = await openUnit(unitDir);
  await checkSameOperatorReason(c, opts);
  await continueCampaign(c, opts, null);
  return c.dir;
}
