/**
 * Competence of a lite checkpoint under three memory conditions, run through the TS runtime (loadCheckpoint →
 * ExternalMemoryPolicy → runLockstep) on the lite simulator over a seed band:
 *   memory          reference: the bank's reads reach the network unchanged (identity hook)
 *   blocked         N_block: every read returns nothing (interventions' blockHook; bank and clock untouched)
 *   different-fact  T: every retrieved item's `feature` is replaced by the donor episode's write at the same
 *                   timestep (identity kept), the donor being the next episode of the band whose answer differs;
 *                   donor writes are taken from the reference run.
 * Scored from evaluator-only fields (never shown to the policy): success, firstVisit (the decision), the answer.
 */
import type { ReadHook, RetrievedItem } from '../../src/banks/record.js';
import type { FloatTensor } from '../../src/core/tensor.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import type { StepResult } from '../../src/runtime/environment.js';
import { blockHook } from '../../src/interventions/no-access.js';
import { loadCheckpoint, type CheckpointOptions } from '../../src/policies/checkpoint.js';
import { runLockstep, type LockstepEpisode } from '../../src/runtime/lockstep.js';
import { ExternalMemoryPolicy } from '../../src/policies/memory-policy.js';
import { answerOf, taskSpec, type TaskSpec } from './demo-tasks.js';

export const CONDITIONS = ['memory', 'blocked', 'different-fact'] as const;
export type Condition = (typeof CONDITIONS)[number];

export interface EpisodeScore {
  readonly seed: number;
  readonly answer: number;
  readonly success: boolean;
  /** First object touched (the decision), or null when none was touched. */
  readonly decision: number | null;
  readonly steps: number;
  /** For different-fact: the donor episode's answer. */
  readonly donorAnswer?: number;
}

export interface ConditionResult {
  readonly condition: Condition;
  readonly n: number;
  readonly successes: number;
  readonly episodes: readonly EpisodeScore[];
  /** Reads whose items were replaced (different-fact only). */
  readonly substitutedReads: number;
}

export interface CompetenceOptions {
  readonly checkpoint: string;
  readonly task: string;
  readonly seedFrom: number;
  readonly count: number;
  readonly batchSize?: number;
  readonly conditions?: readonly Condition[];
  readonly runtime?: CheckpointOptions;
}

function score(spec: TaskSpec, seed: number, first: StepResult, last: StepResult, steps: number): EpisodeScore {
  const v = last.evaluator['firstVisit'];
  return { seed, answer: answerOf(spec, first), success: last.evaluator['success'] === true, decision: typeof v === 'number' ? v : null, steps };
}

export async function measureCompetence(opts: CompetenceOptions): Promise<ConditionResult[]> {
  const spec = taskSpec(opts.task);
  const conditions = opts.conditions ?? CONDITIONS;
  const checkpoint = await loadCheckpoint(opts.checkpoint, opts.runtime);
  const policy = new ExternalMemoryPolicy(checkpoint, { batchSize: opts.batchSize ?? 32 });
  const seeds = Array.from({ length: opts.count }, (_, i) => opts.seedFrom + i);
  const episodes = (tag: string): LockstepEpisode[] => seeds.map((seed) => ({ info: { episode: `${spec.env}/${seed}/${tag}`, task: spec.env, seed }, reset: { seed } }));
  const envFor = (): ReturnType<typeof makeLiteEnv> => makeLiteEnv(spec.env, spec.kwargs);
  const results: ConditionResult[] = [];
  try {
    // The reference run always happens first: it supplies the donors' writes.
    const writes = new Map<number, Map<number, FloatTensor>>();
    policy.setReadHook((items) => items);
    const ref = await runLockstep(policy, envFor, episodes('memory'), {
      subscribers: [{
        onEpisodeEnd: (slot, o) => {
          const byStep = new Map<number, FloatTensor>();
          for (const e of policy.bank(slot).entries()) byStep.set(e.timestep, e.feature);
          writes.set(o.episode.reset.seed, byStep);
        },
      }],
    });
    const refScores = ref.map((o, i) => score(spec, seeds[i] as number, o.first, o.last, o.steps));
    if (conditions.includes('memory')) results.push(summarise('memory', refScores, 0));
    if (conditions.includes('blocked')) {
      policy.setReadHook(blockHook);
      const out = await runLockstep(policy, envFor, episodes('blocked'));
      results.push(summarise('blocked', out.map((o, i) => score(spec, seeds[i] as number, o.first, o.last, o.steps)), 0));
    }
    if (conditions.includes('different-fact')) {
      const donorOf = new Map<number, number>();
      refScores.forEach((s, i) => {
        for (let j = 1; j < refScores.length; j++) {
          const d = refScores[(i + j) % refScores.length] as EpisodeScore;
          if (d.answer !== s.answer) {
            donorOf.set(s.seed, d.seed);
            break;
          }
        }
      });
      const episodeSeed = new Map(episodes('different-fact').map((e) => [e.info.episode, e.reset.seed]));
      let substituted = 0;
      const hook: ReadHook = (items, ctx) => {
        const seed = episodeSeed.get(ctx.episode);
        const donor = seed === undefined ? undefined : writes.get(donorOf.get(seed) ?? -1);
        if (donor === undefined || items.length === 0) return items;
        substituted++;
        return items.map((it): RetrievedItem => {
          const f = donor.get(it.identity.timestep);
          return f === undefined ? it : { identity: it.identity, leaves: { ...it.leaves, feature: f } };
        });
      };
      policy.setReadHook(hook);
      const out = await runLockstep(policy, envFor, episodes('different-fact'));
      const scores = out.map((o, i) => {
        const s = score(spec, seeds[i] as number, o.first, o.last, o.steps);
        const donorSeed = donorOf.get(s.seed);
        const donorAnswer = refScores.find((r) => r.seed === donorSeed)?.answer;
        return donorAnswer === undefined ? s : { ...s, donorAnswer };
      });
      results.push(summarise('different-fact', scores, substituted));
    }
  } finally {
    await policy.release();
  }
  return results;
}

function summarise(condition: Condition, episodes: EpisodeScore[], substitutedReads: number): ConditionResult {
  return { condition, n: episodes.length, successes: episodes.filter((e) => e.success).length, episodes, substitutedReads };
}
