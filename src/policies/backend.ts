/**
 * What the policy runtime needs from an inference backend (ONNX Runtime, TF.js): a loaded graph that reports its
 * REAL input/output signature and runs named host tensors to named host tensors.
 */
import type { TensorDtype } from './manifest.js';

export type HostData =
  Float32Array | Float64Array | Uint8Array | Int8Array | Int32Array | BigInt64Array | Uint16Array | string[];

/** A tensor on the host: dtype, shape (batch first) and row-major data. */
export interface HostTensor {
  readonly dtype: TensorDtype;
  readonly shape: readonly number[];
  readonly data: HostData;
}

/** One input or output as the backend reports it: dims are numbers or symbolic names (dynamic axes). */
export interface ValueInfo {
  readonly name: string;
  /** The backend's dtype word (ONNX Runtime and TF.js both use 'float32', 'uint8', 'int32', …). */
  readonly dtype: string;
  /** Null when the backend does not know the shape. */
  readonly shape: readonly (number | string)[] | null;
}

export interface GraphSignature {
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
}

export interface GraphRunner {
  /** The graph file, for error messages. */
  readonly file: string;
  readonly signature: GraphSignature;
  /** Runs the graph; returns every output by name. */
  run(feeds: Readonly<Record<string, HostTensor>>): Promise<Record<string, HostTensor>>;
  /**
   * Wall time inside the inference runtime's own run call, nanoseconds summed over runs (ONNX Runtime: session.run,
   * its JS wrapper and native run); what the runner does around it (feed tensors, output copies) is not included.
   * Undefined when the backend does not measure it.
   */
  readonly runtimeNs?: number;
  release(): Promise<void>;
}

/** Which backend ran and how, recorded with every result. */
export interface BackendReport {
  readonly backend: 'onnx' | 'tfjs';
  /** Execution provider (ONNX: 'cuda' | 'cpu') or TF.js package and backend ('tfjs-node-gpu/tensorflow', 'tfjs/cpu'). */
  readonly ran: string;
  readonly requested: readonly string[];
  readonly required: string | null;
  /** Human-readable notes: fallbacks, why a provider was skipped. */
  readonly notes: readonly string[];
  /** process.env.CUDA_VISIBLE_DEVICES at load time (null when unset). */
  readonly cudaVisibleDevices: string | null;
  readonly versions: Readonly<Record<string, string>>;
}

export function elementCountOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}
