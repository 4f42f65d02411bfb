/**
 * What the runner knows about a task, read from what its environment DECLARES (EnvSpec.fact and
 * EnvSpec.decisionFromStep; sim-bridge/PROTOCOL.md "Facts") — never from the task's name, so a simulator
 * joins IMEP by declaring what it is:
 *
 * - `factField`: the evaluator-only field holding the task's fact (the ball cup, the cue colour). S/T donor
 *   assignment pairs units by it (same fact / different fact), read from the evaluator of the reset result,
 *   never shown to the policy. null where the environment declares no fact (S/T refused on it).
 * - `domain`: the values the fact can take (a value outside it fails the unit closed).
 * - `decisionFromStep`: reads at elapsed step ≥ this are DECISION queries (the fact must be in memory by
 *   then). Earlier reads are recorded but are not decision queries, so survival coverage asks "does
 *   substituted content reach every decision", not "is the read at step 0 (which has no history) substituted".
 */
import type { EnvSpec } from './environment.js';

export interface TaskFacts {
  readonly factField: string | null;
  readonly domain: readonly (number | string)[] | null;
  readonly decisionFromStep: number;
}

/** The facts an environment's spec declares (none declared, or no spec: no fact field, every read a decision query). */
export function factsOf(spec: EnvSpec | undefined): TaskFacts {
  return {
    factField: spec?.fact?.field ?? null,
    domain: spec?.fact?.domain ?? null,
    decisionFromStep: spec?.decisionFromStep ?? 0,
  };
}
