/**
 * The replay executor over the bridge: a `BridgeClient` to a bridge server (src/bridges, protocol in
 * sim-bridge/PROTOCOL.md) hosting an environment that executes a chain's committed choice — reset with
 * the chain's scene seed and query options (role, object, hidden drawer, executor seed), then ONE step
 * whose action commits the choice (float32 [choice], or one-hot float32 [K], as the spec declares); the step reports `decision`, `executed` and `success` as evaluator
 * fields and ends the episode (executor.ts `outcomeOf`). `imep sim serve lite` hosts such an
 * environment, `ChainDrawers-lite`.
 *
 * `connect` says hello first and refuses (E_SIM_UNAVAILABLE, naming the endpoint and what the server
 * hosts) a server without the environment. Hosts: `imep sim serve lite` (ChainDrawers-lite), and the
 * Python sim-bridge's chain executor `LIBERO-ChainDrawers` (`python3 -m imep_sim_bridge serve --adapters
 * libero-chain`, sim-bridge/imep_sim_bridge/adapters/libero_chain.py): drawer k is carried out in LIBERO
 * by replaying LIBERO's demonstration of the task that opens drawer k, success read from LIBERO's
 * `check_success()`. The sim-bridge's episode adapters (libero/<suite>/<i>: 7-D actions for hundreds of
 * steps; replay/<stem>: one recorded action sequence per seed) are not choice executors.
 *
 * A server may report its registered motor source as the evaluator field `registry` (a string; the
 * LIBERO executor's canonical JSON: task per drawer, demo file and its SHA-256, fixed when the
 * environment is made); `motorRegistries()` returns the one each K's environment reported.
 * Environments are made lazily, one per K, and closed by `close()`, which also closes the client.
 */
import { ImepError } from '../core/index.js';
import { BridgeClient } from '../bridges/client.js';
import { RemoteEnvironment } from '../bridges/index.js';
import type { HelloReply } from '../bridges/index.js';
import type { NdArray } from '../runtime/index.js';
import type { Chain } from './manifest-schema.js';
import {
  outcomeOf,
  queryOptions,
  type ChainExecutor,
  type ExecutionOutcome,
  type ExecutionRun,
  type ExecutorIdentity,
} from './executor.js';

export const DEFAULT_BRIDGE_ENV = 'ChainDrawers-lite';
/** The LIBERO chain executor of the Python sim-bridge (adapter `libero-chain`). */
export const LIBERO_CHAIN_ENV = 'LIBERO-ChainDrawers';

const SERVE_HINT: Readonly<Record<string, string>> = {
  [DEFAULT_BRIDGE_ENV]: '`imep sim serve lite`',
  [LIBERO_CHAIN_ENV]:
    '`python3 -m imep_sim_bridge serve --adapters libero-chain` (run in sim-bridge/, LIBERO installed)',
};

export interface BridgeExecutorOptions {
  readonly endpoint: string;
  /** The environment id on the server (default ChainDrawers-lite). */
  readonly env?: string;
  /** The manifest's execution probability, passed to `make` as a kwarg. */
  readonly executionSuccess: number;
  /** Deadline of hello / each call (ms). */
  readonly deadlineMs?: number;
}

/**
 * The action that commits `choice`, in the form the remote environment's spec declares: float32 [1]
 * (the drawer index) or float32 [K] (one-hot; ChainDrawers-lite reads its argmax). The server checks
 * actions against the spec, so the form is taken from it.
 */
export function choiceAction(env: RemoteEnvironment, K: number, choice: number): NdArray {
  const a = env.spec.action;
  if (a.dtype === 'float32' && a.shape.length === 1 && a.shape[0] === 1)
    return { dtype: 'float32', shape: [1], data: Float32Array.of(choice) };
  if (a.dtype === 'float32' && a.shape.length === 1 && a.shape[0] === K) {
    const data = new Float32Array(K);
    data[choice] = 1;
    return { dtype: 'float32', shape: [K], data };
  }
  throw new ImepError(
    'E_SIM_UNAVAILABLE',
    `${env.spec.id} takes ${a.dtype} [${a.shape.join(',')}] actions, which carry no choice among ${K} drawers (float32 [1] or [${K}] needed)`,
    {
      field: '--env',
    },
  );
}

export class BridgeChainExecutor implements ChainExecutor {
  readonly #client: BridgeClient;
  readonly #hello: HelloReply;
  readonly #opts: BridgeExecutorOptions & { readonly env: string };
  readonly #envs = new Map<number, Promise<RemoteEnvironment>>();
  readonly #registries = new Map<number, string>();

  private constructor(client: BridgeClient, hello: HelloReply, opts: BridgeExecutorOptions & { readonly env: string }) {
    this.#client = client;
    this.#hello = hello;
    this.#opts = opts;
  }

  static async connect(options: BridgeExecutorOptions): Promise<BridgeChainExecutor> {
    const env = options.env ?? DEFAULT_BRIDGE_ENV;
    const client = new BridgeClient({
      endpoint: options.endpoint,
      heartbeatMs: 0,
      clientName: 'imep-chainbench',
      ...(options.deadlineMs ? { deadlineMs: options.deadlineMs } : {}),
    });
    let hello: HelloReply;
    try {
      hello = await client.connect(options.deadlineMs ? { deadlineMs: options.deadlineMs } : {});
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    }
    if (!hello.envs.includes(env)) {
      await client.close().catch(() => undefined);
      const shown =
        hello.envs.slice(0, 8).join(', ') + (hello.envs.length > 8 ? `, … (${hello.envs.length} in all)` : '');
      throw new ImepError(
        'E_SIM_UNAVAILABLE',
        `the bridge server ${hello.server.name} ${hello.server.version} (adapters ${hello.adapters.join(', ') || 'none'}) hosts no ${env}; it hosts: ${shown || 'nothing'}`,
        {
          field: '--endpoint',
          hint: `a replay executes one drawer choice per chain episode; serve ${env} with ${SERVE_HINT[env] ?? '`imep sim serve lite` (ChainDrawers-lite) or `python3 -m imep_sim_bridge serve --adapters libero-chain` (LIBERO-ChainDrawers)'} (or pass --env with an environment that takes the choice as its action)`,
        },
      );
    }
    return new BridgeChainExecutor(client, hello, { ...options, env });
  }

  identity(): ExecutorIdentity {
    const h = this.#hello;
    return {
      kind: 'bridge',
      endpoint: this.#opts.endpoint,
      env: this.#opts.env,
      executionSuccess: this.#opts.executionSuccess,
      server: { name: h.server.name, version: h.server.version, protocol: h.protocol, adapters: [...h.adapters] },
    };
  }

  #env(K: number): Promise<RemoteEnvironment> {
    let env = this.#envs.get(K);
    if (env === undefined) {
      const deadline = this.#opts.deadlineMs;
      env = RemoteEnvironment.make(
        this.#client,
        this.#opts.env,
        { K, executionSuccess: this.#opts.executionSuccess },
        deadline ? { makeMs: deadline, resetMs: deadline, stepMs: deadline, closeMs: deadline } : {},
      );
      this.#envs.set(K, env);
    }
    return env;
  }

  async executeChoice(chain: Chain, choice: number, run: ExecutionRun): Promise<ExecutionOutcome> {
    const env = await this.#env(chain.K);
    await env.reset({ seed: chain.sceneSeed, options: queryOptions(chain, run) });
    const r = await env.step(choiceAction(env, chain.K, choice));
    const outcome = outcomeOf(chain, choice, r);
    const registry = r.evaluator['registry'];
    if (typeof registry === 'string' && !this.#registries.has(chain.K)) this.#registries.set(chain.K, registry);
    return outcome;
  }

  /** The motor-source registry each K's environment reported (evaluator field `registry`), if any. */
  motorRegistries(): ReadonlyMap<number, string> {
    return new Map(this.#registries);
  }

  /** Closes every remote environment, then the client. */
  async close(): Promise<void> {
    const envs = [...this.#envs.values()];
    this.#envs.clear();
    try {
      for (const p of envs) {
        const env = await p.catch(() => undefined);
        await env?.close();
      }
    } finally {
      await this.#client.close();
    }
  }
}
