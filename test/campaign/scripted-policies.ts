/**
 * Scripted runner policies for the runner tests (fast, no ONNX): they read only method-visible fields and
 * keep their memory in real banks whose reads pass the runner's hook, so every condition acts on them.
 *
 * - ShellScriptedPolicy (episode-local EpisodeBank per slot): writes a 4-vector per step
 *   [ball near cup 0, cup 1, cup 2, 1]; reads top-k by cosine to [1, 1, 1, 0.2]; decides the cup with the
 *   largest summed evidence in what it read (the cup nearest its own x without evidence) and moves there from
 *   step 6. S_π / T_μ change what it reads and so its decisions; N_blk leaves it memoryless.
 * - ColorScriptedPolicy (StructuredBank per slot, persisting across attempts): in attempt 1, while the cue is
 *   shown, it writes m = 1 + (⌊|toolX|·1000⌋ mod 3) records whose payload holds the cue colour one-hot; from
 *   step 10 it reads and heads for the colour with the largest summed evidence. Records per scope vary by
 *   seed, so donor swaps can fail closed (donor short).
 */
import { EpisodeBank } from '../../src/banks/episode-bank.js';
import {
  PAYLOAD_FIELDS,
  type Payload,
  type PayloadField,
  type ReadHook,
  type RetrievedItem,
} from '../../src/banks/record.js';
import { StructuredBank } from '../../src/banks/structured-bank.js';
import { colorCentroid, COLORS } from '../../src/sims/lite/render.js';
import { CUE_POSITION, REMEMBER_COLOR_PALETTE } from '../../src/sims/lite/remember-color.js';
import { cupPosition, frameOf, toolOf, towards } from '../../src/sims/lite/scripted.js';
import { CUP_X } from '../../src/sims/lite/shell-game.js';
import { toFloat64, type FloatTensor } from '../../src/core/tensor.js';
import type { EpisodeInfo, PolicyOutput, SlotObservation } from '../../src/runtime/policy.js';
import type { PolicyProvider, RunnerPolicy, SlotMemory, TaskContext } from '../../src/campaign/index.js';

const f32 = (...v: number[]): FloatTensor => ({ dtype: 'float32', shape: [v.length], data: Float32Array.from(v) });

function nearestIndex(xs: readonly number[], x: number): number {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (Math.abs((xs[i] ?? 0) - x) < Math.abs((xs[best] ?? 0) - x)) best = i;
  return best;
}

function argmax(v: ArrayLike<number>): number {
  let best = -1,
    bv = 0;
  for (let i = 0; i < v.length; i++)
    if ((v[i] ?? 0) > bv) {
      bv = v[i] ?? 0;
      best = i;
    }
  return best;
}

export class ShellScriptedPolicy implements RunnerPolicy {
  private readonly banks: EpisodeBank[] = [];
  private readonly steps: number[] = [];
  private readonly ready: boolean[] = [];
  private readonly memories: SlotMemory[] = [];
  readonly calls: number[] = [];

  constructor(
    readonly maxBatch: number,
    private readonly decisionFrom = 5,
  ) {
    for (let s = 0; s < maxBatch; s++) {
      const bank = new EpisodeBank({ bank: 'perceptual', capacity: 96, k: 4 });
      this.banks.push(bank);
      this.steps.push(0);
      this.ready.push(false);
      this.memories.push({
        target: null,
        beginScope: (scope) => bank.reset(`${scope}/begin`),
        endScope: (scope) => bank.reset(`${scope}/end`),
      });
    }
  }

  setReadHook(hook: ReadHook): void {
    for (const b of this.banks) b.setReadHook(hook);
  }

  slotMemory(slot: number): SlotMemory {
    return this.memories[slot] as SlotMemory;
  }

  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    (this.banks[slot] as EpisodeBank).reset(info.episode);
    this.steps[slot] = 0;
    this.ready[slot] = true;
  }

  async inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    this.calls.push(requests.length);
    return requests.map(({ slot, obs }) => {
      if (!this.ready[slot]) throw new Error(`slot ${slot} not reset`);
      const bank = this.banks[slot] as EpisodeBank;
      const step = this.steps[slot] as number;
      const f = frameOf(obs);
      const ball = colorCentroid(f.data, f.width, f.height, COLORS.ball);
      const feature = [0, 0, 0, 1];
      if (ball !== null) feature[nearestIndex(CUP_X, ball.x)] = 1;
      const { items, ctx } = bank.query(f32(1, 1, 1, 0.2), { decisionStep: step >= this.decisionFrom });
      const evidence = [0, 0, 0];
      for (const it of items) {
        const v = toFloat64(it.leaves['feature'] as FloatTensor);
        for (let c = 0; c < 3; c++) evidence[c] = (evidence[c] ?? 0) + (v[c] ?? 0);
      }
      const tool = toolOf(obs);
      const best = argmax(evidence);
      const cup = best >= 0 ? best : nearestIndex(CUP_X, tool[0]);
      const action = step < 6 ? Float32Array.of(0, 0) : towards(tool, cupPosition(cup));
      bank.write(step, f32(...feature));
      this.steps[slot] = step + 1;
      return {
        action: { dtype: 'float32', shape: [2], data: action },
        readouts: { reads: [{ ctx, identities: items.map((i: RetrievedItem) => i.identity) }] },
      };
    });
  }
}

const SIG_DIM = 5;

function sig(j: number | null): FloatTensor {
  const v = new Array<number>(SIG_DIM).fill(0);
  v[0] = 1;
  if (j !== null) v[1 + j] = 1;
  return f32(...v);
}

function payloadOf(color: number): Payload {
  const out = {} as Record<PayloadField, FloatTensor>;
  for (const f of PAYLOAD_FIELDS) out[f] = f32(0, 0);
  const onehot = new Array<number>(REMEMBER_COLOR_PALETTE.length).fill(0);
  onehot[color] = 1;
  out.cognitiveValue = f32(...onehot);
  return out;
}

export class ColorScriptedPolicy implements RunnerPolicy {
  readonly banks: StructuredBank[] = [];
  private readonly scopes: (string | null)[] = [];
  private readonly episodes: (string | null)[] = [];
  private readonly steps: number[] = [];
  private readonly writes: number[] = [];
  private readonly memories: SlotMemory[] = [];

  constructor(
    readonly maxBatch: number,
    private readonly k: number,
  ) {
    for (let s = 0; s < maxBatch; s++) {
      const bank = new StructuredBank({ capacity: 16, k: 4, gate: 0.45 });
      this.banks.push(bank);
      this.scopes.push(null);
      this.episodes.push(null);
      this.steps.push(0);
      this.writes.push(0);
      this.memories.push({
        target: bank,
        beginScope: (scope) => {
          bank.clearAll();
          this.scopes[s] = scope;
        },
        endScope: (scope) => {
          bank.clearScope(scope, { keepClock: false });
          this.scopes[s] = null;
        },
      });
    }
  }

  setReadHook(hook: ReadHook): void {
    for (const b of this.banks) b.setReadHook(hook);
  }

  slotMemory(slot: number): SlotMemory {
    return this.memories[slot] as SlotMemory;
  }

  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    this.episodes[slot] = info.episode;
    this.steps[slot] = 0;
    this.writes[slot] = 0;
  }

  async inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    return requests.map(({ slot, obs }) => {
      const bank = this.banks[slot] as StructuredBank;
      const scope = this.scopes[slot];
      const episode = this.episodes[slot];
      if (scope === null || scope === undefined || episode === null || episode === undefined)
        throw new Error(`slot ${slot} has no scope`);
      const step = this.steps[slot] as number;
      const f = frameOf(obs);
      const tool = toolOf(obs);
      const q = bank.query(
        scope,
        { cognitiveKey: f32(1, 0, 0), perceptualKey: f32(0, 1, 0), stateSignature: sig(null) },
        { episode, decisionStep: step >= 10 },
      );
      let action: Float32Array = Float32Array.of(0, 0);
      if (step >= 10) {
        const evidence = new Array<number>(REMEMBER_COLOR_PALETTE.length).fill(0);
        for (const it of q.items) {
          const v = toFloat64(it.leaves['cognitiveValue'] as FloatTensor);
          for (let c = 0; c < evidence.length; c++) evidence[c] = (evidence[c] ?? 0) + (v[c] ?? 0);
        }
        const color = argmax(evidence);
        const target =
          color >= 0 && color < this.k
            ? colorCentroid(f.data, f.width, f.height, REMEMBER_COLOR_PALETTE[color] ?? [0, 0, 0])
            : null;
        if (target !== null) action = towards(tool, [target.x, target.y]);
        else action = towards(tool, [0, 0.25]);
      }
      // the cue pixel
      const i = Math.floor(((CUE_POSITION[0] + 1) * f.width) / 2);
      const j = Math.floor(((1 - CUE_POSITION[1]) * f.height) / 2);
      const p = (j * f.width + i) * 3;
      const cue = REMEMBER_COLOR_PALETTE.findIndex(
        (c) => c[0] === f.data[p] && c[1] === f.data[p + 1] && c[2] === f.data[p + 2],
      );
      const m = 1 + (Math.floor(Math.abs(tool[0]) * 1000) % 3);
      const w = this.writes[slot] as number;
      if (cue >= 0 && cue < this.k && w < m) {
        bank.write(scope, {
          keys: { cognitiveKey: f32(1, 0, 0), perceptualKey: f32(0, 1, 0), stateSignature: sig(w) },
          payload: payloadOf(cue),
          sourceEpisode: episode,
        });
        this.writes[slot] = w + 1;
      }
      this.steps[slot] = step + 1;
      return {
        action: { dtype: 'float32', shape: [2], data: action },
        readouts: { reads: [{ ctx: q.ctx, identities: q.items.map((it) => it.identity) }] },
      };
    });
  }
}

/** A PolicyProvider over one of the scripted policies. */
export function scriptedProvider(kind: 'shell' | 'color'): PolicyProvider {
  return {
    description: `scripted ${kind}`,
    async policyFor(task: TaskContext, batch: number): Promise<RunnerPolicy> {
      if (kind === 'shell') return new ShellScriptedPolicy(batch, task.facts.decisionFromStep);
      const k = Number(/RememberColor(\d)/.exec(task.envId)?.[1] ?? 3);
      return new ColorScriptedPolicy(batch, k);
    },
    release: async () => undefined,
  };
}
