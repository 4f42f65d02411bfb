/**
 * Competence of a structured-bank RememberColor checkpoint (train_rc.py) in the cross-episode setting of
 * protocols/remembercolor-substitution.yaml, through the TS runtime (loadCheckpoint → ExternalMemoryPolicy with a
 * StructuredBank per slot, persistence across attempts → runLockstep) on the lite simulator. Each unit is one seed:
 * beginScope, attempt 1 (the cue is shown), then attempt 2 (reshowCueOnRetry false: the colour is only in memory),
 * then endScope. Conditions, all acting at the start of attempt 2 only:
 *   memory          reference (identity hook)
 *   blocked         N_block: every attempt-2 read returns nothing (interventions' blockHook)
 *   same-fact       S: before attempt 2's first query the unit's records get the payloads of the records of the
 *                   next unit of the band whose colour is the SAME (installed through StructuredBank.replaceRecords,
 *                   identities and keys kept), donors' records taken from the reference run at the same point
 *   different-fact  T: the same with the next unit whose colour DIFFERS
 * A unit whose donor holds a different number of records is not swapped and is counted as `unswapped` (fail closed).
 * Scored from evaluator-only fields: success, firstVisit (the first square touched), targetColorIndex.
 */
import type { BankRecord } from '../../src/banks/record.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import type { StepResult } from '../../src/runtime/environment.js';
import { ImepError } from '../../src/core/errors.js';
import { blockHook } from '../../src/interventions/no-access.js';
import { loadCheckpoint, type CheckpointOptions } from '../../src/policies/checkpoint.js';
import { runLockstep, type LockstepEpisode } from '../../src/runtime/lockstep.js';
import { ExternalMemoryPolicy } from '../../src/policies/memory-policy.js';
import { answerOf, taskSpec } from './demo-tasks.js';

export const RC_CONDITIONS = ['memory', 'blocked', 'same-fact', 'different-fact'] as const;
export type RcCondition = (typeof RC_CONDITIONS)[number];

export interface RcUnitScore {
  readonly seed: number;
  readonly answer: number;
  readonly success1: boolean;
  readonly success2: boolean;
  /** First square touched in attempt 2, or null. */
  readonly decision2: number | null;
  /** Records in the unit's scope at the start of attempt 2. */
  readonly records: number;
  /** S/T: the donor's seed and colour; null when no donor / not swapped. */
  readonly donor: { readonly seed: number; readonly answer: number } | null;
}

export interface RcConditionResult {
  readonly condition: RcCondition;
  readonly units: readonly RcUnitScore[];
}

export interface RcCompetenceOptions {
  readonly checkpoint: string;
  /** rc3-retry or rc5-retry (demo-tasks.ts). */
  readonly task: string;
  readonly seedFrom: number;
  readonly count: number;
  readonly batchSize?: number;
  readonly runtime?: CheckpointOptions;
}

interface Run {
  readonly first1: StepResult;
  readonly last1: StepResult;
  readonly last2: StepResult;
  readonly records: readonly BankRecord[];
}

export async function measureRcCompetence(opts: RcCompetenceOptions): Promise<RcConditionResult[]> {
  const spec = taskSpec(opts.task);
  const checkpoint = await loadCheckpoint(opts.checkpoint, opts.runtime);
  if (checkpoint.manifest.bank.kind !== 'structured-pcmb') {
    await checkpoint.release();
    throw new ImepError('E_USAGE', `${opts.checkpoint} runs an episode bank; competence-rc measures structured-bank checkpoints`, { field: '--checkpoint' });
  }
  const B = opts.batchSize ?? 32;
  const policy = new ExternalMemoryPolicy(checkpoint, { batchSize: B, persistence: 'across-attempts', decisionStep: (s) => s >= 10 });
  const seeds = Array.from({ length: opts.count }, (_, i) => opts.seedFrom + i);
  const envFor = (): ReturnType<typeof makeLiteEnv> => makeLiteEnv(spec.env, spec.kwargs);

  /** Runs every unit; `install(slot, seed)` acts on the slot's bank at the start of attempt 2. */
  const runAll = async (tag: string, install: (slot: number, seed: number, scope: string) => void, hook2: typeof blockHook | null): Promise<Map<number, Run>> => {
    const out = new Map<number, Run>();
    for (let c = 0; c < seeds.length; c += B) {
      const chunk = seeds.slice(c, c + B);
      const scope = (seed: number): string => `${spec.env}/${seed}/${tag}`;
      const eps = (attempt: number): LockstepEpisode[] =>
        chunk.map((seed) => ({ info: { episode: `${scope(seed)}/a${attempt}`, task: spec.env, seed, attempt }, reset: { seed, options: { attempt } } }));
      chunk.forEach((seed, slot) => policy.beginScope(slot, scope(seed)));
      policy.setReadHook((items) => items);
      const a1 = await runLockstep(policy, envFor, eps(1));
      const records = chunk.map((seed, slot) => {
        const recs = policy.structuredBank(slot).records(scope(seed));
        // lockstep fills slot i with episode i when the batch holds every episode: check it
        for (const r of recs) if (!r.sourceEpisode.startsWith(`${scope(seed)}/`)) throw new ImepError('E_INTERNAL', `slot ${slot} holds a record of ${r.sourceEpisode}`);
        return recs;
      });
      chunk.forEach((seed, slot) => install(slot, seed, scope(seed)));
      if (hook2 !== null) policy.setReadHook(hook2);
      const a2 = await runLockstep(policy, envFor, eps(2));
      chunk.forEach((seed, slot) => {
        policy.endScope(slot, scope(seed));
        const r1 = a1[slot], r2 = a2[slot];
        if (r1 === undefined || r2 === undefined) throw new ImepError('E_INTERNAL', `unit ${seed} did not run`);
        out.set(seed, { first1: r1.first, last1: r1.last, last2: r2.last, records: records[slot] as BankRecord[] });
      });
    }
    return out;
  };
  const score = (seed: number, r: Run, donor: RcUnitScore['donor']): RcUnitScore => {
    const v = r.last2.evaluator['firstVisit'];
    return {
      seed,
      answer: answerOf(spec, r.first1),
      success1: r.last1.evaluator['success'] === true,
      success2: r.last2.evaluator['success'] === true,
      decision2: typeof v === 'number' ? v : null,
      records: r.records.length,
      donor,
    };
  };
  const results: RcConditionResult[] = [];
  try {
    const ref = await runAll('memory', () => undefined, null);
    const refScores = seeds.map((s) => score(s, ref.get(s) as Run, null));
    results.push({ condition: 'memory', units: refScores });
    const blocked = await runAll('blocked', () => undefined, blockHook);
    results.push({ condition: 'blocked', units: seeds.map((s) => score(s, blocked.get(s) as Run, null)) });
    for (const condition of ['same-fact', 'different-fact'] as const) {
      const donorOf = new Map<number, RcUnitScore>();
      refScores.forEach((u, i) => {
        for (let j = 1; j < refScores.length; j++) {
          const d = refScores[(i + j) % refScores.length] as RcUnitScore;
          if ((d.answer === u.answer) === (condition === 'same-fact')) {
            donorOf.set(u.seed, d);
            break;
          }
        }
      });
      const swapped = new Set<number>();
      const run = await runAll(condition, (slot, seed, scope) => {
        const donor = donorOf.get(seed);
        const bank = policy.structuredBank(slot);
        const own = bank.records(scope);
        const theirs = donor === undefined ? undefined : ref.get(donor.seed)?.records;
        if (theirs === undefined || theirs.length !== own.length || own.length === 0) return;
        bank.replaceRecords(scope, own.map((r, i) => ({ ...r, payload: (theirs[i] as BankRecord).payload })));
        swapped.add(seed);
      }, null);
      results.push({
        condition,
        units: seeds.map((s) => {
          const d = donorOf.get(s);
          return score(s, run.get(s) as Run, swapped.has(s) && d !== undefined ? { seed: d.seed, answer: d.answer } : null);
        }),
      });
    }
  } finally {
    await policy.release();
  }
  return results;
}
