/**
 * Decision replay with constructive pairing.
 *
 * Input is data: per condition, one decision (drawer position) per chain — from a decisions file today,
 * from a sealed evidence unit's rows later. Each DISTINCT (chain, choice) is executed exactly once with
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
 */
import { ImepError } from '../core/errors.js';
import type { Chain, ChainManifest } from './manifest-schema.js';
import type { ChainExecutor, ExecutionOutcome, ExecutorSlot } from './executor.js';

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

export async function replayDecisions(opts: ReplayOptions): Promise<ReplayResult> {
  const { manifest } = opts;
  const byId = new Map<string, Chain>(manifest.chains.map((c) => [c.id, c]));
  const names = opts.conditions.map((c) => c.name);
  if (new Set(names).size !== names.length) usage('a condition is listed twice', 'conditions');
  const floor = opts.replayFloor ?? true;
  if (floor && names.includes(REPLAY_FLOOR_CONDITION)) usage(`condition name ${REPLAY_FLOOR_CONDITION} is reserved for the replay floor`, 'conditions');

  // Requests: per chain, the set of choices (primary) — and per condition, the chosen drawer.
  const perCondition = opts.conditions.map((c) => {
    const m = new Map<string, number>();
    c.decisions.forEach((d, i) => {
      const chain = byId.get(d.chainId);
      if (chain === undefined) usage(`condition ${c.name}: chain ${d.chainId} is not in the manifest`, `${c.name}.decisions[${i}].chainId`);
      if (!(Number.isInteger(d.choice) && d.choice >= 0 && d.choice < chain.K)) {
        usage(`condition ${c.name}: chain ${d.chainId}: choice ${d.choice} is not a drawer in 0..${chain.K - 1}`, `${c.name}.decisions[${i}].choice`);
      }
      if (m.has(d.chainId)) usage(`condition ${c.name}: chain ${d.chainId} has two decisions`, `${c.name}.decisions[${i}]`);
      m.set(d.chainId, d.choice);
    });
    return { name: c.name, decisions: m };
  });

  let calls = 0;
  const counted = async (chain: Chain, choice: number, slot: ExecutorSlot): Promise<ExecutionOutcome> => {
    calls++;
    const executorSeed = slot === 'primary' ? chain.executorSeeds.primary : chain.executorSeeds.replay;
    const out = await opts.executor.executeChoice(chain, choice, { slot, executorSeed });
    if (out.success && !out.executed) throw new ImepError('E_INTERNAL', `executor: chain ${chain.id}: success reported without execution`);
    return out;
  };

  const executions = new Map<string, ExecutionRecord>();
  let distinctDecisionPairs = 0;
  for (const chain of manifest.chains) {
    const choices = new Set<number>();
    for (const c of perCondition) {
      const ch = c.decisions.get(chain.id);
      if (ch !== undefined) choices.add(ch);
    }
    const slots: [number, ExecutorSlot][] = [...choices].sort((a, b) => a - b).map((ch) => [ch, 'primary']);
    distinctDecisionPairs += slots.length;
    if (floor) slots.push([chain.finalFact.drawer, 'replay']);
    for (const [choice, slot] of slots) {
      const key = executionKey(chain.id, choice, slot);
      const out = await counted(chain, choice, slot); // one at a time: execution order is part of the record
      const executorSeed = slot === 'primary' ? chain.executorSeeds.primary : chain.executorSeeds.replay;
      executions.set(key, { key, chainId: chain.id, choice, slot, executorSeed, executed: out.executed, success: out.success });
    }
  }

  const rows: ReplayRow[] = [];
  const lookup = (chain: Chain, condition: string, choice: number, slot: ExecutorSlot): void => {
    const key = executionKey(chain.id, choice, slot);
    const ex = executions.get(key);
    if (ex === undefined) throw new ImepError('E_INTERNAL', `replay: no execution recorded for ${key}`);
    rows.push({ chainId: chain.id, condition, choice, correct: choice === chain.finalFact.drawer, executionKey: key, executed: ex.executed, success: ex.success });
  };
  for (const c of perCondition) {
    for (const chain of manifest.chains) {
      const choice = c.decisions.get(chain.id);
      if (choice !== undefined) lookup(chain, c.name, choice, 'primary');
    }
  }
  if (floor) for (const chain of manifest.chains) lookup(chain, REPLAY_FLOOR_CONDITION, chain.finalFact.drawer, 'replay');

  const verification: ReplayVerification = {
    rows: rows.length,
    distinctDecisionPairs,
    distinctExecutionKeys: executions.size,
    executions: calls,
    extraExecutions: calls - executions.size,
  };
  if (calls !== executions.size) {
    throw new ImepError('E_INTERNAL', `replay made ${calls} executions for ${executions.size} distinct (chain, decision) keys`);
  }
  return { conditions: floor ? [...names, REPLAY_FLOOR_CONDITION] : names, rows, executions: [...executions.values()], verification };
}
