/**
 * The protocol-facing half of a simulator kind: what the protocol needs to parse and check a `simulator:` block
 * without knowing the simulator. The full kind (src/runtime/simulator-kind.ts: preflight, open, describe) extends
 * it and is registered once; the registration lands here too (./registries.ts).
 */
import type { z } from 'zod';
import type { Kind } from './registry.js';
import type { ExecutionNoise } from '../execution-noise.js';
import type { KindBlock, ProtocolIssueSink, ProtocolView } from './protocol-view.js';

/** One task of a benchmark's task set: the plan's task name and the environment id that makes it. */
export interface BenchmarkTask {
  readonly task: string;
  readonly envId: string;
}

/**
 * A named task set a simulator declares (a benchmark's standard tasks, e.g. MIKASA-Robo's VLA standard set): what a
 * protocol's `suite.benchmark` names. The protocol expands it into its `envs` (src/protocol/suite-expand.ts).
 */
export interface BenchmarkTaskSet {
  /** One line: what the set is and where it comes from (upstream file or paper). */
  readonly description: string;
  /** The tasks in the benchmark's own order. */
  readonly tasks: readonly BenchmarkTask[];
}

export interface SimulatorFace extends Kind {
  /** The fields of its `simulator:` block besides `kind` (the protocol builds the strict object from them). */
  readonly fields: z.ZodRawShape;
  /**
   * Kwargs every protocol of this kind states for `envId` where the YAML leaves them out, filled in before the
   * protocol is hashed (so the hash binds them like any other default). Optional.
   */
  statedKwargs?(envId: string): Readonly<Record<string, unknown>>;
  /**
   * The checks that need the simulator itself (environment ids, their kwargs, the fields they show the policy),
   * run with the protocol's cross-field checks; report through `issues`. Optional.
   */
  checkProtocol?(protocol: ProtocolView, issues: ProtocolIssueSink): void;
  /**
   * The checks of the protocol's method-visible allowlist against the fields the simulator shows the policy, run
   * with the allowlist checks (after the analysis checks, so the first issue a protocol reports is unchanged).
   * Optional: a simulator that declares its fields only when its servers start checks them there.
   */
  checkMethodVisible?(protocol: ProtocolView, issues: ProtocolIssueSink): void;
  /**
   * The registered execution noise the block asks for (the plan binds it, the runner applies it, the adjudication
   * reads its scope); undefined for none. Optional: a kind without the capability has none.
   */
  executionNoise?(block: KindBlock): ExecutionNoise | undefined;
  /**
   * Whether the block's simulators run inside IMEP's process (no server: nothing isolated, nothing started before a
   * precommit). Optional: absent is false (servers).
   */
  inProcess?(block: KindBlock): boolean;
  /**
   * The named task sets (benchmarks) this block's simulator declares, by name; a protocol's `suite.benchmark`
   * names one. Optional: a kind without the capability declares none.
   */
  benchmarks?(block: KindBlock): Readonly<Record<string, BenchmarkTaskSet>>;
}
