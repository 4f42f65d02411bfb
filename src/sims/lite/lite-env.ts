/**
 * Common mechanics of the lite simulators (IMEP's embedded default), shared by every lite task:
 *
 * - The scene is a 2-D table, the square [−1, 1]² (x right, y up), rendered top-down to an RGB frame
 *   (uint8, HWC, 64×64 by default or 128×128 with `kwargs.resolution`; see render.ts).
 * - The robot's end effector is a *tool* (a dark disc of radius 0.05). At reset it starts at the home
 *   position (0, −0.7): with kwarg `toolStart: home` (the default since issue #32) exactly at home; with
 *   `toolStart: seeded` (the first version, kept for old units) jittered by a uniform offset in [−0.05, 0.05] on
 *   each axis drawn from the seeded PRNG (Prng(seed).fork('tool')) — a start that identifies the public seed, and so
 *   the hidden fact, to anyone who replays this code (options.ts, TOOL_STARTS).
 * - Continuous tasks take action = float32 [dx, dy]: the displacement is scaled down so that its
 *   Euclidean length is at most 0.06 (MAX_STEP), then the tool is clamped to [−0.95, 0.95]².
 * - "Touch": the tool centre is within 0.08 (TOUCH_RADIUS, inclusive — MIKASA-Robo's GOAL_THRESH for
 *   ShellGameTouch, `norm(...) <= self.GOAL_THRESH` in
 *   mikasa_robo_suite/memory_envs/shell_game_touch.py) of an object centre; when several objects are
 *   that close, the nearest counts.
 * - Elapsed step: 0 after reset, k after the k-th step; it is StepResult.step. A frame is rendered for
 *   the state at that elapsed step, after the action is applied (as ManiSkill evaluates after the
 *   physics step), so "visible at steps 0–4" means the reset frame and the frames after steps 1–4.
 * - Seeds fully determine a reset: all randomness comes from Prng(seed) (xoshiro128** v1) through
 *   named forks ('tool', 'scene'); reset options such as `attempt` never enter the PRNG unless a task
 *   says so. `firstFrameHash` = sha256 of the reset frame's bytes.
 *
 * Field isolation. Method-visible (StepResult.obs): `rgb` (NdArray uint8 [H, W, 3]), `toolPosition`
 * (Float32Array [x, y], the robot's own pose) and `instruction` (string). Everything else is
 * evaluator-only (StepResult.evaluator): `success`, `reward`, `terminated`, `truncated`, `seed`, `task`,
 * `attempt`, plus each task's oracle info and readouts. The two lists in EnvSpec are disjoint.
 *
 * The synchronous core (`LiteEnv.resetSync/stepSync`) is what campaigns step at speed; `LiteSimEnvironment`
 * wraps it as the async SimEnvironment contract.
 */
import { ImepError, sha256Hex, Prng } from '../../core/index.js';
import type {
  DrawsFramesInto,
  EnvConventions,
  EnvSpec,
  FactSpec,
  FieldSpec,
  NdArray,
  ObsValue,
  ResetRequest,
  SimEnvironment,
  StepResult,
  StepsSynchronously,
  TakesBackObservations,
} from '../../runtime/index.js';
import { asOptions, checkKnownKeys, checkSeed, optInt, type Options, type ToolStart } from './options.js';
import { COLORS, FrameAllocator, Raster } from './render.js';

export const MAX_STEP = 0.06;
export const TOUCH_RADIUS = 0.08;
export const TOOL_HOME: readonly [number, number] = [0, -0.7];
export const TOOL_HOME_JITTER = 0.05;
export const TOOL_LIMIT = 0.95;
export const TOOL_RADIUS = 0.05;

/** The method-visible fields of every lite env, in this order. */
export const LITE_METHOD_VISIBLE = ['rgb', 'toolPosition', 'instruction'] as const;

/** The observation field holding a lite env's frame (DrawsFramesInto.frameField). */
export const LITE_FRAME_FIELD = 'rgb';

/** Evaluator-only fields every lite env reports (tasks add their oracle info and readouts). */
export const LITE_BASE_EVALUATOR: Readonly<Record<string, FieldSpec>> = {
  success: { shape: [], dtype: 'bool' },
  reward: { shape: [], dtype: 'float64' },
  terminated: { shape: [], dtype: 'bool' },
  truncated: { shape: [], dtype: 'bool' },
  seed: { shape: [], dtype: 'uint32' },
  task: { shape: [], dtype: 'string' },
  attempt: { shape: [], dtype: 'int32' },
};

/** What the synchronous core accepts as an action. */
export type LiteAction = NdArray | Float32Array | Float64Array | readonly number[];

/**
 * The synchronous core of a lite simulator. It takes back the frames of results given back (a later reset or step
 * draws into them) and draws its next frame into the caller's memory on request (capabilities.ts).
 */
export interface LiteEnv extends TakesBackObservations, DrawsFramesInto {
  readonly spec: EnvSpec;
  /** True between a reset and the end of its episode. */
  readonly running: boolean;
  resetSync(request: ResetRequest): StepResult;
  stepSync(action: LiteAction): StepResult;
}

/** Builds an EnvSpec with the common method-visible fields and the given evaluator-only ones. */
export function liteSpec(args: {
  id: string;
  maxSteps: number;
  resolution: number;
  action: EnvSpec['action'];
  evaluator: Readonly<Record<string, FieldSpec>>;
  instruction: string;
  /** The task's fact (an evaluator field) and the step from which reads are decision queries. */
  fact?: FactSpec;
  decisionFromStep?: number;
  /** What the action vector means, component by component (the observation's are the common ones, LITE_OBSERVATION). */
  actionConventions: EnvConventions['action'];
}): EnvSpec {
  const evaluator = { ...LITE_BASE_EVALUATOR, ...args.evaluator };
  return {
    id: args.id,
    maxSteps: args.maxSteps,
    action: args.action,
    observation: {
      rgb: { shape: [args.resolution, args.resolution, 3], dtype: 'uint8' },
      toolPosition: { shape: [2], dtype: 'float32' },
      instruction: { shape: [], dtype: 'string' },
      ...evaluator,
    },
    methodVisible: [...LITE_METHOD_VISIBLE],
    evaluatorOnly: Object.keys(evaluator),
    instruction: args.instruction,
    ...(args.fact === undefined ? {} : { fact: args.fact }),
    ...(args.decisionFromStep === undefined ? {} : { decisionFromStep: args.decisionFromStep }),
    conventions: { action: args.actionConventions, observation: LITE_OBSERVATION_CONVENTIONS },
  };
}

/** What every lite env shows the policy, in vla-eval's vocabulary (the fields of LITE_METHOD_VISIBLE). */
export const LITE_OBSERVATION_CONVENTIONS: EnvConventions['observation'] = [
  { name: 'image', field: 'rgb', dims: 0, format: 'rgb_hwc_uint8', description: 'top-down view of the table' },
  {
    name: 'state',
    field: 'toolPosition',
    dims: 2,
    format: 'tool_xy',
    range: [-0.95, 0.95],
    description: "the tool's (x, y) on the table [−1, 1]², x right, y up",
  },
  { name: 'language', field: 'instruction', dims: 0, format: 'language' },
];

/**
 * The action of the continuous lite tasks: the tool's displacement (dx, dy) on the table plane, scaled down to length
 * at most MAX_STEP (0.06) by the env.
 */
export const LITE_DELTA_XY_ACTION: EnvConventions['action'] = [
  {
    name: 'position',
    dims: 2,
    format: 'delta_xy',
    range: [-0.06, 0.06],
    description: 'tool displacement (dx, dy), x right, y up; scaled down to length ≤ 0.06',
  },
];

/** The bare-table raster of each resolution, drawn once per process and only ever read (copied from). */
const TABLE_FRAMES = new Map<number, Raster>();

function tableFrameOf(resolution: number): Raster {
  let r = TABLE_FRAMES.get(resolution);
  if (r === undefined) TABLE_FRAMES.set(resolution, (r = new Raster(resolution).clear(COLORS.table)));
  return r;
}

function badAction(envId: string, message: string): ImepError {
  return new ImepError('E_USAGE', `${envId}: bad action: ${message}`, { field: 'action' });
}

/** The action's values, checked: one of the allowed lengths, every value finite. No copy. */
export function readAction(envId: string, action: LiteAction, lengths: readonly number[]): ArrayLike<number> {
  let values: ArrayLike<number>;
  if (action instanceof Float32Array || action instanceof Float64Array || Array.isArray(action)) {
    values = action as ArrayLike<number>;
  } else {
    const nd = action as NdArray;
    if (nd.dtype !== 'float32' && nd.dtype !== 'float64') throw badAction(envId, `dtype ${nd.dtype} (want float32)`);
    if (!(nd.data instanceof Float32Array || nd.data instanceof Float64Array)) {
      throw badAction(envId, 'data is not a Float32Array/Float64Array');
    }
    let n = 1;
    for (const d of nd.shape) n *= d;
    if (n !== nd.data.length)
      throw badAction(envId, `shape [${nd.shape.join(', ')}] does not match ${nd.data.length} values`);
    values = nd.data;
  }
  if (!lengths.includes(values.length)) {
    throw badAction(envId, `${values.length} values (want ${lengths.join(' or ')})`);
  }
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw badAction(envId, `value ${i} is ${String(values[i])}`);
  }
  return values;
}

/**
 * Base class of the lite tasks: reset/step bookkeeping, the tool, touches, and StepResult assembly.
 * Subclasses set up their scene in onReset, advance it in onStep (setting success / terminated /
 * reward) and draw it in render.
 */
export abstract class LiteEnvBase implements LiteEnv {
  readonly spec: EnvSpec;
  readonly frameField = LITE_FRAME_FIELD;
  readonly resolution: number;
  protected readonly frameShape: readonly number[];
  /** A raster holding the bare table, copied into each new frame (shared by every env of this resolution: read only). */
  protected readonly tableFrame: Raster;
  /** Where each step's new frame comes from when no given-back frame is spare (see FrameAllocator). */
  protected readonly frames: FrameAllocator;
  /** Frames given back (releaseObservation) and not yet drawn over: later frames reuse them, last in first out. */
  private readonly spareFrames: Uint8Array[] = [];
  /** Frames this env returned that were not given back: only these may be given back, each once. */
  private readonly outstanding = new WeakSet<Uint8Array>();
  /** The caller's memory the next non-final step draws its frame into (drawNextInto), or null. */
  private drawTarget: Uint8Array | null = null;
  /** Whether the frame being rendered went into drawTarget (then the result's frame is the caller's). */
  private drewIntoTarget = false;
  protected toolX = 0;
  protected toolY = 0;
  /** Where the tool starts at reset (kwarg `toolStart`); subclasses set it from their kwargs. */
  protected toolStart: ToolStart = 'home';
  protected elapsed = 0;
  protected seed = 0;
  protected attempt = 1;
  protected success = false;
  protected terminated = false;
  protected reward = 0;
  private started = false;
  private finished = false;

  protected constructor(spec: EnvSpec, resolution: number) {
    this.spec = spec;
    this.resolution = resolution;
    this.frameShape = Object.freeze([resolution, resolution, 3]);
    this.tableFrame = tableFrameOf(resolution);
    this.frames = new FrameAllocator(resolution * resolution * 3);
  }

  get running(): boolean {
    return this.started && !this.finished;
  }

  /** Reset-option keys the task accepts besides `attempt`. */
  protected abstract readonly resetOptionKeys: readonly string[];
  /** Action lengths the task accepts. */
  protected abstract readonly actionLengths: readonly number[];
  /** Sets up the scene from the scene PRNG and the (validated-keys) reset options. */
  protected abstract onReset(scene: Prng, options: Options): void;
  /** Applies one action; elapsed has already been incremented. */
  protected abstract onStep(action: ArrayLike<number>): void;
  /** Renders the current state into a new frame (HWC bytes). */
  protected abstract render(): Uint8Array;
  /** The instruction for the current episode. */
  protected abstract instruction(): string;
  /**
   * Adds the task's evaluator-only extras for the current state to `evaluator`, after the common fields and always
   * in the same order (assigned, not spread: a spread of a fresh object into the literal cost a slow property copy
   * on every step).
   */
  protected abstract writeEvaluatorExtras(evaluator: Record<string, ObsValue>): void;
  /** Steps after which the current episode is truncated (spec.maxSteps unless the task says otherwise). */
  protected episodeLimit(): number {
    return this.spec.maxSteps;
  }

  resetSync(request: ResetRequest): StepResult {
    const id = this.spec.id;
    const seed = checkSeed(id, request.seed);
    if (request.initStateId !== undefined) {
      throw new ImepError('E_USAGE', `${id}: lite simulators have no init states (initStateId given)`, {
        field: 'initStateId',
      });
    }
    this.drawTarget = null;
    const options = asOptions(id, 'options', request.options);
    checkKnownKeys(id, 'options', options, ['attempt', ...this.resetOptionKeys]);
    const attempt = optInt(id, 'options', options, 'attempt', 1, 1, 0x7fffffff);
    const root = new Prng(seed);
    if (this.toolStart === 'home') {
      this.toolX = TOOL_HOME[0];
      this.toolY = TOOL_HOME[1];
    } else {
      const tool = root.fork('tool');
      this.toolX = TOOL_HOME[0] + (tool.nextFloat() * 2 - 1) * TOOL_HOME_JITTER;
      this.toolY = TOOL_HOME[1] + (tool.nextFloat() * 2 - 1) * TOOL_HOME_JITTER;
    }
    this.seed = seed;
    this.attempt = attempt;
    this.elapsed = 0;
    this.success = false;
    this.terminated = false;
    this.reward = 0;
    this.started = false;
    this.onReset(root.fork('scene'), options);
    this.started = true;
    this.finished = false;
    const frame = this.render();
    return this.result(frame, false, sha256Hex(frame));
  }

  stepSync(action: LiteAction): StepResult {
    const id = this.spec.id;
    // drawNextInto applies to this step only, also when it throws
    const target = this.drawTarget;
    this.drawTarget = null;
    if (!this.started) throw new ImepError('E_USAGE', `${id}: step before reset`, { field: 'action' });
    if (this.finished) throw new ImepError('E_USAGE', `${id}: the episode is done; reset first`, { field: 'action' });
    const values = readAction(id, action, this.actionLengths);
    this.elapsed += 1;
    this.reward = 0;
    this.onStep(values);
    const truncated = !this.terminated && this.elapsed >= this.episodeLimit();
    if (this.terminated || truncated) this.finished = true;
    this.drawTarget = target;
    return this.result(this.render(), truncated, undefined);
  }

  /** Moves the tool by (dx, dy), length-clipped to MAX_STEP and clamped to the table. */
  protected moveTool(dx: number, dy: number): void {
    const len = Math.sqrt(dx * dx + dy * dy);
    if (len > MAX_STEP) {
      const s = MAX_STEP / len;
      dx *= s;
      dy *= s;
    }
    this.toolX = Math.min(TOOL_LIMIT, Math.max(-TOOL_LIMIT, this.toolX + dx));
    this.toolY = Math.min(TOOL_LIMIT, Math.max(-TOOL_LIMIT, this.toolY + dy));
  }

  /** Index of the nearest object within TOUCH_RADIUS of the tool centre, or −1. */
  protected touchedIndex(xs: ArrayLike<number>, ys: ArrayLike<number>, count: number): number {
    let best = -1;
    let bestD = TOUCH_RADIUS * TOUCH_RADIUS;
    for (let i = 0; i < count; i++) {
      const dx = (xs[i] ?? Number.NaN) - this.toolX;
      const dy = (ys[i] ?? Number.NaN) - this.toolY;
      const d = dx * dx + dy * dy;
      if (d <= bestD) {
        bestD = d;
        best = i;
      }
    }
    return best;
  }

  /** A new frame holding the bare table. */
  protected newFrame(): Raster {
    return this.frameOver(this.tableFrame);
  }

  /**
   * A frame no result holds (overwritten whole): the caller's drawNextInto view during a step that does not end the
   * episode, else a given-back frame when there is one, else a new one.
   */
  protected frameOver(background: Raster): Raster {
    const spare = this.takeTarget() ?? this.spareFrames.pop();
    if (spare === undefined) return new Raster(this.resolution, this.resolution, this.frames.copyOf(background.data));
    spare.set(background.data);
    return new Raster(this.resolution, this.resolution, spare);
  }

  /** An all-zero frame no result holds (as frameOver). */
  protected blankFrame(): Uint8Array {
    const spare = this.takeTarget() ?? this.spareFrames.pop();
    return spare === undefined ? this.frames.next() : spare.fill(0);
  }

  private takeTarget(): Uint8Array | undefined {
    const t = this.drawTarget;
    this.drawTarget = null;
    if (t === null || this.finished || this.elapsed === 0) return undefined;
    this.drewIntoTarget = true;
    return t;
  }

  /**
   * DrawsFramesInto.drawNextInto (the frame field `rgb`): the next step that does not end the episode draws its
   * frame into `view` (never a reset). Such a frame is the caller's: it cannot be given back.
   */
  drawNextInto(view: Uint8Array): boolean {
    if (!(view instanceof Uint8Array) || view.length !== this.frames.frameBytes) return false;
    this.drawTarget = view;
    return true;
  }

  /**
   * Gives back the frame of a result this env returned (TakesBackObservations.releaseObservation): a later reset or
   * step draws its frame into it. Throws for a frame this env did not return or that was already given back.
   */
  releaseObservation(result: StepResult): void {
    const rgb = result.obs[this.frameField] as NdArray | undefined;
    const frame = rgb?.data;
    if (!(frame instanceof Uint8Array) || !this.outstanding.delete(frame)) {
      throw new ImepError(
        'E_USAGE',
        `${this.spec.id}: releaseObservation of a frame this environment did not return, or gave back twice`,
        { field: 'releaseObservation' },
      );
    }
    this.spareFrames.push(frame);
  }

  /** Draws the tool on a raster. */
  protected drawTool(r: Raster): void {
    r.fillCircle(this.toolX, this.toolY, TOOL_RADIUS, COLORS.tool);
  }

  private result(frame: Uint8Array, truncated: boolean, firstFrameHash: string | undefined): StepResult {
    if (this.drewIntoTarget) this.drewIntoTarget = false;
    else this.outstanding.add(frame);
    const rgb: NdArray = { dtype: 'uint8', shape: this.frameShape, data: frame };
    const evaluator: Record<string, ObsValue> = {
      success: this.success,
      reward: this.reward,
      terminated: this.terminated,
      truncated,
      seed: this.seed,
      task: this.spec.id,
      attempt: this.attempt,
    };
    this.writeEvaluatorExtras(evaluator);
    const base = {
      obs: { rgb, toolPosition: Float32Array.of(this.toolX, this.toolY), instruction: this.instruction() },
      evaluator,
      done: this.finished,
      step: this.elapsed,
    };
    return firstFrameHash === undefined ? base : { ...base, firstFrameHash };
  }
}

/**
 * The async SimEnvironment over a synchronous lite core (errors become rejections), with the core's fast paths as
 * capabilities: its synchronous step, frames taken back, frames drawn into the caller's memory.
 */
export class LiteSimEnvironment implements SimEnvironment, StepsSynchronously, TakesBackObservations, DrawsFramesInto {
  readonly spec: EnvSpec;
  readonly core: LiteEnv;
  readonly frameField: string;
  private closed = false;

  constructor(core: LiteEnv) {
    this.core = core;
    this.spec = core.spec;
    this.frameField = core.frameField;
  }

  private assertOpen(): void {
    if (this.closed) throw new ImepError('E_USAGE', `${this.spec.id}: environment is closed`);
  }

  async reset(request: ResetRequest): Promise<StepResult> {
    this.assertOpen();
    return this.core.resetSync(request);
  }

  async step(action: NdArray): Promise<StepResult> {
    return this.stepSync(action);
  }

  stepSync(action: NdArray): StepResult {
    this.assertOpen();
    return this.core.stepSync(action);
  }

  releaseObservation(result: StepResult): void {
    this.core.releaseObservation(result);
  }

  drawNextInto(view: Uint8Array): boolean {
    return this.core.drawNextInto(view);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
