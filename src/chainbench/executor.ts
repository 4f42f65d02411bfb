/**
 * The motor-executor seam of decision replay: `executeChoice(chain, choice, run)` carries one committed
 * decision out once and reports whether the motion executed and whether the task succeeded
 * (success ⇒ executed; a wrong choice never succeeds). It may answer synchronously or with a promise.
 *
 * - `LiteChainExecutor` runs the chain's query episode on the in-process ChainDrawers-lite core (the
 *   manifest's executionSuccess; the chain's K, scene seed, query object and hidden final fact) with the
 *   given executor seed and submits the choice as the first action (float32 [choice]).
 * - `SimEnvironmentChainExecutor` does the same over any async `SimEnvironment` (the lite wrapper, or a
 *   bridge client hosting a simulator that accepts the same reset options and reports `executed` /
 *   `success` as evaluator fields), one environment per K from a factory.
 * - `BridgeChainExecutor` (bridge-executor.ts) connects to a bridge server itself and makes one remote
 *   environment per K; it records the server's identity in the replay unit.
 * The lite executor is seeded per (executorSeed, choice), so it is bitwise repeatable; real executors
 * need not be, which is what the replay floor R measures.
 */

/** What executed a replay, as recorded in the replay unit's frozen protocol. */
export type ExecutorIdentity =
  | { readonly kind: 'lite'; readonly env: 'ChainDrawers-lite'; readonly executionSuccess: number }
  | {
      readonly kind: 'bridge';
      readonly endpoint: string;
      readonly env: string;
      readonly executionSuccess: number;
      readonly server: {
        readonly name: string;
        readonly version: string;
        readonly protocol: number;
        readonly adapters: readonly string[];
      };
    };
import { ImepError } from '../core/index.js';
import { ChainDrawersLite } from '../sims/index.js';
import type { SimEnvironment, StepResult } from '../runtime/index.js';
import type { Chain, ChainManifest } from './manifest-schema.js';

export type ExecutorSlot = 'primary' | 'replay';

export interface ExecutionRun {
  /** Which of the chain's executor seeds this execution uses. */
  readonly slot: ExecutorSlot;
  readonly executorSeed: number;
}

export interface ExecutionOutcome {
  readonly executed: boolean;
  readonly success: boolean;
}

export interface ChainExecutor {
  executeChoice(chain: Chain, choice: number, run: ExecutionRun): ExecutionOutcome | Promise<ExecutionOutcome>;
}

/** The reset options of a chain's query episode (ChainDrawers-lite's contract). */
export function queryOptions(chain: Chain, run: ExecutionRun): Record<string, unknown> {
  return {
    role: 'query',
    object: chain.finalFact.object,
    drawer: chain.finalFact.drawer,
    executorSeed: run.executorSeed,
  };
}

/** Reads the execution of `choice` from the query episode's step result (E_INTERNAL when it is not there). */
export function outcomeOf(chain: Chain, choice: number, r: StepResult): ExecutionOutcome {
  const executed = r.evaluator['executed'];
  const success = r.evaluator['success'];
  if (!r.done || typeof executed !== 'boolean' || typeof success !== 'boolean' || r.evaluator['decision'] !== choice) {
    throw new ImepError(
      'E_INTERNAL',
      `executor: chain ${chain.id}: the query episode did not report the execution of choice ${choice}`,
    );
  }
  return { executed, success };
}

export class LiteChainExecutor implements ChainExecutor {
  private readonly envs = new Map<number, ChainDrawersLite>();

  constructor(private readonly executionSuccess: number) {}

  static forManifest(manifest: ChainManifest): LiteChainExecutor {
    return new LiteChainExecutor(manifest.env.executionSuccess);
  }

  identity(): ExecutorIdentity {
    return { kind: 'lite', env: 'ChainDrawers-lite', executionSuccess: this.executionSuccess };
  }

  executeChoice(chain: Chain, choice: number, run: ExecutionRun): ExecutionOutcome {
    let env = this.envs.get(chain.K);
    if (env === undefined) {
      env = new ChainDrawersLite({ K: chain.K, executionSuccess: this.executionSuccess });
      this.envs.set(chain.K, env);
    }
    env.resetSync({ seed: chain.sceneSeed, options: queryOptions(chain, run) });
    return outcomeOf(chain, choice, env.stepSync(Float32Array.of(choice)));
  }
}

export class SimEnvironmentChainExecutor implements ChainExecutor {
  private readonly envs = new Map<number, SimEnvironment>();

  constructor(private readonly factory: (K: number) => SimEnvironment) {}

  async executeChoice(chain: Chain, choice: number, run: ExecutionRun): Promise<ExecutionOutcome> {
    let env = this.envs.get(chain.K);
    if (env === undefined) {
      env = this.factory(chain.K);
      this.envs.set(chain.K, env);
    }
    await env.reset({ seed: chain.sceneSeed, options: queryOptions(chain, run) });
    const r = await env.step({ dtype: 'float32', shape: [1], data: Float32Array.of(choice) });
    return outcomeOf(chain, choice, r);
  }

  async close(): Promise<void> {
    for (const env of this.envs.values()) await env.close();
    this.envs.clear();
  }
}
