/**
 * The lite tasks the lite checkpoints are trained and measured on, and their demonstration experts.
 *
 * Each expert reads only method-visible fields (rgb, toolPosition) and the elapsed step, like the scripted
 * controllers in src/sims/lite/scripted.ts (whose logic they follow), and holds still until the memory phase
 * starts, so that the robot's own pose carries no trace of the cue (a policy could otherwise "remember" through
 * where it stands). Each task has two experts: WITH memory (executed; its actions are the labels of episodes
 * whose memory reads work) and WITHOUT memory (what an agent with the same observations but no memory does:
 * the object nearest its own pose — its actions label the episodes whose reads are blocked, and every episode
 * of the blind checkpoint). `choice` is the object the expert is heading for (−1 while it has none): the
 * decision-logit label.
 *
 * - shell: ShellGameTouch-lite, strict (the first cup touched decides), camera blackout from step 6. The expert
 *   reads the ball at steps 0–4, holds still through step 5, and from step 6 (every frame black) moves to the
 *   remembered cup. Decision = the cup index (3-way).
 * - rc3: RememberColor3-lite, strict. The expert reads the cue colour at steps 0–4, holds still until the
 *   candidates appear at step 10, then moves to the square of the remembered colour. Decision = the palette
 *   index of the colour (3-way).
 * - rc3-retry, rc5-retry: RememberColor{3,5}-lite as protocols/remembercolor-substitution.yaml runs them (not strict,
 *   cue not re-shown on retry). Demonstrations are attempt-1 episodes (the cue is shown); the same expert. Decision =
 *   the palette index of the colour, over the whole 9-colour palette (one decision head serves K = 3 and K = 5).
 */
import { ImepError } from '../../src/core/errors.js';
import { COLORS, colorCentroid } from '../../src/sims/lite/render.js';
import { CUE_POSITION, REMEMBER_COLOR_CANDIDATES_FROM, REMEMBER_COLOR_CUE_END, REMEMBER_COLOR_PALETTE } from '../../src/sims/lite/remember-color.js';
import { cupPosition, frameOf, toolOf, towards, type LiteController, type MethodObs } from '../../src/sims/lite/scripted.js';
import { CUP_X, SHELL_GAME_CUE_STEPS } from '../../src/sims/lite/shell-game.js';
import type { StepResult } from '../../src/runtime/environment.js';

export const DEMO_TASKS = ['shell', 'rc3', 'rc3-retry', 'rc5-retry'] as const;
export type DemoTask = (typeof DEMO_TASKS)[number];

/** A demonstration expert: a controller that also says which object it is heading for. */
export interface Expert extends LiteController {
  /** Index of the object it is heading for after the last act() (cup or palette colour), or −1. */
  readonly choice: number;
}

export interface TaskSpec {
  readonly task: DemoTask;
  readonly env: string;
  readonly kwargs: Readonly<Record<string, unknown>>;
  /** Number of decision classes (decision-logit width). */
  readonly choices: number;
  /** Evaluator field holding the correct choice. */
  readonly answerField: string;
  /** Elapsed steps [0, cueSteps) show the fact to remember (the ball / the cue colour). */
  readonly cueSteps: number;
  /** A fresh expert with (true) or without (false) memory. */
  expert(memory: boolean): Expert;
}

function nearestIndex(xs: readonly number[], x: number): number {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (Math.abs((xs[i] ?? 0) - x) < Math.abs((xs[best] ?? 0) - x)) best = i;
  return best;
}

/**
 * ShellGame: reads the ball while it is visible (steps 0–4), holds still until `moveFrom`, then goes to the
 * remembered cup; without memory (or before any sighting) to the cup nearest its own x (from home: the centre).
 */
export class ShellGameExpert implements Expert {
  private seen: number | null = null;
  choice = -1;
  constructor(private readonly memory: boolean, private readonly moveFrom = 6) {}
  beginEpisode(): void {
    this.seen = null;
    this.choice = -1;
  }
  act(obs: MethodObs, step: number): Float32Array {
    const tool = toolOf(obs);
    let visible: number | null = null;
    if (step < SHELL_GAME_CUE_STEPS) {
      const f = frameOf(obs);
      const ball = colorCentroid(f.data, f.width, f.height, COLORS.ball);
      if (ball !== null) visible = nearestIndex(CUP_X, ball.x);
    }
    if (this.memory && visible !== null) this.seen = visible;
    const cup = visible ?? (this.memory ? this.seen : null) ?? nearestIndex(CUP_X, tool[0]);
    this.choice = cup;
    if (step < this.moveFrom) return Float32Array.of(0, 0);
    return towards(tool, cupPosition(cup));
  }
}

/**
 * RememberColor (K colours): reads the cue colour at steps 0–4, holds still until the candidates appear (step 10),
 * then goes to the square of the remembered colour; without memory to the candidate nearest its own pose,
 * chosen once at step 10 (as RememberColorPixelController with memory 'none').
 */
export class RememberColorExpert implements Expert {
  private color: number | null = null;
  private target: { index: number; at: [number, number] } | null = null;
  choice = -1;
  constructor(private readonly k: number, private readonly memory: boolean) {}
  beginEpisode(): void {
    this.color = null;
    this.target = null;
    this.choice = -1;
  }
  act(obs: MethodObs, step: number): Float32Array {
    const tool = toolOf(obs);
    const f = frameOf(obs);
    let visible: number | null = null;
    if (step < REMEMBER_COLOR_CUE_END) {
      const i = Math.floor(((CUE_POSITION[0] + 1) * f.width) / 2);
      const j = Math.floor(((1 - CUE_POSITION[1]) * f.height) / 2);
      const o = (j * f.width + i) * 3;
      const idx = REMEMBER_COLOR_PALETTE.findIndex((c) => c[0] === f.data[o] && c[1] === f.data[o + 1] && c[2] === f.data[o + 2]);
      if (idx >= 0 && idx < this.k) visible = idx;
    }
    if (this.memory && visible !== null) this.color = visible;
    if (step < REMEMBER_COLOR_CANDIDATES_FROM) {
      this.choice = visible ?? (this.memory ? this.color : null) ?? -1;
      return Float32Array.of(0, 0);
    }
    if (this.target === null) {
      if (this.color !== null) {
        const c = colorCentroid(f.data, f.width, f.height, REMEMBER_COLOR_PALETTE[this.color] ?? [0, 0, 0]);
        if (c !== null) this.target = { index: this.color, at: [c.x, c.y] };
      }
      if (this.target === null) {
        let bestD = Infinity;
        for (let i = 0; i < this.k; i++) {
          const c = colorCentroid(f.data, f.width, f.height, REMEMBER_COLOR_PALETTE[i] ?? [0, 0, 0]);
          if (c === null) continue;
          const d = Math.hypot(c.x - tool[0], c.y - tool[1]);
          if (d < bestD) {
            bestD = d;
            this.target = { index: i, at: [c.x, c.y] };
          }
        }
      }
    }
    this.choice = this.target?.index ?? -1;
    return this.target === null ? Float32Array.of(0, 0) : towards(tool, this.target.at);
  }
}

export function taskSpec(task: string): TaskSpec {
  switch (task) {
    case 'shell':
      return {
        task,
        env: 'ShellGameTouch-lite',
        kwargs: { blackoutFromStep: 6, strict: true },
        choices: 3,
        answerField: 'ballCup',
        cueSteps: SHELL_GAME_CUE_STEPS,
        expert: (memory) => new ShellGameExpert(memory, 6),
      };
    case 'rc3':
      return {
        task,
        env: 'RememberColor3-lite',
        kwargs: { strict: true },
        choices: 3,
        answerField: 'targetColorIndex',
        cueSteps: REMEMBER_COLOR_CUE_END,
        expert: (memory) => new RememberColorExpert(3, memory),
      };
    case 'rc3-retry':
    case 'rc5-retry': {
      const k = task === 'rc3-retry' ? 3 : 5;
      return {
        task,
        env: `RememberColor${k}-lite`,
        kwargs: { strict: false, reshowCueOnRetry: false },
        choices: REMEMBER_COLOR_PALETTE.length,
        answerField: 'targetColorIndex',
        cueSteps: REMEMBER_COLOR_CUE_END,
        expert: (memory) => new RememberColorExpert(k, memory),
      };
    }
    default:
      throw new ImepError('E_USAGE', `unknown demo task ${JSON.stringify(task)}`, { field: '--task', hint: `one of ${DEMO_TASKS.join(', ')}` });
  }
}

/** The correct choice of an episode, from the evaluator-only fields (training labels and scoring only). */
export function answerOf(spec: TaskSpec, r: StepResult): number {
  const v = r.evaluator[spec.answerField];
  if (typeof v !== 'number') throw new ImepError('E_INTERNAL', `${spec.env}: evaluator field ${spec.answerField} missing`);
  return v;
}
