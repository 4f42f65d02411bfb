/**
 * ShellGameTouch-lite: the memory structure of MIKASA-Robo's ShellGameTouch-v0.
 *
 * Source (CognitiveAISystems/MIKASA-Robo @ 2350fa6, mikasa_robo_suite/memory_envs/shell_game_touch.py):
 * - `@register_env("ShellGameTouch-v0", max_episode_steps=90)` → 90-step limit.
 * - `TIME_OFFSET = 5`; `evaluate()` lifts the mugs out of view while `self.elapsed_steps < self.TIME_OFFSET`
 *   (`hide_mask`), so the ball is visible at elapsed steps 0–4 and the three identical mugs cover the
 *   cups from step 5 on.
 * - `cup_with_ball_number = self._batched_episode_rng.choice([0, 1, 2])`: the ball cup is seeded.
 * - `GOAL_THRESH = 0.08` and success = tcp within 0.08 of the ball cup; the dense reward multiplies
 *   success by `elapsed_steps >= 5` (`compute_dense_reward`), so touches count from step 5 on — here too.
 *   MIKASA's success also needs `is_robot_static`; the lite tool has no dynamics, so a touch suffices.
 *
 * Lite scene: three cups at fixed x = −0.5, 0, 0.5 (y = 0.25, radius 0.12); the ball (radius 0.06)
 * sits under the seeded cup. Frames at elapsed steps 0–4 show the ball and no cups; from step 5 on the
 * three cups are drawn identically and the ball is hidden. The tool is drawn on top.
 *
 * Options (make kwargs set defaults; reset options override per episode):
 * - `blackoutFromStep` (int ≥ 0 or null, default null): every frame at elapsed step ≥ this value is
 *   all zeros, including the tool — the registered camera blackout (e.g. 6: steps 6–90, 85 of 90 frames).
 * - `strict` (bool, default false): the episode ends at the first cup touched; success iff it is the
 *   ball cup. Default: success = the ball cup touched at any step; the episode ends on success or at 90.
 * - `toolStart` ('home' | 'seeded', default 'home', every lite task; options.ts TOOL_STARTS): 'home' starts every
 *   episode at TOOL_HOME, leaving the ball cup's draw untouched; 'seeded' (the first version, kept for old units)
 *   jitters the tool's start from the seed, which identifies the seed among a public band and so the ball cup while
 *   the pose stays visible through the blackout.
 * Reset option `attempt` (int ≥ 1) is recorded only; it does not change the scene.
 *
 * Evaluator-only extras: `ballCup` (oracle, 0–2), `firstVisit` (first cup touched from step 5, or null),
 * `decisionCorrect` (firstVisit === ballCup, null before any touch), `lastTouch` (cup touched at this step
 * or null), `blackout` (whether this frame is blanked).
 */
import type { Prng } from '../../core/index.js';
import type { ObsValue } from '../../runtime/index.js';
import { LITE_DELTA_XY_ACTION, LiteEnvBase, liteSpec } from './lite-env.js';
import { checkKnownKeys, optBool, optNullableInt, optResolution, type Options, optToolStart } from './options.js';
import { COLORS, Raster } from './render.js';

export const SHELL_GAME_ID = 'ShellGameTouch-lite';
export const SHELL_GAME_MAX_STEPS = 90;
/** Frames at elapsed step < CUE_STEPS show the ball (MIKASA TIME_OFFSET = 5). */
export const SHELL_GAME_CUE_STEPS = 5;
export const CUP_X: readonly number[] = Object.freeze([-0.5, 0, 0.5]);
export const CUP_Y = 0.25;
export const CUP_RADIUS = 0.12;
export const BALL_RADIUS = 0.06;
export const SHELL_GAME_INSTRUCTION = 'touch the cup that hides the ball';

const KWARG_KEYS = ['resolution', 'blackoutFromStep', 'strict', 'toolStart'] as const;
const RESET_KEYS = ['blackoutFromStep', 'strict'] as const;

export interface ShellGameOptions {
  readonly resolution: number;
  readonly blackoutFromStep: number | null;
  readonly strict: boolean;
}

/** The backgrounds of each resolution (keyed by its table raster), drawn once per process and only ever read. */
const BACKGROUNDS = new WeakMap<Raster, readonly Raster[]>();

function backgroundsOf(table: Raster): readonly Raster[] {
  let list = BACKGROUNDS.get(table);
  if (list !== undefined) return list;
  const made: Raster[] = [];
  for (let cup = 0; cup < 3; cup++) {
    made.push(table.clone().fillCircle(CUP_X[cup] ?? 0, CUP_Y, BALL_RADIUS, COLORS.ball));
  }
  const closed = table.clone();
  for (const x of CUP_X) {
    closed.fillCircle(x, CUP_Y, CUP_RADIUS, COLORS.cup);
    closed.fillCircle(x, CUP_Y, CUP_RADIUS * 0.55, COLORS.cupRim);
  }
  made.push(closed);
  list = Object.freeze(made);
  BACKGROUNDS.set(table, list);
  return list;
}

export class ShellGameLite extends LiteEnvBase {
  protected readonly resetOptionKeys = RESET_KEYS;
  protected readonly actionLengths = [2] as const;
  readonly defaults: ShellGameOptions;
  private readonly cupYs = Float64Array.of(CUP_Y, CUP_Y, CUP_Y);
  private readonly cupXs = Float64Array.from(CUP_X);
  /** Cached backgrounds: index 0–2 = ball under that cup (cue phase), 3 = closed cups (shared, read only). */
  private readonly backgrounds: readonly Raster[];
  private ballCup = 0;
  private blackoutFromStep: number | null = null;
  private strict = false;
  private firstVisit: number | null = null;
  private lastTouch: number | null = null;

  constructor(kwargs: Options = {}) {
    const resolution = optResolution(SHELL_GAME_ID, kwargs);
    super(
      liteSpec({
        id: SHELL_GAME_ID,
        maxSteps: SHELL_GAME_MAX_STEPS,
        resolution,
        action: { shape: [2], dtype: 'float32', low: -0.06, high: 0.06 },
        actionConventions: LITE_DELTA_XY_ACTION,
        evaluator: {
          ballCup: { shape: [], dtype: 'int32' },
          firstVisit: { shape: [], dtype: 'int32' },
          decisionCorrect: { shape: [], dtype: 'bool' },
          lastTouch: { shape: [], dtype: 'int32' },
          blackout: { shape: [], dtype: 'bool' },
        },
        instruction: SHELL_GAME_INSTRUCTION,
        fact: { field: 'ballCup', domain: [0, 1, 2] },
        decisionFromStep: SHELL_GAME_CUE_STEPS,
      }),
      resolution,
    );
    checkKnownKeys(SHELL_GAME_ID, 'kwargs', kwargs, KWARG_KEYS);
    this.toolStart = optToolStart(SHELL_GAME_ID, kwargs);
    this.defaults = {
      resolution,
      blackoutFromStep: optNullableInt(SHELL_GAME_ID, 'kwargs', kwargs, 'blackoutFromStep', null, 0, 1_000_000),
      strict: optBool(SHELL_GAME_ID, 'kwargs', kwargs, 'strict', false),
    };
    this.backgrounds = backgroundsOf(this.tableFrame);
  }

  protected onReset(scene: Prng, options: Options): void {
    this.blackoutFromStep = optNullableInt(
      SHELL_GAME_ID,
      'options',
      options,
      'blackoutFromStep',
      this.defaults.blackoutFromStep,
      0,
      1_000_000,
    );
    this.strict = optBool(SHELL_GAME_ID, 'options', options, 'strict', this.defaults.strict);
    this.ballCup = scene.nextInt(3);
    this.firstVisit = null;
    this.lastTouch = null;
  }

  protected onStep(action: ArrayLike<number>): void {
    this.moveTool(action[0] ?? 0, action[1] ?? 0);
    this.lastTouch = null;
    if (this.elapsed < SHELL_GAME_CUE_STEPS) return; // cups are lifted: no touch counts (MIKASA)
    const touched = this.touchedIndex(this.cupXs, this.cupYs, 3);
    if (touched < 0) return;
    this.lastTouch = touched;
    if (this.firstVisit === null) this.firstVisit = touched;
    if (this.strict) {
      this.terminated = true;
      this.success = touched === this.ballCup;
    } else if (touched === this.ballCup) {
      this.terminated = true;
      this.success = true;
    }
    this.reward = this.success ? 1 : 0;
  }

  private isBlackout(): boolean {
    return this.blackoutFromStep !== null && this.elapsed >= this.blackoutFromStep;
  }

  protected render(): Uint8Array {
    if (this.isBlackout()) return this.blankFrame();
    const bg = this.elapsed < SHELL_GAME_CUE_STEPS ? this.backgrounds[this.ballCup] : this.backgrounds[3];
    const frame = this.frameOver(bg ?? this.tableFrame);
    this.drawTool(frame);
    return frame.data;
  }

  protected instruction(): string {
    return SHELL_GAME_INSTRUCTION;
  }

  protected writeEvaluatorExtras(e: Record<string, ObsValue>): void {
    e['ballCup'] = this.ballCup;
    e['firstVisit'] = this.firstVisit;
    e['decisionCorrect'] = this.firstVisit === null ? null : this.firstVisit === this.ballCup;
    e['lastTouch'] = this.lastTouch;
    e['blackout'] = this.isBlackout();
  }
}
