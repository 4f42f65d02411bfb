/**
 * Scripted controllers for the lite simulators: positive controls and demonstrations. Every controller
 * reads only method-visible fields (StepResult.obs: `rgb`, `toolPosition`, `instruction`) and the elapsed
 * step — never evaluator fields — so what they achieve is achievable by a policy from pixels.
 *
 * - WaypointController: visits fixed points in order (e.g. "touch the cups in turn").
 * - ShellGamePixelController: reads the ball from the cue frames; with memory it goes to that cup, without
 *   memory (or when the ball was never seen, e.g. blackout from step 0) it goes to the cup nearest its own
 *   pose, which from the jittered home is the centre cup — so strict success ≈ 1/3.
 * - RememberColorPixelController: reads the cue colour, then finds the matching square; memory 'none',
 *   'episode' (cleared at each episode) or 'cross-episode' (kept across attempts until clear()).
 * - ChainDrawersReader: records object→drawer from write/distractor frames (latest write wins) and
 *   answers queries with a one-hot decision; without memory it answers drawer 0 (chance 1/K).
 */
import { ImepError } from '../../core/index.js';
import type { NdArray, ObsValue, ResetRequest, StepResult } from '../../runtime/index.js';
import { CHAIN_OBJECTS, drawerCenterX } from './chain-drawers.js';
import { MAX_STEP, type LiteEnv } from './lite-env.js';
import { COLORS, colorCentroid, type Rgb } from './render.js';
import {
  CUE_POSITION,
  REMEMBER_COLOR_CANDIDATES_FROM,
  REMEMBER_COLOR_CUE_END,
  REMEMBER_COLOR_PALETTE,
} from './remember-color.js';
import { CUP_X, CUP_Y, SHELL_GAME_CUE_STEPS } from './shell-game.js';

export type MethodObs = StepResult['obs'];

/** A scripted policy over method-visible observations. */
export interface LiteController {
  /** Called before each reset: drops within-episode state (cross-episode memory is the controller's own). */
  beginEpisode(): void;
  /** The next action, given the latest method-visible observation and its elapsed step. */
  act(obs: MethodObs, step: number): Float32Array;
}

function isNdArray(v: ObsValue | NdArray | undefined): v is NdArray {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && 'dtype' in v && 'shape' in v && 'data' in v;
}

/** The RGB frame of an observation. */
export function frameOf(obs: MethodObs): { data: Uint8Array; width: number; height: number } {
  const rgb = obs['rgb'];
  if (!isNdArray(rgb) || !(rgb.data instanceof Uint8Array) || rgb.shape.length !== 3) {
    throw new ImepError('E_INTERNAL', 'observation has no uint8 [H, W, 3] rgb field');
  }
  return { data: rgb.data, height: rgb.shape[0] ?? 0, width: rgb.shape[1] ?? 0 };
}

/** The tool position of an observation. */
export function toolOf(obs: MethodObs): [number, number] {
  const t = obs['toolPosition'];
  if (!(t instanceof Float32Array) || t.length !== 2)
    throw new ImepError('E_INTERNAL', 'observation has no toolPosition');
  return [t[0] ?? 0, t[1] ?? 0];
}

/** The action moving the tool from `from` straight towards `to` (length ≤ MAX_STEP). */
export function towards(from: readonly [number, number], to: readonly [number, number]): Float32Array {
  const dx = to[0] - from[0];
  const dy = to[1] - from[1];
  const len = Math.sqrt(dx * dx + dy * dy);
  const s = len > MAX_STEP ? MAX_STEP / len : 1;
  return Float32Array.of(dx * s, dy * s);
}

/** Index of the value in `xs` nearest to x. */
function nearest(xs: readonly number[], x: number): number {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (Math.abs((xs[i] ?? 0) - x) < Math.abs((xs[best] ?? 0) - x)) best = i;
  return best;
}

/** Visits the given points in order, moving to the next once within `reach` of the current one. */
export class WaypointController implements LiteController {
  private next = 0;
  constructor(
    private readonly points: readonly (readonly [number, number])[],
    private readonly reach = 0.03,
  ) {}
  beginEpisode(): void {
    this.next = 0;
  }
  act(obs: MethodObs): Float32Array {
    const tool = toolOf(obs);
    const within = (p: readonly [number, number]): boolean => Math.hypot(p[0] - tool[0], p[1] - tool[1]) <= this.reach;
    while (this.next < this.points.length - 1 && within(this.points[this.next] ?? [0, 0])) this.next++;
    const target = this.points[this.next];
    return target === undefined ? Float32Array.of(0, 0) : towards(tool, target);
  }
}

/** The ShellGame cup centres, by index. */
export function cupPosition(cup: number): [number, number] {
  return [CUP_X[cup] ?? 0, CUP_Y];
}

export class ShellGamePixelController implements LiteController {
  private seenCup: number | null = null;
  constructor(private readonly memory: boolean) {}
  beginEpisode(): void {
    this.seenCup = null;
  }
  act(obs: MethodObs, step: number): Float32Array {
    const tool = toolOf(obs);
    let cup: number | null = null;
    if (step < SHELL_GAME_CUE_STEPS) {
      const f = frameOf(obs);
      const ball = colorCentroid(f.data, f.width, f.height, COLORS.ball);
      if (ball !== null) cup = nearest(CUP_X, ball.x);
    }
    if (this.memory) {
      if (cup !== null) this.seenCup = cup;
      cup = this.seenCup;
    }
    if (cup === null) cup = nearest(CUP_X, tool[0]); // memoryless: the cup nearest the own pose
    return towards(tool, cupPosition(cup));
  }
}

export type ColorMemory = 'none' | 'episode' | 'cross-episode';

export class RememberColorPixelController implements LiteController {
  private color: number | null = null;
  private target: [number, number] | null = null;
  constructor(
    private readonly k: number,
    private readonly memory: ColorMemory,
  ) {}
  /** Forgets cross-episode memory too. */
  clear(): void {
    this.color = null;
    this.target = null;
  }
  beginEpisode(): void {
    this.target = null;
    if (this.memory !== 'cross-episode') this.color = null;
  }
  act(obs: MethodObs, step: number): Float32Array {
    const tool = toolOf(obs);
    const f = frameOf(obs);
    if (step < REMEMBER_COLOR_CUE_END && this.memory !== 'none') {
      const seen = this.readCue(f.data, f.width, f.height);
      if (seen !== null) this.color = seen;
    }
    if (step < REMEMBER_COLOR_CANDIDATES_FROM) return Float32Array.of(0, 0);
    if (this.target === null) this.target = this.locate(f.data, f.width, f.height, tool);
    return this.target === null ? Float32Array.of(0, 0) : towards(tool, this.target);
  }
  private readCue(frame: Uint8Array, w: number, h: number): number | null {
    const i = Math.floor(((CUE_POSITION[0] + 1) * w) / 2);
    const j = Math.floor(((1 - CUE_POSITION[1]) * h) / 2);
    const k = (j * w + i) * 3;
    const idx = REMEMBER_COLOR_PALETTE.findIndex(
      (c) => c[0] === frame[k] && c[1] === frame[k + 1] && c[2] === frame[k + 2],
    );
    return idx >= 0 && idx < this.k ? idx : null;
  }
  private locate(frame: Uint8Array, w: number, h: number, tool: [number, number]): [number, number] | null {
    if (this.color !== null) {
      const c = colorCentroid(frame, w, h, REMEMBER_COLOR_PALETTE[this.color] ?? [0, 0, 0]);
      if (c !== null) return [c.x, c.y];
    }
    // No colour in memory: the candidate nearest to the own pose.
    let best: [number, number] | null = null;
    let bestD = Infinity;
    for (let i = 0; i < this.k; i++) {
      const c = colorCentroid(frame, w, h, REMEMBER_COLOR_PALETTE[i] ?? [0, 0, 0]);
      if (c === null) continue;
      const d = Math.hypot(c.x - tool[0], c.y - tool[1]);
      if (d < bestD) {
        bestD = d;
        best = [c.x, c.y];
      }
    }
    return best;
  }
}

export class ChainDrawersReader implements LiteController {
  /** object index → drawer, written from write/distractor frames. */
  readonly records = new Map<number, number>();
  constructor(
    private readonly k: number,
    private readonly memory: boolean,
  ) {}
  clear(): void {
    this.records.clear();
  }
  beginEpisode(): void {
    if (!this.memory) this.records.clear();
  }
  act(obs: MethodObs): Float32Array {
    const f = frameOf(obs);
    const object = this.readObject(f.data, f.width, f.height);
    const open = colorCentroid(f.data, f.width, f.height, COLORS.drawerOpen);
    const out = new Float32Array(this.k);
    if (open !== null) {
      // A write/distractor frame: the open drawer reveals where the object goes.
      const drawer = nearest(
        Array.from({ length: this.k }, (_, d) => drawerCenterX(d, this.k)),
        open.x,
      );
      if (object !== null) this.records.set(object, drawer);
      out[drawer] = 1;
      return out;
    }
    const known = object === null ? undefined : this.records.get(object);
    out[known ?? 0] = 1;
    return out;
  }
  private readObject(frame: Uint8Array, w: number, h: number): number | null {
    for (let i = 0; i < CHAIN_OBJECTS.length; i++) {
      const color: Rgb = CHAIN_OBJECTS[i]?.color ?? [0, 0, 0];
      if (colorCentroid(frame, w, h, color) !== null) return i;
    }
    return null;
  }
}

export interface EpisodeRecord {
  readonly first: StepResult;
  readonly last: StepResult;
  /** Every result, reset first, when `keepResults` was set. */
  readonly results: readonly StepResult[];
}

/** Runs one episode of `env` under `controller` to its end. */
export function runLiteEpisode(
  env: LiteEnv,
  controller: LiteController,
  request: ResetRequest,
  keepResults = false,
): EpisodeRecord {
  controller.beginEpisode();
  const first = env.resetSync(request);
  const results: StepResult[] = keepResults ? [first] : [];
  let r = first;
  while (!r.done) {
    r = env.stepSync(controller.act(r.obs, r.step));
    if (keepResults) results.push(r);
  }
  return { first, last: r, results };
}
