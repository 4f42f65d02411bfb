/**
 * One calibration campaign: the A / S / T ladder of one design on one seed band, run for real on a lite
 * simulator through the policy runtime's lockstep loop (src/runtime/lockstep.ts).
 *
 *   A  reference: the read hook is the identity. Records each unit's outcome, its fact (the task's
 *      evaluator-only fact field, read by the harness at reset — never shown to the policy), and its
 *      pre-point writes (the donor records S and T swap in).
 *   S  same-fact donor swap, T different-fact donor swap (read-swap.ts), donors drawn by the interventions'
 *      seeded `assignDonors` from the band's units (seed forked per band from the suite's registered seed).
 *
 * A unit without an eligible donor, or whose donor lacks one of its pre-point timesteps, is REMOVED from
 * the ladder (fail closed) and recorded; the readout counts only units with all three outcomes.
 */
import type { EpisodeBank } from '../banks/index.js';
import { makeLiteEnv } from '../sims/index.js';
import type { SimEnvironment, BatchPolicy, MemoryReadable } from '../runtime/index.js';
import type { FloatTensor } from '../core/index.js';
import {
  assignDonors,
  type DonorMode,
  checkDonorWrites,
  readSwapAtStepHook,
  type PrePointWrites,
  type SwapCounters,
} from '../interventions/index.js';
import { identityReadHook, type ReadHook } from '../banks/index.js';
import { runLockstep, type LockstepEpisode } from '../runtime/index.js';
import type { Latch } from './planted-effect-policy.js';

export interface LadderPolicy {
  readonly policy: BatchPolicy & MemoryReadable;
  /** The slot's episode bank (its entries are the pre-point writes of the episode that just ended). */
  bank(slot: number): EpisodeBank;
  /** The planted wrapper's latch of the slot's episode, when the design plants an effect. */
  latchOf?(slot: number): Latch | null;
}

export interface LadderTask {
  readonly envId: string;
  readonly kwargs: Readonly<Record<string, unknown>>;
  /** Evaluator-only field holding the fact (ShellGame: ballCup). */
  readonly factField: string;
  /** The registered point: the first decision step (reads from here on are swapped). */
  readonly pointStep: number;
  /** The bank leaf that holds the stored content (lite checkpoints: feature). */
  readonly leaf: string;
}

export interface LadderInput {
  readonly design: string;
  readonly band: number;
  readonly seeds: readonly number[];
  readonly task: LadderTask;
  readonly donorSeeds: { readonly S: string; readonly T: string };
}

export interface UnitOutcome {
  readonly seed: number;
  readonly fact: number;
  readonly a: boolean;
  /** null: the unit was removed from S/T (fail closed). */
  readonly s: boolean | null;
  readonly t: boolean | null;
  /** The planted wrapper's latched index in A (null: none latched or no wrapper). */
  readonly latchA: number | null;
  readonly removed: string | null;
}

export interface LadderRun {
  readonly design: string;
  readonly band: number;
  readonly units: readonly UnitOutcome[];
  readonly swaps: { readonly S: SwapCounters; readonly T: SwapCounters };
}

interface RefUnit {
  seed: number;
  fact: number;
  success: boolean;
  writes: Map<number, FloatTensor>;
  latch: number | null;
}

const scopeOf = (design: string, band: number, seed: number): string =>
  `${design}/band${band}/${String(seed).padStart(10, '0')}`;

async function runWith(
  lp: LadderPolicy,
  hook: ReadHook,
  envFor: (slot: number) => SimEnvironment,
  episodes: LockstepEpisode[],
): Promise<Map<number, boolean>> {
  lp.policy.setReadHook(hook);
  const out = await runLockstep(lp.policy, envFor, episodes);
  return new Map(out.map((o) => [o.episode.reset.seed as number, o.last.evaluator['success'] === true]));
}

export async function runLadder(lp: LadderPolicy, input: LadderInput): Promise<LadderRun> {
  const { task, seeds, design, band } = input;
  const envs = new Map<number, SimEnvironment>();
  const envFor = (slot: number): SimEnvironment => {
    let e = envs.get(slot);
    if (e === undefined) envs.set(slot, (e = makeLiteEnv(task.envId, task.kwargs)));
    return e;
  };
  const episodes = (cond: string): LockstepEpisode[] =>
    seeds.map((seed) => ({
      info: { episode: `${scopeOf(design, band, seed)}/${cond}`, task: task.envId, seed, attempt: 1 },
      reset: { seed },
    }));
  try {
    // A: the reference, which also supplies every donor's pre-point writes
    const ref = new Map<number, RefUnit>();
    lp.policy.setReadHook(identityReadHook);
    await runLockstep(lp.policy, envFor, episodes('A'), {
      subscribers: [
        {
          onEpisodeEnd: (slot, o) => {
            const seed = o.episode.reset.seed as number;
            const fact = o.first.evaluator[task.factField];
            const writes = new Map<number, FloatTensor>();
            for (const e of lp.bank(slot).entries()) if (e.timestep < task.pointStep) writes.set(e.timestep, e.feature);
            ref.set(seed, {
              seed,
              fact: typeof fact === 'number' ? fact : Number.NaN,
              success: o.last.evaluator['success'] === true,
              writes,
              latch: lp.latchOf?.(slot)?.index ?? null,
            });
          },
        },
      ],
    });
    const units = seeds.map((s) => ref.get(s) as RefUnit);
    const donorsFor = (mode: DonorMode, seed: string): Map<number, number | string> => {
      const a = assignDonors({
        units: units.map((u) => ({ scope: scopeOf(design, band, u.seed), fact: String(u.fact) })),
        mode,
        seed,
      });
      const bySeed = new Map(units.map((u) => [scopeOf(design, band, u.seed), u.seed]));
      const out = new Map<number, number | string>();
      for (const u of units) {
        const d = a.donors.get(scopeOf(design, band, u.seed));
        if (d === undefined) out.set(u.seed, `no eligible ${mode} donor in the band`);
        else {
          const donorSeed = bySeed.get(d) as number;
          out.set(
            u.seed,
            checkDonorWrites(u.writes, (ref.get(donorSeed) as RefUnit).writes)
              ? donorSeed
              : `donor ${donorSeed} lacks a pre-point write of the recipient`,
          );
        }
      }
      return out;
    };
    const swapRun = async (
      cond: 'S' | 'T',
      mode: DonorMode,
      seed: string,
    ): Promise<{ outcomes: Map<number, boolean>; counters: SwapCounters; removed: Map<number, string> }> => {
      const donors = donorsFor(mode, seed);
      const removed = new Map<number, string>();
      const byEpisode = new Map<string, PrePointWrites>();
      const run: number[] = [];
      for (const [s, d] of donors) {
        if (typeof d === 'string') removed.set(s, d);
        else {
          run.push(s);
          byEpisode.set(`${scopeOf(design, band, s)}/${cond}`, (ref.get(d) as RefUnit).writes);
        }
      }
      const counters: SwapCounters = { reads: 0, substitutedReads: 0, substitutedItems: 0 };
      const hook = readSwapAtStepHook({
        pointStep: task.pointStep,
        leaf: task.leaf,
        donorOf: (ep) => byEpisode.get(ep),
        counters,
      });
      const eps = episodes(cond).filter((e) => run.includes(e.reset.seed as number));
      const outcomes = await runWith(lp, hook, envFor, eps);
      return { outcomes, counters, removed };
    };
    const S = await swapRun('S', 'same-fact', input.donorSeeds.S);
    const T = await swapRun('T', 'different-fact', input.donorSeeds.T);
    lp.policy.setReadHook(identityReadHook);
    const out: UnitOutcome[] = units.map((u) => {
      const why = S.removed.get(u.seed) ?? T.removed.get(u.seed) ?? null;
      return {
        seed: u.seed,
        fact: u.fact,
        a: u.success,
        s: why === null ? (S.outcomes.get(u.seed) ?? null) : null,
        t: why === null ? (T.outcomes.get(u.seed) ?? null) : null,
        latchA: u.latch,
        removed: why,
      };
    });
    return { design, band, units: out, swaps: { S: S.counters, T: T.counters } };
  } finally {
    for (const e of envs.values()) await e.close().catch(() => undefined);
  }
}
