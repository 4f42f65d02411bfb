/**
 * What the runtime and the environments must offer a plan's conditions, checked before anything runs: an oracle
 * source for O, an installable bank for point-acting conditions, a declared fact for S/T donor swaps.
 */
import { assertDisjointAllowlists, factsOf } from '../runtime/index.js';
import { ImepError } from '../core/index.js';
import type { PlannedEpisode, Protocol, ProtocolCondition } from '../protocol/index.js';
import { conditionPlan, type ConditionPlan } from './condition-plan.js';
import { conditionOf, segmentsOf, taskContext, taskEntries } from './plan-segments.js';
import type { PolicyProvider, RunnerPolicy, SpecSource, TaskContext, TaskEntry } from './types.js';

/**
 * Refuses, before anything runs, a condition the runtime cannot carry out on a task: O without an oracle source, a
 * point-acting condition on a bank that cannot be installed into (checkRuntime), an S/T swap on a task whose
 * environment declares no fact (checkFacts).
 */
export function checkCondition(
  condition: ProtocolCondition,
  task: TaskContext,
  policy: RunnerPolicy,
  runtime: string,
): ConditionPlan {
  const plan = checkRuntime(condition, installable(policy), runtime);
  checkFacts(plan, task);
  return plan;
}

/** Whether the runtime's bank can be installed into (a structured bank): what point-acting conditions need. */
export const installable = (policy: RunnerPolicy): boolean => policy.slotMemory(0).target !== null;

/**
 * What the policy runtime must offer the condition: `installable` says whether its bank can be installed into (known
 * before any policy is made: a structured-pcmb checkpoint only; precommit-checks.ts asks without loading it).
 */
export function checkRuntime(condition: ProtocolCondition, installable: boolean, runtime: string): ConditionPlan {
  const plan = conditionPlan(condition);
  if (plan.oracle) {
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `condition "${condition.id}" (${condition.kind}) needs an oracle source, which this policy runtime does not provide`,
      { field: `conditions.${condition.id}` },
    );
  }
  if (plan.pointAttempt !== null && !installable) {
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `condition "${condition.id}" acts at a registered point, but the policy's bank (${runtime}) cannot be installed into`,
      {
        field: `conditions.${condition.id}.installAt`,
        hint: 'point-acting conditions (U install, N clear, S, T) need a structured bank that persists across attempts',
      },
    );
  }
  return plan;
}

/** What the task's environment must declare for the condition (a fact, for S/T). */
export function checkFacts(plan: ConditionPlan, task: TaskContext): void {
  if (plan.donorMode !== null && task.facts.factField === null) throw noFactError(plan.condition.id, task);
}

/** S/T on a task whose environment declares no fact. */
export function noFactError(conditionId: string, task: TaskEntry): ImepError {
  return new ImepError(
    'E_PROTOCOL_INVALID',
    `condition "${conditionId}" swaps donors by fact, but the environment ${task.envId} (task ${task.task}) declares no fact`,
    {
      field: `conditions.${conditionId}`,
      hint: 'S/T donor swaps run on environments whose spec declares the evaluator-only field holding the task\'s fact (EnvSpec.fact; sim-bridge/PROTOCOL.md "Facts"): declare it in the simulator\'s adapter, or drop the condition',
    },
  );
}

/**
 * Checks every (condition, task) of a plan against the runtime (policyFor once per task). A task whose spec is not
 * known yet (`specs` gives undefined: a bridged simulator) is checked against its environment's declared facts
 * when the simulator's servers start (bridge-envs.ts, checkDeclaredFacts), before any row is written.
 */
export async function preflightPlan(
  protocol: Protocol,
  episodes: readonly PlannedEpisode[],
  policies: PolicyProvider,
  batchSize: number,
  specs: SpecSource,
): Promise<void> {
  assertDisjointAllowlists(protocol.allowlists, 'allowlists');
  const tasks = taskEntries(protocol);
  const seen = new Set<string>();
  const made = new Map<string, { policy: RunnerPolicy; task: TaskContext | null }>();
  for (const seg of segmentsOf(episodes)) {
    const key = `${seg.condition}\u001f${seg.task}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const entry = tasks.get(seg.task);
    if (entry === undefined)
      throw new ImepError('E_PROTOCOL_INVALID', `the plan names task ${seg.task}, which no env defines`, {
        field: 'envs',
      });
    let m = made.get(seg.task);
    if (m === undefined) {
      const spec = specs(entry);
      const task = spec === undefined ? null : taskContext(entry, spec);
      // a spec not known yet: the policy is made for the runtime checks alone (its decision-step rule is unused)
      const policy = await policies.policyFor(task ?? { ...entry, facts: factsOf(undefined) }, batchSize);
      made.set(seg.task, (m = { policy, task }));
    }
    const plan = checkRuntime(conditionOf(protocol, seg.condition), installable(m.policy), policies.description);
    if (m.task !== null) checkFacts(plan, m.task);
  }
}
