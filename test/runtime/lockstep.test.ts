/**
 * runLockstep's observable order — environment resets and steps, policy resetSlot/inferBatch calls (which slots,
 * in which order) and subscriber events — pinned against a reference: the straightforward implementation the
 * loop had before it kept its per-slot state in arrays (Map of running slots, sorted every step). Scripted
 * environments and a scripted policy, so every event is deterministic and no ONNX runs. Environments without a
 * synchronous step (bridged) are all sent their step before any result is taken (bridges/send-steps.ts); the
 * reference does the same for them, and steps environments with `stepSync` in turn as before.
 */
import { describe, expect, it } from 'vitest';
import type { NdArray, ResetRequest, SimEnvironment, StepResult } from '../../src/runtime/environment.js';
import {
  runLockstep,
  type EpisodeOutcome,
  type LockstepEpisode,
  type LockstepOptions,
} from '../../src/runtime/lockstep.js';
import type { BatchPolicy, EpisodeInfo, PolicyOutput, SlotObservation } from '../../src/runtime/policy.js';
import { stepsSynchronously, type StepsSynchronously } from '../../src/runtime/capabilities.js';

/** Episode `seed` lasts 1 + (seed * 7) % 5 steps. */
class ScriptedEnv implements SimEnvironment {
  readonly spec = { id: 'scripted' } as unknown as SimEnvironment['spec'];
  private seed = 0;
  protected t = 0;
  constructor(
    protected readonly slot: number,
    protected readonly log: string[],
  ) {}
  async reset(r: ResetRequest): Promise<StepResult> {
    this.seed = r.seed ?? 0;
    this.t = 0;
    this.log.push(`env${this.slot}.reset(${this.seed})`);
    return this.result();
  }
  async step(a: NdArray): Promise<StepResult> {
    this.t += 1;
    this.log.push(`env${this.slot}.step(${(a.data as Float32Array)[0]})`);
    return this.result();
  }
  async close(): Promise<void> {}
  protected result(): StepResult {
    return {
      obs: { tag: `${this.seed}/${this.t}` },
      evaluator: {},
      done: this.t >= 1 + ((this.seed * 7) % 5),
      step: this.t,
    };
  }
}

/** The same environment stepped in process (it has stepSync). */
class SyncScriptedEnv extends ScriptedEnv {
  stepSync(a: NdArray): StepResult {
    this.t += 1;
    this.log.push(`env${this.slot}.stepSync(${(a.data as Float32Array)[0]})`);
    return this.result();
  }
}

class ScriptedPolicy implements BatchPolicy {
  constructor(
    readonly maxBatch: number,
    private readonly log: string[],
  ) {}
  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    this.log.push(`policy.resetSlot(${slot}, ${info.episode})`);
  }
  async inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    this.log.push(`policy.infer(${requests.map((r) => `${r.slot}:${String(r.obs['tag'])}`).join(' ')})`);
    return requests.map((r) => ({
      action: { dtype: 'float32', shape: [1], data: Float32Array.of(r.slot) },
      readouts: {},
    }));
  }
}

/**
 * The reference loop, written plainly: the calls and their order the runtime's one loop must make (ended episodes
 * leave and refill after every result of the step is taken, as the campaign runner always did).
 */
async function referenceLockstep(
  policy: BatchPolicy,
  envFor: (slot: number) => SimEnvironment,
  episodes: readonly LockstepEpisode[],
  options: LockstepOptions = {},
): Promise<EpisodeOutcome[]> {
  const subs = options.subscribers ?? [];
  const maxSteps = options.maxSteps ?? Infinity;
  const envs = new Map<number, SimEnvironment>();
  const env = (slot: number): SimEnvironment => {
    let e = envs.get(slot);
    if (e === undefined) {
      e = envFor(slot);
      envs.set(slot, e);
    }
    return e;
  };
  const outcomes: (EpisodeOutcome | undefined)[] = new Array<EpisodeOutcome | undefined>(episodes.length);
  const running = new Map<
    number,
    { index: number; episode: LockstepEpisode; first: StepResult; current: StepResult; steps: number }
  >();
  let next = 0;
  const start = async (slot: number): Promise<void> => {
    if (next >= episodes.length) return;
    const index = next++;
    const episode = episodes[index] as LockstepEpisode;
    const first = await env(slot).reset(episode.reset);
    await policy.resetSlot(slot, episode.info);
    for (const s of subs) s.onEpisodeStart?.(slot, episode, first);
    running.set(slot, { index, episode, first, current: first, steps: 0 });
  };
  for (let slot = 0; slot < policy.maxBatch; slot++) await start(slot);
  while (running.size > 0) {
    const slots = [...running.keys()].sort((a, b) => a - b);
    const outputs = await policy.inferBatch(slots.map((slot) => ({ slot, obs: running.get(slot)!.current.obs })));
    // bridged environments: every step sent, in slot order, before any result is taken
    const sent = slots.map((slot, i) =>
      stepsSynchronously(env(slot)) ? undefined : env(slot).step(outputs[i]!.action),
    );
    // every result of the step taken first; then the ended episodes leave and their slots refill, in slot order
    const ended: number[] = [];
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      const r = running.get(slot)!;
      const output = outputs[i]!;
      const before = r.current;
      const e = env(slot);
      const after =
        sent[i] !== undefined ? await sent[i]! : (e as SimEnvironment & StepsSynchronously).stepSync(output.action);
      r.current = after;
      r.steps += 1;
      for (const s of subs) s.onStep?.(slot, r.episode, before, output, after);
      if (after.done || r.steps >= maxSteps) ended.push(slot);
    }
    for (const slot of ended) {
      const r = running.get(slot)!;
      const outcome: EpisodeOutcome = { episode: r.episode, first: r.first, last: r.current, steps: r.steps };
      outcomes[r.index] = outcome;
      running.delete(slot);
      for (const s of subs) s.onEpisodeEnd?.(slot, outcome);
      await start(slot);
    }
  }
  return outcomes.map((o) => o!);
}

async function traceOf(
  impl: typeof runLockstep,
  batch: number,
  count: number,
  maxSteps?: number,
  sync = false,
): Promise<string[]> {
  const log: string[] = [];
  const episodes = Array.from({ length: count }, (_, i) => ({ info: { episode: `e${i}` }, reset: { seed: i + 1 } }));
  const outcomes = await impl(
    new ScriptedPolicy(batch, log),
    (slot) => (sync ? new SyncScriptedEnv(slot, log) : new ScriptedEnv(slot, log)),
    episodes,
    {
      ...(maxSteps === undefined ? {} : { maxSteps }),
      subscribers: [
        {
          onEpisodeStart: (slot, ep, first) => log.push(`start ${slot} ${ep.info.episode} ${String(first.obs['tag'])}`),
          onStep: (slot, ep, before, _out, after) =>
            log.push(`step ${slot} ${ep.info.episode} ${String(before.obs['tag'])}→${String(after.obs['tag'])}`),
          onEpisodeEnd: (slot, o) =>
            log.push(`end ${slot} ${o.episode.info.episode} steps=${o.steps} last=${String(o.last.obs['tag'])}`),
        },
      ],
    },
  );
  log.push(
    `outcomes ${outcomes.map((o) => `${o.episode.info.episode}:${o.steps}:${String(o.first.obs['tag'])}:${String(o.last.obs['tag'])}`).join(' ')}`,
  );
  return log;
}

describe('runLockstep', () => {
  it.each([
    [1, 5, undefined],
    [3, 11, undefined],
    [4, 9, 2],
    [8, 3, undefined], // more slots than episodes
    [2, 0, undefined],
  ] as const)(
    'batch %i over %i episodes (maxSteps %s) makes exactly the reference calls in the reference order',
    async (batch, count, maxSteps) => {
      for (const sync of [false, true]) {
        const got = await traceOf(runLockstep, batch, count, maxSteps, sync);
        const want = await traceOf(referenceLockstep, batch, count, maxSteps, sync);
        expect(got).toEqual(want);
        if (count > 0) expect(got.length).toBeGreaterThan(count * 3);
      }
    },
  );

  it('sends every bridged step of a batch before taking a result; steps in-process environments in turn', async () => {
    const bridged = await traceOf(runLockstep, 3, 3);
    const firstBatch = bridged.slice(bridged.indexOf('policy.infer(0:1/0 1:2/0 2:3/0)') + 1).slice(0, 6);
    expect(firstBatch).toEqual([
      'env0.step(0)',
      'env1.step(1)',
      'env2.step(2)',
      'step 0 e0 1/0→1/1',
      'step 1 e1 2/0→2/1',
      'step 2 e2 3/0→3/1',
    ]);
    const inProcess = await traceOf(runLockstep, 3, 3, undefined, true);
    const firstSync = inProcess.slice(inProcess.indexOf('policy.infer(0:1/0 1:2/0 2:3/0)') + 1).slice(0, 6);
    expect(firstSync).toEqual([
      'env0.stepSync(0)',
      'step 0 e0 1/0→1/1',
      'env1.stepSync(1)',
      'step 1 e1 2/0→2/1',
      'env2.stepSync(2)',
      'step 2 e2 3/0→3/1',
    ]);
  });

  it('pins the refill order of a small ragged run', async () => {
    const log = await traceOf(runLockstep, 2, 3);
    // seeds 1, 2, 3 last 3, 5, 2 steps; e0 leaves and e2 takes slot 0 once every result of that step is taken
    expect(log.indexOf('step 1 e1 2/2→2/3')).toBeLessThan(log.indexOf('end 0 e0 steps=3 last=1/3'));
    expect(log.indexOf('end 0 e0 steps=3 last=1/3')).toBeLessThan(log.indexOf('start 0 e2 3/0'));
    expect(log.filter((l) => l.startsWith('policy.infer') || l.startsWith('start') || l.startsWith('end'))).toEqual([
      'start 0 e0 1/0',
      'start 1 e1 2/0',
      'policy.infer(0:1/0 1:2/0)',
      'policy.infer(0:1/1 1:2/1)',
      'policy.infer(0:1/2 1:2/2)',
      'end 0 e0 steps=3 last=1/3',
      'start 0 e2 3/0',
      'policy.infer(0:3/0 1:2/3)',
      'policy.infer(0:3/1 1:2/4)',
      'end 0 e2 steps=2 last=3/2',
      'end 1 e1 steps=5 last=2/5',
    ]);
  });
});
