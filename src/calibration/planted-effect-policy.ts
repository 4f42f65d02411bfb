/**
 * The planted-effect policy wrapper (after the paper's R-1 wrapper): a known amount of memory use added
 * to a policy from outside, so the ladder's verdict has a known answer.
 *
 * It wraps any batched policy whose reads pass a read hook (BatchPolicy & MemoryReadable). The harness's
 * hook (an intervention) is composed INSIDE the wrapper's observation: the wrapper sees exactly what the
 * network is fed after the intervention — never the bank behind it, never evaluator fields. At the
 * first read of an episode at elapsed step ≥ `fromStep` that returns ≥ 1 item, it LATCHES a target index:
 *   - 'fact-conditioned': the fact decoded from that read (fact-decoder.ts) — an intervention that swaps in
 *     another fact moves the target, one that keeps the fact (same-fact donor) does not;
 *   - 'unconditioned': an index drawn uniformly from the wrapper's own registered stream,
 *     `Prng(seed).fork(episode id)` (the episode id is what the harness passes at reset, and differs per
 *     condition), so A, S and T each draw an independent index, whatever the read holds: the perturbation
 *     is independent of the fact, changes outcomes under S and T at the same rate, and must produce no
 *     fact-specific effect (θ = 0). (A hash of the read's bytes is NOT fact-independent: the lite cue
 *     latents take a handful of byte patterns per fact, so such a hash is nearly a function of the fact.)
 * From the latch on, every action gets `delta · unit(targets[index] − pose)` added after the policy's
 * prediction (pose: the method-visible `poseField` of the observation, e.g. toolPosition). delta = 0 adds
 * nothing (the wrapper is then the identity on actions, and is checked to be). A read that returns nothing
 * latches nothing (no fact was read, nothing is planted).
 *
 * Attempts/episodes are independent: `resetSlot` clears the slot's latch.
 */
import type { ReadContext, ReadHook, RetrievedItem } from '../banks/index.js';
import { identityReadHook } from '../banks/index.js';
import { ImepError, Prng, type Seed } from '../core/index.js';
import type { BatchPolicy, EpisodeInfo, MemoryReadable, PolicyOutput, SlotObservation } from '../runtime/index.js';
import { decodeFact, summariseRead, type FactDecoderSpec } from './fact-decoder.js';

export type PlantedMode = 'fact-conditioned' | 'unconditioned';

export interface PlantedEffectOptions {
  readonly delta: number;
  readonly mode: PlantedMode;
  /** Target points by index (the fact-direction table), e.g. the three cup centres. */
  readonly targets: readonly (readonly [number, number])[];
  /** Required for 'fact-conditioned'. */
  readonly decoder: FactDecoderSpec | null;
  /** The first elapsed step whose read may latch (the task's first decision step). */
  readonly fromStep: number;
  /** The method-visible observation field holding the 2-D pose. */
  readonly poseField: string;
  /** The registered seed of the unconditioned variant's draws (required for 'unconditioned'). */
  readonly seed?: Seed;
}

export interface Latch {
  /** Elapsed step of the read that latched. */
  readonly step: number;
  readonly index: number;
}

interface SlotState {
  episode: string | null;
  step: number;
  latch: Latch | null;
}

export type WrappablePolicy = BatchPolicy & MemoryReadable;

export class PlantedEffectPolicy implements BatchPolicy, MemoryReadable {
  readonly maxBatch: number;
  private readonly slots: SlotState[];
  private readonly bySlotEpisode = new Map<string, number>();

  constructor(
    private readonly inner: WrappablePolicy,
    private readonly opts: PlantedEffectOptions,
  ) {
    if (!(opts.delta >= 0 && Number.isFinite(opts.delta)))
      throw new ImepError('E_USAGE', `planted delta must be a finite number ≥ 0, got ${opts.delta}`, {
        field: 'planted.delta',
      });
    if (opts.targets.length < 2)
      throw new ImepError('E_USAGE', 'the planted target table needs at least 2 entries', { field: 'planted.targets' });
    if (opts.mode === 'fact-conditioned') {
      if (opts.decoder === null)
        throw new ImepError('E_USAGE', 'a fact-conditioned planted effect needs a fitted fact decoder', {
          field: 'planted.decoder',
        });
      if (opts.decoder.centroids.length !== opts.targets.length) {
        throw new ImepError(
          'E_USAGE',
          `the decoder knows ${opts.decoder.centroids.length} facts, the target table has ${opts.targets.length}`,
          { field: 'planted.targets' },
        );
      }
    } else if (opts.seed === undefined) {
      throw new ImepError('E_USAGE', 'an unconditioned planted effect needs a registered seed', {
        field: 'planted.seed',
      });
    }
    this.maxBatch = inner.maxBatch;
    this.slots = Array.from({ length: inner.maxBatch }, () => ({ episode: null, step: 0, latch: null }));
    this.setReadHook(identityReadHook);
  }

  /** The harness's hook runs first; the wrapper observes what it returns. */
  setReadHook(hook: ReadHook): void {
    this.inner.setReadHook((items, ctx) => {
      const out = hook(items, ctx);
      this.observe(out, ctx);
      return out;
    });
  }

  /** The latch of a slot's current episode (null: nothing latched yet). For audits, never fed back. */
  latchOf(slot: number): Latch | null {
    return this.slotAt(slot).latch;
  }

  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    const s = this.slotAt(slot);
    if (s.episode !== null) this.bySlotEpisode.delete(s.episode);
    s.episode = info.episode;
    s.step = 0;
    s.latch = null;
    this.bySlotEpisode.set(info.episode, slot);
    await this.inner.resetSlot(slot, info);
  }

  async inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    const outs = await this.inner.inferBatch(requests);
    return requests.map((r, i) => {
      const s = this.slotAt(r.slot);
      s.step += 1;
      const out = outs[i] as PolicyOutput;
      if (s.latch === null || this.opts.delta === 0) return out;
      const pose = r.obs[this.opts.poseField];
      const p =
        pose !== null && typeof pose === 'object' && 'data' in pose
          ? (pose.data as ArrayLike<number>)
          : (pose as unknown as ArrayLike<number> | undefined);
      if (p === undefined || typeof p.length !== 'number' || p.length < 2) {
        throw new ImepError('E_USAGE', `the planted effect needs a 2-D ${this.opts.poseField} in the observation`, {
          field: 'planted.poseField',
        });
      }
      const target = this.opts.targets[s.latch.index] as readonly [number, number];
      const dx = target[0] - Number(p[0]);
      const dy = target[1] - Number(p[1]);
      const len = Math.hypot(dx, dy);
      const a = out.action.data as Float32Array;
      if (a.length < 2)
        throw new ImepError('E_USAGE', 'the planted effect needs an action of at least 2 values', { field: 'planted' });
      const action = Float32Array.from(a);
      if (len > 0) {
        action[0] = (action[0] as number) + (this.opts.delta * dx) / len;
        action[1] = (action[1] as number) + (this.opts.delta * dy) / len;
      }
      return { action: { ...out.action, data: action }, readouts: out.readouts };
    });
  }

  private observe(items: readonly RetrievedItem[], ctx: ReadContext): void {
    const slot = this.bySlotEpisode.get(ctx.episode);
    if (slot === undefined) return;
    const s = this.slots[slot] as SlotState;
    // this read belongs to the infer call at elapsed step s.step (the counter advances after the call)
    if (s.latch !== null || s.step < this.opts.fromStep || items.length === 0) return;
    let index: number | null;
    if (this.opts.mode === 'fact-conditioned') {
      const decoder = this.opts.decoder as FactDecoderSpec;
      index = decodeFact(decoder, summariseRead(items, decoder.leaf));
    } else {
      index = new Prng(this.opts.seed as Seed).fork(ctx.episode).nextInt(this.opts.targets.length);
    }
    if (index !== null) s.latch = { step: s.step, index };
  }

  private slotAt(slot: number): SlotState {
    const s = this.slots[slot];
    if (s === undefined)
      throw new ImepError('E_USAGE', `slot ${slot} outside [0, ${this.maxBatch})`, { field: 'slot' });
    return s;
  }
}
