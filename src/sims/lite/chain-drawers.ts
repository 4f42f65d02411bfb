/**
 * ChainDrawers-lite: a LIBERO-like agentic-memory chain (ChainBench structure, IMEP paper §3.5).
 * A chain is a sequence of episodes on one scene (one reset seed): a write episode reveals which drawer
 * an object goes in, distractor episodes reveal other object→drawer pairs, and a query episode shows the
 * query object with the K drawers closed — pixel-identical whatever the hidden fact — and asks the agent
 * to commit to one drawer. A seeded stochastic motor executor then carries the choice out.
 *
 * Scene: K drawers (kwargs.K, 2–4, default 2) in a row (fronts spanning x ∈ [−0.7, 0.7], y ∈ [0.25,
 * 0.65]); objects from CHAIN_OBJECTS (each a distinct colour). The tool sits at home (kwarg `toolStart`) and never
 * moves (the robot only decides here).
 *
 * Reset options `{ role, object, drawer, executorSeed, attempt }`:
 * - `role` 'write' | 'distractor' | 'query' (default 'query').
 * - `object` (name from CHAIN_OBJECTS or its index) and `drawer` (0..K−1): the fact. Defaults are drawn
 *   from the scene PRNG (Prng(seed).fork('scene'): object first, then drawer), so a bare reset is a
 *   stand-alone query with chance floor 1/K.
 * - `executorSeed` (uint32, default the reset seed).
 * write / distractor: the drawer `drawer` is drawn open with `object` just below it (revealing
 *   object→drawer); the instruction states the pair too. Actions are ignored (any accepted shape); the
 *   episode terminates after WRITE_EPISODE_STEPS = 3 steps with success false (no task to succeed at).
 * query: the object at (0, −0.25), every drawer closed. The first action is the decision:
 *   float32 of length K = logits / one-hot (argmax, ties → lowest index), or float32 of length 1 =
 *   the drawer index itself (an integer value in 0..K−1). The executor draws
 *   `Prng(executorSeed).fork('choice:<decision>').nextFloat() < executionSuccess`
 *   (kwargs.executionSuccess, default 0.8), so the same executorSeed and choice always give the same
 *   execution (constructive pairing: conditions reaching the same decision share one execution), and
 *   success = decisionCorrect AND executed. The episode terminates after that step; its frame shows the
 *   chosen drawer open and, if executed, the object below it.
 *
 * Evaluator-only extras: `role`, `object` (name), `correctDrawer` (the fact: the revealed drawer in
 * write/distractor episodes, the hidden answer in a query), `decision` (null until made), `firstVisit`
 * (= decision, the uniform first-choice readout of the lite envs), `decisionCorrect`, `executed`
 * (null until the decision), `executorSeed`.
 */
import { ImepError, Prng } from '../../core/index.js';
import type { ObsValue } from '../../runtime/index.js';
import { LiteEnvBase, liteSpec } from './lite-env.js';
import { checkKnownKeys, optEnum, optInt, optNumber, optResolution, type Options, optToolStart } from './options.js';
import { COLORS, Raster, type Rgb } from './render.js';

export const CHAIN_DRAWERS_ID = 'ChainDrawers-lite';
export const WRITE_EPISODE_STEPS = 3;
export const CHAIN_ROLES = ['write', 'distractor', 'query'] as const;
export type ChainRole = (typeof CHAIN_ROLES)[number];

export interface ChainObject {
  readonly name: string;
  readonly color: Rgb;
  readonly shape: 'circle' | 'square';
}

/** The fixed object set (distinct colours, none equal to a scene colour). */
export const CHAIN_OBJECTS: readonly ChainObject[] = Object.freeze([
  { name: 'bowl', color: [40, 90, 200], shape: 'circle' },
  { name: 'mug', color: [200, 50, 50], shape: 'circle' },
  { name: 'ketchup', color: [230, 120, 20], shape: 'square' },
  { name: 'butter', color: [240, 220, 90], shape: 'square' },
  { name: 'milk', color: [250, 250, 250], shape: 'square' },
  { name: 'soup', color: [50, 160, 70], shape: 'circle' },
] as const);

export const DRAWER_ROW: { readonly x0: number; readonly x1: number; readonly y0: number; readonly y1: number } = {
  x0: -0.7,
  x1: 0.7,
  y0: 0.25,
  y1: 0.65,
};
export const OBJECT_SIZE = 0.09;
export const QUERY_OBJECT_POSITION: readonly [number, number] = [0, -0.25];
/** y of an object placed beside (below) its drawer. */
export const BESIDE_DRAWER_Y = 0;

/** Centre x of drawer k of K. */
export function drawerCenterX(k: number, count: number): number {
  return DRAWER_ROW.x0 + ((k + 0.5) * (DRAWER_ROW.x1 - DRAWER_ROW.x0)) / count;
}

export function chainInstruction(role: ChainRole, object: string, drawer: number): string {
  return role === 'query' ? `put the ${object} in its drawer` : `the ${object} goes in drawer ${drawer + 1}`;
}

/** The seeded motor executor: does executing `choice` succeed? Depends only on (executorSeed, choice). */
export function executorSucceeds(executorSeed: number, choice: number, executionSuccess: number): boolean {
  return new Prng(executorSeed).fork(`choice:${choice}`).nextFloat() < executionSuccess;
}

const KWARG_KEYS = ['resolution', 'K', 'executionSuccess', 'toolStart'] as const;
const RESET_KEYS = ['role', 'object', 'drawer', 'executorSeed'] as const;

export class ChainDrawersLite extends LiteEnvBase {
  protected readonly resetOptionKeys = RESET_KEYS;
  protected readonly actionLengths: readonly number[];
  readonly k: number;
  readonly executionSuccess: number;
  private readonly closedDrawers: Raster;
  private role: ChainRole = 'query';
  private object = 0;
  private drawer = 0;
  private executorSeed = 0;
  private decision: number | null = null;
  private executed: boolean | null = null;

  constructor(kwargs: Options = {}) {
    const id = CHAIN_DRAWERS_ID;
    const resolution = optResolution(id, kwargs);
    const k = optInt(id, 'kwargs', kwargs, 'K', 2, 2, 4);
    super(
      liteSpec({
        id,
        maxSteps: WRITE_EPISODE_STEPS,
        resolution,
        action: { shape: [k], dtype: 'float32' },
        actionConventions: [
          {
            name: 'choice',
            dims: k,
            format: 'scores_argmax',
            description: 'one score per drawer, the highest chosen (a [1] action naming the drawer index is taken too)',
          },
        ],
        evaluator: {
          role: { shape: [], dtype: 'string' },
          object: { shape: [], dtype: 'string' },
          correctDrawer: { shape: [], dtype: 'int32' },
          decision: { shape: [], dtype: 'int32' },
          firstVisit: { shape: [], dtype: 'int32' },
          decisionCorrect: { shape: [], dtype: 'bool' },
          executed: { shape: [], dtype: 'bool' },
          executorSeed: { shape: [], dtype: 'uint32' },
        },
        instruction: 'put the object in its drawer',
      }),
      resolution,
    );
    checkKnownKeys(id, 'kwargs', kwargs, KWARG_KEYS);
    this.k = k;
    this.toolStart = optToolStart(id, kwargs);
    this.actionLengths = [k, 1];
    this.executionSuccess = optNumber(id, 'kwargs', kwargs, 'executionSuccess', 0.8, 0, 1);
    this.closedDrawers = this.tableFrame.clone();
    for (let d = 0; d < k; d++) this.drawDrawer(this.closedDrawers, d, false);
  }

  private drawDrawer(r: Raster, d: number, open: boolean): void {
    const cx = drawerCenterX(d, this.k);
    const half = ((DRAWER_ROW.x1 - DRAWER_ROW.x0) / this.k) * 0.4;
    const { y0, y1 } = DRAWER_ROW;
    if (open) {
      r.fillRect(cx - half, y0, cx + half, y1, COLORS.drawerOpen);
      r.fillRect(cx - half, y0 - 0.1, cx + half, y0, COLORS.drawer);
      r.fillRect(cx - half * 0.3, y0 - 0.08, cx + half * 0.3, y0 - 0.05, COLORS.handle);
    } else {
      r.fillRect(cx - half, y0, cx + half, y1, COLORS.drawer);
      r.fillRect(cx - half * 0.3, y0 + 0.04, cx + half * 0.3, y0 + 0.08, COLORS.handle);
    }
  }

  private drawObject(r: Raster, x: number, y: number): void {
    const o = CHAIN_OBJECTS[this.object];
    if (o === undefined) return;
    if (o.shape === 'circle') r.fillCircle(x, y, OBJECT_SIZE, o.color);
    else r.fillSquare(x, y, OBJECT_SIZE * 0.85, o.color);
  }

  protected onReset(scene: Prng, options: Options): void {
    const id = this.spec.id;
    const seededObject = scene.nextInt(CHAIN_OBJECTS.length);
    const seededDrawer = scene.nextInt(this.k);
    this.role = optEnum(id, 'options', options, 'role', 'query', CHAIN_ROLES);
    this.object = this.readObject(options['object'], seededObject);
    this.drawer = optInt(id, 'options', options, 'drawer', seededDrawer, 0, this.k - 1);
    this.executorSeed = optInt(id, 'options', options, 'executorSeed', this.seed, 0, 0xffffffff);
    this.decision = null;
    this.executed = null;
  }

  private readObject(value: unknown, fallback: number): number {
    if (value === undefined) return fallback;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < CHAIN_OBJECTS.length)
      return value;
    if (typeof value === 'string') {
      const i = CHAIN_OBJECTS.findIndex((o) => o.name === value);
      if (i >= 0) return i;
    }
    throw new ImepError(
      'E_USAGE',
      `${this.spec.id}: options.object must be an object name or index, got ${JSON.stringify(value)}`,
      {
        field: 'options.object',
        hint: `known objects: ${CHAIN_OBJECTS.map((o) => o.name).join(', ')}`,
      },
    );
  }

  private readDecision(action: ArrayLike<number>): number {
    if (action.length === 1) {
      const c = action[0] ?? Number.NaN;
      if (!Number.isInteger(c) || c < 0 || c >= this.k) {
        throw new ImepError(
          'E_USAGE',
          `${this.spec.id}: bad action: choice ${c} is not a drawer index in 0..${this.k - 1}`,
          {
            field: 'action',
          },
        );
      }
      return c;
    }
    let best = 0;
    for (let i = 1; i < action.length; i++) if ((action[i] ?? 0) > (action[best] ?? 0)) best = i;
    return best;
  }

  protected override episodeLimit(): number {
    return this.role === 'query' ? 1 : WRITE_EPISODE_STEPS;
  }

  protected onStep(action: ArrayLike<number>): void {
    if (this.role !== 'query') {
      if (this.elapsed >= WRITE_EPISODE_STEPS) this.terminated = true;
      return;
    }
    const decision = this.readDecision(action);
    this.decision = decision;
    this.executed = executorSucceeds(this.executorSeed, decision, this.executionSuccess);
    this.success = decision === this.drawer && this.executed;
    this.reward = this.success ? 1 : 0;
    this.terminated = true;
  }

  protected render(): Uint8Array {
    const frame = this.frameOver(this.closedDrawers);
    if (this.role !== 'query') {
      this.drawDrawer(frame, this.drawer, true);
      this.drawObject(frame, drawerCenterX(this.drawer, this.k), BESIDE_DRAWER_Y);
    } else if (this.decision === null) {
      this.drawObject(frame, QUERY_OBJECT_POSITION[0], QUERY_OBJECT_POSITION[1]);
    } else {
      this.drawDrawer(frame, this.decision, true);
      if (this.executed === true) this.drawObject(frame, drawerCenterX(this.decision, this.k), BESIDE_DRAWER_Y);
      else this.drawObject(frame, QUERY_OBJECT_POSITION[0], QUERY_OBJECT_POSITION[1]);
    }
    this.drawTool(frame);
    return frame.data;
  }

  protected instruction(): string {
    return chainInstruction(this.role, CHAIN_OBJECTS[this.object]?.name ?? '?', this.drawer);
  }

  protected writeEvaluatorExtras(e: Record<string, ObsValue>): void {
    e['role'] = this.role;
    e['object'] = CHAIN_OBJECTS[this.object]?.name ?? '?';
    e['correctDrawer'] = this.drawer;
    e['decision'] = this.decision;
    e['firstVisit'] = this.decision;
    e['decisionCorrect'] = this.decision === null ? null : this.decision === this.drawer;
    e['executed'] = this.executed;
    e['executorSeed'] = this.executorSeed;
  }
}
