/**
 * RememberColor{3,5,9}-lite: the memory structure of MIKASA-Robo's RememberColor{3,5,9}-v0.
 *
 * Source (CognitiveAISystems/MIKASA-Robo @ 2350fa6, mikasa_robo_suite/memory_envs/remember_color.py):
 * - `@register_env("RememberColor3-v0" | "RememberColor5-v0" | "RememberColor9-v0", max_episode_steps=60)`
 *   with `COLORS = 3 | 5 | 9` → 60-step limit, K candidate colours.
 * - `TIME_OFFSET = 5` (time to observe the goal cube) and `delta_time=5` (`DELTA_TIME`): in `evaluate()`
 *   the true-colour cube sits at the centre while `elapsed_steps < TIME_OFFSET`, every cube is hidden
 *   while `elapsed_steps < TIME_OFFSET + DELTA_TIME`, and the K cubes stand at their shuffled positions
 *   once `elapsed_steps >= TIME_OFFSET + DELTA_TIME`. Lite timing: cue at elapsed steps 0–4, blank 5–9,
 *   candidates from step 10. (The original's hide test for the true cube uses an inclusive
 *   `TIME_OFFSET + DELTA_TIME >= elapsed_steps`; we follow the documented 0–4 / 5–9 / ≥10 schedule.)
 * - `COLOR_MAPPING`: Red, Lime, Blue, Yellow, Magenta, Cyan, Maroon, "Olive" [255,128,0], Teal; the first
 *   K are used. The lite palette is the same list (pairwise RGB distance ≥ 127; > 100 from the table
 *   and tool colours).
 * - `true_color_indices = self._batched_episode_rng.choice(...)`; for K = 5, 9 the cubes stand on an arc
 *   (`angle = np.pi * (key - (len(self.color_dict) // 2)) / len(self.color_dict)`, `radius = 0.3`), are
 *   jittered (`torch.randn(2) * CUBE_HALFSIZE * 0.5`) and shuffled (`torch.randperm`). Lite layout: K
 *   slots on an arc of radius 0.95 around the tool's home (0, −0.7), centred straight ahead (90°) at
 *   angular spacing min(40°, 120°/(K−1)). Kwarg `layout` (RC_LAYOUTS): 'fixed' (the default since issue #32)
 *   puts colour c in slot c, unjittered, the same scene every episode; 'seeded' (the first version, kept for old
 *   units) assigns colours to slots by a seeded shuffle and jitters each centre uniformly by ±0.03 per axis — a
 *   layout that identifies the public seed among a band's seeds, and with it the target colour, to anyone who
 *   replays this code (the candidates stay visible when the cue is not re-shown). All candidates are about equally far from home, and a
 *   straight path from home to one passes well clear (> 0.08) of every other, so `strict` does not
 *   punish a direct reach; neighbouring centres stay ≈ 0.2 or more apart (> 2·0.08).
 * - MIKASA re-shows the cue in every episode. `reshowCueOnRetry` (default true) keeps that; when false
 *   and the reset option `attempt` ≥ 2, steps 0–9 are blank, so only cross-episode memory of attempt 1
 *   can answer. The same seed gives the same target and layout in every attempt.
 *
 * MIKASA's RememberColor success is tcp within `GOAL_THRESH = 0.05` of the true cube and the robot static;
 * the lite envs use the common touch radius 0.08 (lite-env.ts) and no dynamics.
 *
 * Options (kwargs set defaults; reset options override): `strict` (as ShellGame: the first candidate
 * touched ends the episode; success iff it is the target), `reshowCueOnRetry`. Make-only: `resolution`, `layout`,
 * `toolStart`.
 * Touches count from step 10 (when candidates exist). Evaluator-only extras: `targetColorIndex` (oracle),
 * `firstVisit` (palette index of the first candidate touched, or null), `decisionCorrect`, `lastTouch`,
 * `cueShown` (whether this episode shows the cue).
 */
import type { Prng } from '../../core/index.js';
import type { ObsValue } from '../../runtime/index.js';
import { LITE_DELTA_XY_ACTION, LiteEnvBase, liteSpec } from './lite-env.js';
import { checkKnownKeys, optBool, optEnum, optResolution, type Options, optToolStart } from './options.js';
import { Raster, type Rgb } from './render.js';

/** MIKASA-Robo RememberColor COLOR_MAPPING (RGB), in its order. */
export const REMEMBER_COLOR_PALETTE: readonly Rgb[] = Object.freeze([
  [255, 0, 0], // Red
  [0, 255, 0], // Lime
  [0, 0, 255], // Blue
  [255, 255, 0], // Yellow
  [255, 0, 255], // Magenta
  [0, 255, 255], // Cyan
  [128, 0, 0], // Maroon
  [255, 128, 0], // "Olive" in MIKASA (orange RGB)
  [0, 128, 128], // Teal
] as const);
export const REMEMBER_COLOR_NAMES = Object.freeze([
  'red',
  'lime',
  'blue',
  'yellow',
  'magenta',
  'cyan',
  'maroon',
  'orange',
  'teal',
] as const);

export const REMEMBER_COLOR_MAX_STEPS = 60;
/** Cue shown at elapsed step < CUE_END; blank until CANDIDATES_FROM. */
export const REMEMBER_COLOR_CUE_END = 5;
export const REMEMBER_COLOR_CANDIDATES_FROM = 10;
export const CUE_POSITION: readonly [number, number] = [0, 0.35];
export const CUE_HALF = 0.14;
export const CANDIDATE_HALF = 0.07;
export const ARC_CENTER: readonly [number, number] = [0, -0.7];
export const ARC_RADIUS = 0.95;
export const SLOT_JITTER = 0.03;

/** Angle (radians) of arc slot i of K: centred on 90°, spacing min(40°, 120°/(K−1)). */
export function arcSlotAngle(i: number, k: number): number {
  const spacing = Math.min(40, 120 / (k - 1));
  return ((90 + (i - (k - 1) / 2) * spacing) * Math.PI) / 180;
}
export const REMEMBER_COLOR_INSTRUCTION = 'remember the colour shown, then touch the square of that colour';

export type RememberColorK = 3 | 5 | 9;
export function rememberColorId<K extends RememberColorK>(k: K): `RememberColor${K}-lite` {
  return `RememberColor${k}-lite`;
}

/** Where the candidates stand (kwarg `layout`): 'fixed' (default) shows nothing of the seed; 'seeded' identifies it. */
export const RC_LAYOUTS = ['fixed', 'seeded'] as const;
export type RememberColorLayout = (typeof RC_LAYOUTS)[number];

const KWARG_KEYS = ['resolution', 'strict', 'reshowCueOnRetry', 'toolStart', 'layout'] as const;
const RESET_KEYS = ['strict', 'reshowCueOnRetry'] as const;

export interface RememberColorOptions {
  readonly resolution: number;
  readonly strict: boolean;
  readonly reshowCueOnRetry: boolean;
  readonly layout: RememberColorLayout;
}

export class RememberColorLite extends LiteEnvBase {
  protected readonly resetOptionKeys = RESET_KEYS;
  protected readonly actionLengths = [2] as const;
  readonly k: RememberColorK;
  readonly defaults: RememberColorOptions;
  /** Candidate centres, indexed by palette colour index. */
  private readonly xs: Float64Array;
  private readonly ys: Float64Array;
  private readonly blank: Raster;
  /** The candidate-phase background for the current layout (drawn once per reset). */
  private candidates: Raster;
  private cue: Raster;
  private target = 0;
  private strict = false;
  private cueShown = true;
  private firstVisit: number | null = null;
  private lastTouch: number | null = null;

  constructor(k: RememberColorK, kwargs: Options = {}) {
    const id = rememberColorId(k);
    const resolution = optResolution(id, kwargs);
    super(
      liteSpec({
        id,
        maxSteps: REMEMBER_COLOR_MAX_STEPS,
        resolution,
        action: { shape: [2], dtype: 'float32', low: -0.06, high: 0.06 },
        actionConventions: LITE_DELTA_XY_ACTION,
        evaluator: {
          targetColorIndex: { shape: [], dtype: 'int32' },
          firstVisit: { shape: [], dtype: 'int32' },
          decisionCorrect: { shape: [], dtype: 'bool' },
          lastTouch: { shape: [], dtype: 'int32' },
          cueShown: { shape: [], dtype: 'bool' },
        },
        instruction: REMEMBER_COLOR_INSTRUCTION,
        fact: { field: 'targetColorIndex', domain: Array.from({ length: k }, (_, i) => i) },
        decisionFromStep: REMEMBER_COLOR_CANDIDATES_FROM,
      }),
      resolution,
    );
    checkKnownKeys(id, 'kwargs', kwargs, KWARG_KEYS);
    this.k = k;
    this.toolStart = optToolStart(id, kwargs);
    this.defaults = {
      resolution,
      strict: optBool(id, 'kwargs', kwargs, 'strict', false),
      reshowCueOnRetry: optBool(id, 'kwargs', kwargs, 'reshowCueOnRetry', true),
      layout: optEnum(id, 'kwargs', kwargs, 'layout', 'fixed', RC_LAYOUTS),
    };
    this.xs = new Float64Array(k);
    this.ys = new Float64Array(k);
    this.blank = this.tableFrame;
    this.candidates = this.tableFrame;
    this.cue = this.tableFrame;
  }

  protected onReset(scene: Prng, options: Options): void {
    const id = this.spec.id;
    this.strict = optBool(id, 'options', options, 'strict', this.defaults.strict);
    const reshow = optBool(id, 'options', options, 'reshowCueOnRetry', this.defaults.reshowCueOnRetry);
    this.cueShown = reshow || this.attempt < 2;
    this.target = scene.nextInt(this.k);
    // the target is drawn first, so each seed keeps its target whatever the layout
    const seeded = this.defaults.layout === 'seeded';
    const slotOf = Array.from({ length: this.k }, (_, i) => i);
    const slots = seeded ? scene.shuffle(slotOf) : slotOf;
    const jitter = (): number => (seeded ? (scene.nextFloat() * 2 - 1) * SLOT_JITTER : 0);
    const candidates = this.tableFrame.clone();
    for (let c = 0; c < this.k; c++) {
      const angle = arcSlotAngle(slots[c] ?? 0, this.k);
      const x = ARC_CENTER[0] + ARC_RADIUS * Math.cos(angle) + jitter();
      const y = ARC_CENTER[1] + ARC_RADIUS * Math.sin(angle) + jitter();
      this.xs[c] = x;
      this.ys[c] = y;
      candidates.fillSquare(x, y, CANDIDATE_HALF, REMEMBER_COLOR_PALETTE[c] ?? [0, 0, 0]);
    }
    this.candidates = candidates;
    const color = REMEMBER_COLOR_PALETTE[this.target] ?? [0, 0, 0];
    this.cue = this.tableFrame.clone().fillSquare(CUE_POSITION[0], CUE_POSITION[1], CUE_HALF, color);
    this.firstVisit = null;
    this.lastTouch = null;
  }

  protected onStep(action: ArrayLike<number>): void {
    this.moveTool(action[0] ?? 0, action[1] ?? 0);
    this.lastTouch = null;
    if (this.elapsed < REMEMBER_COLOR_CANDIDATES_FROM) return;
    const touched = this.touchedIndex(this.xs, this.ys, this.k);
    if (touched < 0) return;
    this.lastTouch = touched;
    if (this.firstVisit === null) this.firstVisit = touched;
    if (this.strict) {
      this.terminated = true;
      this.success = touched === this.target;
    } else if (touched === this.target) {
      this.terminated = true;
      this.success = true;
    }
    this.reward = this.success ? 1 : 0;
  }

  protected render(): Uint8Array {
    let bg: Raster;
    if (this.elapsed >= REMEMBER_COLOR_CANDIDATES_FROM) bg = this.candidates;
    else if (this.elapsed < REMEMBER_COLOR_CUE_END && this.cueShown) bg = this.cue;
    else bg = this.blank;
    const frame = this.frameOver(bg);
    this.drawTool(frame);
    return frame.data;
  }

  protected instruction(): string {
    return REMEMBER_COLOR_INSTRUCTION;
  }

  protected writeEvaluatorExtras(e: Record<string, ObsValue>): void {
    e['targetColorIndex'] = this.target;
    e['firstVisit'] = this.firstVisit;
    e['decisionCorrect'] = this.firstVisit === null ? null : this.firstVisit === this.target;
    e['lastTouch'] = this.lastTouch;
    e['cueShown'] = this.cueShown;
  }
}
