/**
 * The policy contract (after openpi's client runtime): a policy is `reset(episode)` + `infer(obs)`, nothing else.
 * The episode loop depends only on this interface; runtimes (ONNX, TF.js), wrappers (recording, slot views of a
 * batched runtime) and, later, remote policies all implement it instead of adding flags to the loop.
 *
 * `BatchPolicy` is the same contract for several episodes stepping in lockstep: one `inferBatch` call carries
 * one observation per active slot, and each slot's results are what a batch-of-one call would give
 * (see src/policies/README.md for how exactly). A policy that lends the rows of its next input (frames drawn in
 * place) says so with a capability interface of its own (capabilities.ts, LendsInputRows).
 */
import type { ReadContext, ReadHook, RecordIdentity } from '../banks/index.js';
import type { NdArray, StepResult } from './environment.js';

/** What a policy sees at one step: the method-visible fields of a StepResult (never evaluator fields). */
export type Observation = StepResult['obs'];

/** What a policy is told at the start of an episode. `episode` becomes the bank's scope and episode id. */
export interface EpisodeInfo {
  /** Unique id of the episode (bank scope). */
  readonly episode: string;
  readonly task?: string;
  readonly seed?: number;
  readonly attempt?: number;
}

/** One bank read made while answering a step: its context and the identities the reader finally got. */
export interface ReadReadout {
  readonly ctx: ReadContext;
  /** Identities of the items fed to the network, in memory-slot order (after the read hook). */
  readonly identities: readonly RecordIdentity[];
}

/** Side outputs of a step, for decision readouts, traces and coverage. */
export interface PolicyReadouts {
  /** Logits of the task's discrete choice, when the checkpoint declares a decisionLogits output. */
  readonly decisionLogits?: Float32Array;
  /** Every bank read of the step, in order. */
  readonly reads?: readonly ReadReadout[];
}

export interface PolicyOutput {
  /** float32 action, shape from the checkpoint contract ([A], or [H, A] for an action chunk). */
  readonly action: NdArray;
  readonly readouts: PolicyReadouts;
}

export interface Policy {
  /** Starts an episode: clears episode-local state (the bank included). */
  reset(info: EpisodeInfo): Promise<void>;
  /** The action for the observation at the next step of the current episode. */
  infer(obs: Observation): Promise<PolicyOutput>;
}

/** One slot's observation in a lockstep batch. */
export interface SlotObservation {
  readonly slot: number;
  readonly obs: Observation;
}

/** A policy that steps up to `maxBatch` episodes (slots) in lockstep. */
export interface BatchPolicy {
  readonly maxBatch: number;
  resetSlot(slot: number, info: EpisodeInfo): Promise<void>;
  /** One output per request, in request order; slots must be distinct and reset. */
  inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]>;
}

/** A policy whose memory reads can be intercepted (the intervention hook is set on its bank(s)). */
export interface MemoryReadable {
  setReadHook(hook: ReadHook): void;
}

/** A batch-of-one view of slot `slot` of a BatchPolicy. */
export function slotPolicy(batch: BatchPolicy, slot = 0): Policy {
  if (!Number.isInteger(slot) || slot < 0 || slot >= batch.maxBatch) {
    throw new RangeError(`slotPolicy: slot ${slot} outside [0, ${batch.maxBatch})`);
  }
  return {
    reset: (info) => batch.resetSlot(slot, info),
    infer: async (obs) => {
      const [out] = await batch.inferBatch([{ slot, obs }]);
      if (out === undefined) throw new Error('slotPolicy: inferBatch returned no output');
      return out;
    },
  };
}
