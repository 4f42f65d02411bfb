/**
 * The one contract between the episode loop and a simulator (after openpi's client runtime):
 * reset / step / observation / completion. Lite simulators implement it in-process; the bridge
 * client implements it over ZeroMQ; wrappers (recording, allowlist filtering) implement it too.
 * Fast paths (a synchronous step, frame buffers given back or drawn into the caller's memory) are not part of it:
 * they are capability interfaces of their own (capabilities.ts).
 */

import type { EnvConventions } from '../core/index.js';

/** A value a simulator observation may carry. */
export type ObsValue =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array
  | number
  | string
  | boolean
  | null
  | readonly ObsValue[]
  | { readonly [k: string]: ObsValue };

/** An array with its dtype and shape (what the bridge decodes an ndarray into). */
export interface NdArray {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly data: Exclude<
    ObsValue,
    number | string | boolean | null | readonly ObsValue[] | { readonly [k: string]: ObsValue }
  >;
}

/** An observation value that is an NdArray: dtype, shape and a typed-array view as its data. */
export function isNdArray(v: ObsValue | NdArray | undefined): v is NdArray {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    'dtype' in v &&
    'shape' in v &&
    'data' in v &&
    ArrayBuffer.isView((v as NdArray).data)
  );
}

export interface FieldSpec {
  readonly shape: readonly number[];
  readonly dtype: string;
}

/**
 * What a task is about (sim-bridge/PROTOCOL.md, "Facts"): the EVALUATOR-ONLY field whose value is the task's
 * fact (the cup that hides the ball, the colour to remember) and the values it can take. S/T donor swaps pair
 * units by it; a policy never sees it.
 */
export interface FactSpec {
  readonly field: string;
  readonly domain: readonly (number | string)[];
}

export interface EnvSpec {
  readonly id: string;
  readonly maxSteps: number;
  readonly action: {
    readonly shape: readonly number[];
    readonly dtype: string;
    readonly low?: number;
    readonly high?: number;
  };
  readonly observation: Readonly<Record<string, FieldSpec>>;
  /** Fields a policy may see. */
  readonly methodVisible: readonly string[];
  /** Fields only the evaluator may see (reward, success, seed, oracle info…). */
  readonly evaluatorOnly: readonly string[];
  readonly instruction?: string;
  /** The task's fact; absent where the task declares none (then S/T donor swaps are refused on it). */
  readonly fact?: FactSpec;
  /** Memory reads at an elapsed step ≥ this are decision queries (absent: 0, every read is one). */
  readonly decisionFromStep?: number;
  /**
   * The reset seeds the environment takes, as inclusive ranges (absent: every seed a protocol can register,
   * 0 … 2^32 − 1). A campaign whose seeds fall outside is refused before anything is written.
   */
  readonly seeds?: readonly { readonly start: number; readonly end: number }[];
  /**
   * What the action vector means, component by component in order, and what the observation gives (vla-eval's DimSpec
   * vocabulary, src/core/conventions-schema.ts); the convention preflight (src/campaign/convention-check.ts) checks a
   * policy against it before any row. Absent: only the action shape is checked.
   */
  readonly conventions?: EnvConventions;
}

export interface StepResult {
  /** Method-visible fields only. */
  readonly obs: Readonly<Record<string, ObsValue | NdArray>>;
  /** Evaluator-only fields. */
  readonly evaluator: Readonly<Record<string, ObsValue | NdArray>>;
  readonly done: boolean;
  /** Elapsed steps in the episode after this result (0 after reset). */
  readonly step: number;
  /** SHA-256 of the first RGB frame (reset only). */
  readonly firstFrameHash?: string;
}

export interface ResetRequest {
  readonly seed: number;
  readonly options?: Readonly<Record<string, unknown>>;
  readonly initStateId?: number;
}

export interface SimEnvironment {
  readonly spec: EnvSpec;
  reset(request: ResetRequest): Promise<StepResult>;
  step(action: NdArray): Promise<StepResult>;
  close(): Promise<void>;
}
