/**
 * What the runner must know about a task that the protocol does not say:
 *
 * - `factField`: the evaluator-only field holding the task's target fact (the ball cup, the cue colour).
 *   S/T donor assignment pairs units by it (same fact / different fact). Read from the evaluator of the
 *   reset result, never shown to the policy.
 * - `decisionFromStep`: reads at elapsed step ≥ this are DECISION queries (the fact must be in memory by
 *   then: ShellGame's cue frames are steps 0–4, RememberColor's candidates appear at step 10). Earlier
 *   reads are recorded but are not decision queries, so survival coverage asks "does substituted content
 *   reach every decision", not "is the read at step 0 (which has no history) substituted".
 *
 * Unknown environments (sim-bridge tasks) get no fact field (S/T refused on them) and every step a
 * decision step.
 */
import { CHAIN_DRAWERS_ID } from '../../bridges/lite/chain-drawers.js';
import { REMEMBER_COLOR_CANDIDATES_FROM, rememberColorId } from '../../bridges/lite/remember-color.js';
import { SHELL_GAME_CUE_STEPS, SHELL_GAME_ID } from '../../bridges/lite/shell-game.js';

export interface TaskFacts {
  readonly factField: string | null;
  readonly decisionFromStep: number;
}

const REMEMBER_COLOR: TaskFacts = { factField: 'targetColorIndex', decisionFromStep: REMEMBER_COLOR_CANDIDATES_FROM };

const KNOWN: Readonly<Record<string, TaskFacts>> = {
  [SHELL_GAME_ID]: { factField: 'ballCup', decisionFromStep: SHELL_GAME_CUE_STEPS },
  [rememberColorId(3)]: REMEMBER_COLOR,
  [rememberColorId(5)]: REMEMBER_COLOR,
  [rememberColorId(9)]: REMEMBER_COLOR,
  [CHAIN_DRAWERS_ID]: { factField: null, decisionFromStep: 0 },
};

export function taskFacts(envId: string): TaskFacts {
  return KNOWN[envId] ?? { factField: null, decisionFromStep: 0 };
}
