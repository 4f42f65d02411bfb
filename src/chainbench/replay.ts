/**
 * Decision replay with constructive pairing.
 *
 * Input is data: per condition, one decision (drawer position) per chain — read from a sealed decisions
 * unit's rows (decision-unit.ts). `planReplay` fixes every execution from the decisions alone, before
 * anything runs (a replay unit freezes that plan at its precommit). Each DISTINCT (chain, choice) is executed exactly once with
 * the chain's primary executor seed, and every condition that reached that choice shares that one
 * execution, so conditions with identical decisions on a chain have identical task success by
 * construction. Executions are made one at a time in manifest order, choices ascending within a chain
 * (the executor may be asynchronous, e.g. a bridge-hosted simulator).
 *
 * Replay floor R (optional, default on): the oracle decision (the final fact) is issued again as an
 * identical instruction, executed once more with the chain's replay executor seed (a different
 * derivation); O vs R discordance measures how far the executor is from bitwise repeatable.
 *
 * Verification: the executor is wrapped in a counter; the number of calls must equal the number of
 * distinct execution keys (chain, choice, slot) — zero extra executions — else E_INTERNAL.
 * Decision accuracy and task success are recorded per row, separately; they are never pooled.
 * `onChain` receives each chain's executions and rows as soon as they exist (replay-unit.ts makes one
 * durable row of them).
 */
import { ImepError } from '../core/index.js';
import type { Chain, ChainManifest } from './manifest-schema.js';
import type { ChainExecutor, ExecutorSlot } from './executor.js';

export const REPLAY_FLOOR_CONDITION = 'R';

export interface ReplayConditionInput {
  readonly name: string;
  readonly decisions: readonly { readonly chainId: string; readonly choice: number }[];
}

export interface ReplayOptions {
  readonly manifest: ChainManifest;
  readonly conditions: readonly ReplayConditionInput[];
  readonly executor: ChainExecutor;
  /** Add condition R (default true). */
  readonly replayFloor?: boolean;
}

export interface ExecutionRecord {
  readonly key: string;
  readonly chainId: string;
  readonly choice: number;
  readonly slot: ExecutorSlot;
  readonly executorSeed: number;
  readonly executed: boolean;
  readonly success: boolean;
}

export interface ReplayRow {
  readonly chainId: string;
  readonly condition: string;
  readonly choice: number;
  /** Decision accuracy: choice = final fact. */
  readonly correct: boolean;
  /** The execution this row looked up. */
  readonly executionKey: string;
  readonly executed: boolean;
  /** Task success of the shared execution. */
  readonly success: boolean;
}

export interface ReplayVerification {
  readonly rows: number;
  /** Distinct (chain, choice) keys with the primary seed. */
  readonly distinctDecisionPairs: number;
  /** Distinct execution keys, R included. */
  readonly distinctExecutionKeys: number;
  /** Calls the executor actually received. */
  readonly executions: number;
  readonly extraExecutions: number;
}

export interface ReplayResult {
  readonly conditions: readonly string[];
  readonly rows: readonly ReplayRow[];
  readonly executions: readonly ExecutionRecord[];
  readonly verification: ReplayVerification;
}

export function executionKey(chainId: string, choice: number, slot: ExecutorSlot): string {
  return `${chainId}#${choice}${slot === 'primary' ? '' : `@${slot}`}`;
}

function usage(message: string, field: string): never {
  throw new ImepError('E_USAGE', message, { field });
}

/** One planned execution: the key, the drawer and which executor seed it uses. */
export interface PlannedExecution {
  readonly key: string;
  readonly choice: number;
  readonly slot: ExecutorSlot;
}

/** A chain's planned executions, in execution order (primary choices ascending, then R). */
export interface PlannedChain {
  readonly chainId: string;
  readonly executions: readonly PlannedExecution[];
}

/** The replay plan: fixed by the decisions alone, before anything is executed. */
export interface ReplayPlan {
  readonly conditions: readonly string[];
  readonly replayFloor: boolean;
  readonly chains: readonly PlannedChain[];
  readonly distinctDecisionPairs: number;
  /** Per condition (in input order), chain id → choice. */
  readonly decisions: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/** Everything replay learned about one chain (what a sealed replay unit stores as one row). */
export interface ChainReplay {
  readonly chain: Chain;
  readonly executions: readonly ExecutionRecord[];
  /** This chain's rows, conditions in plan order (R last). */
  readonly rows: readonly ReplayRow[];
}

/** Checks the decisions and plans the executions: one per distinct (chain, choice), plus R per chain. */
export function planReplay(
  manifest: ChainManifest,
  conditions: readonly ReplayConditionInput[],
  replayFloor = true,
): ReplayPlan {
  const byId = new Map<string, Chain>(manifest.chains.map((c) => [c.id, c]));
  const names = conditions.map((c) => c.name);
  if (new Set(names).size !== names.length) usage('a condition is listed twice', 'conditions');
  if (replayFloor && names.includes(REPLAY_FLOOR_CONDITION))
    usage(`condition name ${REPLAY_FLOOR_CONDITION} is reserved for the replay floor`, 'conditions');
  const decisions = new Map<string, Map<string, number>>();
  for (const c of conditions) {
    const m = new Map<string, number>();
    c.decisions.forEach((d, i) => {
      const chain = byId.get(d.chainId);
      if (chain === undefined)
        usage(`condition ${c.name}: chain ${d.chainId} is not in the manifest`, `${c.name}.decisions[${i}].chainId`);
      if (!(Number.isInteger(d.choice) && d.choice >= 0 && d.choice < chain.K)) {
        usage(
          `condition ${c.name}: chain ${d.chainId}: choice ${d.choice} is not a drawer in 0..${chain.K - 1}`,
          `${c.name}.decisions[${i}].choice`,
        );
      }
      if (m.has(d.chainId))
        usage(`condition ${c.name}: chain ${d.chainId} has two decisions`, `${c.name}.decisions[${i}]`);
      m.set(d.chainId, d.choice);
    });
    decisions.set(c.name, m);
  }
  let distinctDecisionPairs = 0;
  const chains: PlannedChain[] = manifest.chains.map((chain) => {
    const choices = new Set<number>();
    for (const m of decisions.values()) {
      const ch = m.get(chain.id);
      if (ch !== undefined) choices.add(ch);
    }
    const slots: [number, ExecutorSlot][] = [...choices].sort((a, b) => a - b).map((ch) => [ch, 'primary']);
    distinctDecisionPairs += slots.length;
    if (replayFloor) slots.push([chain.finalFact.drawer, 'replay']);
    return {
      chainId: chain.id,
      executions: slots.map(([choice, slot]) => ({ key: executionKey(chain.id, choice, slot), choice, slot })),
    };
  });
  return {
    conditions: replayFloor ? [...names, REPLAY_FLOOR_CONDITION] : names,
    replayFloor,
    chains,
    distinctDecisionPairs,
    decisions,
  };
}

export interface ReplayRunOptions extends ReplayOptions {
  /** Called after each chain's executions, in manifest order (a sealed unit appends its row here). */
  readonly onChain?: (chain: ChainReplay) => void | Promise<void>;
}

export async function replayDecisions(opts: ReplayRunOptions): Promise<ReplayResult> {
  const { manifest } = opts;
  const plan = planReplay(manifest, opts.conditions, opts.replayFloor ?? true);
  const names = opts.conditions.map((c) => c.name);

  let calls = 0;
  const executions = new Map<string, ExecutionRecord>();
  const rowsByChain = new Map<string, ReplayRow[]>();
  for (const [i, chain] of manifest.chains.entries()) {
    const planned = plan.chains[i]!;
    const own: ExecutionRecord[] = [];
    for (const { key, choice, slot } of planned.executions) {
      calls++;
      const executorSeed = slot === 'primary' ? chain.executorSeeds.primary : chain.executorSeeds.replay;
      // one at a time: execution order is part of the record
      const out = await opts.executor.executeChoice(chain, choice, { slot, executorSeed });
      if (out.success && !out.executed)
        throw new ImepError('E_INTERNAL', `executor: chain ${chain.id}: success reported without execution`);
      if (executions.has(key)) throw new ImepError('E_INTERNAL', `replay: execution ${key} made twice`);
      const rec: ExecutionRecord = {
        key,
        chainId: chain.id,
        choice,
        slot,
        executorSeed,
        executed: out.executed,
        success: out.success,
      };
      executions.set(key, rec);
      own.push(rec);
    }
    const rows: ReplayRow[] = [];
    const lookup = (condition: string, choice: number, slot: ExecutorSlot): void => {
      const key = executionKey(chain.id, choice, slot);
      const ex = executions.get(key);
      if (ex === undefined) throw new ImepError('E_INTERNAL', `replay: no execution recorded for ${key}`);
      rows.push({
        chainId: chain.id,
        condition,
        choice,
        correct: choice === chain.finalFact.drawer,
        executionKey: key,
        executed: ex.executed,
        success: ex.success,
      });
    };
    for (const name of names) {
      const choice = plan.decisions.get(name)!.get(chain.id);
      if (choice !== undefined) lookup(name, choice, 'primary');
    }
    if (plan.replayFloor) lookup(REPLAY_FLOOR_CONDITION, chain.finalFact.drawer, 'replay');
    rowsByChain.set(chain.id, rows);
    await opts.onChain?.({ chain, executions: own, rows });
  }

  // rows condition-major (each condition's chains in manifest order)
  const rows: ReplayRow[] = [];
  for (const name of plan.conditions)
    for (const chain of manifest.chains) rows.push(...rowsByChain.get(chain.id)!.filter((r) => r.condition === name));

  const verification: ReplayVerification = {
    rows: rows.length,
    distinctDecisionPairs: plan.distinctDecisionPairs,
    distinctExecutionKeys: executions.size,
    executions: calls,
    extraExecutions: calls - executions.size,
  };
  if (calls !== executions.size) {
    throw new ImepError(
      'E_INTERNAL',
      `replay made ${calls} executions for ${executions.size} distinct (chain, decision) keys`,
    );
  }
  return { conditions: plan.conditions, rows, executions: [...executions.values()], verification };
}
