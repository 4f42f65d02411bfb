/**
 * ONNX Runtime backend (onnxruntime-node). Sessions are created from the bytes whose SHA-256 was just verified
 * (never re-read from disk), with the execution provider chosen by providers.ts: `cuda` then `cpu` by default,
 * falling back with a recorded note, or failing when the configuration requires a provider that cannot run.
 */
import ort from 'onnxruntime-node';
import { ImepError, sameShape } from '../core/index.js';
import type { BackendReport, GraphRunner, GraphSignature, HostData, HostTensor, ValueInfo } from './backend.js';
import type { TensorDtype } from './manifest.js';
import {
  onnxRuntimeProbe,
  selectProvider,
  type ExecutionProvider,
  type ProviderConfig,
  type ProviderProbe,
} from './providers.js';

export interface OnnxOptions extends ProviderConfig {
  /** Threads inside one operator (default 1: lite graphs are tiny, and one thread keeps results order-fixed). */
  readonly intraOpThreads?: number;
  /** CUDA device id (default 0). */
  readonly deviceId?: number;
  /** Availability probe (tests inject one; default: the installed onnxruntime-node). */
  readonly probe?: ProviderProbe;
  /** Session factory (tests inject one to simulate a provider that fails at creation). */
  readonly createSession?: (
    bytes: Uint8Array,
    options: ort.InferenceSession.SessionOptions,
  ) => Promise<ort.InferenceSession>;
}

export interface OnnxGraphBytes {
  /** Path shown in errors. */
  readonly file: string;
  readonly bytes: Uint8Array;
}

type OrtData = Exclude<HostData, string[]> | string[];

/**
 * The ort.Tensors made for the most recently fed or produced host arrays (a CPU ort.Tensor only references its array,
 * whose current contents the binding reads at run time): a run fed one of these arrays again, with the same dtype
 * and shape, gets the same ort.Tensor back instead of a new one. Shared by the graphs of one load, so an output of
 * one graph fed to the next (encode → act) is found too, and callers that cycle through a few buffers (recycled
 * frames, per-parity packing buffers) hit on each of them. Small rings searched by identity, not a WeakMap: a
 * WeakMap entry per short-lived output made the garbage collector's ephemeron work cost more than it saved.
 * Releasing a graph empties them, so nothing they held outlives the sessions.
 */
interface Wrapped {
  data: object | null;
  dtype: string;
  shape: readonly number[];
  tensor: ort.Tensor | null;
}

/** A ring of remembered wrappers; the oldest is overwritten. */
class WrapRing {
  private readonly slots: Wrapped[];
  private next = 0;
  constructor(size: number) {
    this.slots = Array.from({ length: size }, () => ({ data: null, dtype: '', shape: [], tensor: null }));
  }
  find(t: HostTensor): ort.Tensor | null {
    const data = t.data as object;
    for (let i = 0; i < this.slots.length; i++) {
      const w = this.slots[i] as Wrapped;
      if (w.data === data && w.dtype === t.dtype && sameShape(w.shape, t.shape)) return w.tensor;
    }
    return null;
  }
  remember(data: object, dtype: string, shape: readonly number[], tensor: ort.Tensor): void {
    const w = this.slots[this.next] as Wrapped;
    this.next = (this.next + 1) % this.slots.length;
    w.data = data;
    w.dtype = dtype;
    w.shape = shape;
    w.tensor = tensor;
  }
  clear(): void {
    for (const w of this.slots) {
      w.data = null;
      w.tensor = null;
      w.shape = [];
    }
  }
}

/** The wrappers of one load: arrays fed (packing buffers, recycled frames) and outputs produced, apart, so a run's new outputs never push a fed buffer out. */
class FeedTensors {
  private readonly fed = new WrapRing(16);
  private readonly outputs = new WrapRing(8);

  /** The ort.Tensor for a host tensor: the remembered one for its array when dtype and shape still match, else a new one. */
  tensorOf(t: HostTensor): ort.Tensor {
    const hit = this.fed.find(t) ?? this.outputs.find(t);
    if (hit !== null) return hit;
    const shape = [...t.shape];
    const tensor = new ort.Tensor(t.dtype as ort.Tensor.Type, t.data as OrtData as ort.Tensor.DataType, shape);
    this.fed.remember(t.data as object, t.dtype, shape, tensor);
    return tensor;
  }

  rememberOutput(data: object, dtype: string, shape: readonly number[], tensor: ort.Tensor): void {
    this.outputs.remember(data, dtype, shape, tensor);
  }

  clear(): void {
    this.fed.clear();
    this.outputs.clear();
  }
}

/**
 * An output's values for the caller to keep. onnxruntime-node hands each CPU output over in a fresh ArrayBuffer of
 * its own (nothing else references it once the ort.Tensor is disposed), so such an array is passed on as it is; a
 * view into a larger buffer (which the runtime might reuse) and string arrays are copied.
 */
function ownedOrCopy(data: OrtData): HostData {
  if (Array.isArray(data)) return [...(data as string[])];
  const a = data as Exclude<HostData, string[]>;
  return a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : a.slice();
}

class OnnxGraph implements GraphRunner {
  readonly signature: GraphSignature;
  /** Milliseconds inside session.run (performance.now: a double, no BigInt per call). */
  private sessionMs = 0;
  constructor(
    readonly file: string,
    private readonly session: ort.InferenceSession,
    private readonly tensors: FeedTensors,
  ) {
    const info = (m: ort.InferenceSession.ValueMetadata): ValueInfo =>
      m.isTensor
        ? { name: m.name, dtype: m.type, shape: [...m.shape] }
        : { name: m.name, dtype: 'non-tensor', shape: null };
    this.signature = {
      inputs: session.inputMetadata.map(info),
      outputs: session.outputMetadata.map(info),
    };
  }

  async run(feeds: Readonly<Record<string, HostTensor>>): Promise<Record<string, HostTensor>> {
    const ortFeeds: Record<string, ort.Tensor> = {};
    for (const name in feeds) ortFeeds[name] = this.tensors.tensorOf(feeds[name] as HostTensor);
    let results: ort.InferenceSession.ReturnType;
    const t0 = performance.now();
    try {
      results = await this.session.run(ortFeeds);
    } catch (e) {
      throw new ImepError(
        'E_CHECKPOINT_MISMATCH',
        `running ${this.file} failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
        { file: this.file, cause: e },
      );
    }
    this.sessionMs += performance.now() - t0;
    const out: Record<string, HostTensor> = {};
    for (const name in results) {
      const t = results[name] as ort.Tensor;
      const data = t.data as OrtData;
      const kept = ownedOrCopy(data);
      const shape = t.dims as readonly number[];
      const host: HostTensor = { dtype: t.type as TensorDtype, shape, data: kept } as HostTensor;
      // A CPU output whose array is passed on as it is stays wrapped by its ort.Tensor: fed to the next graph, it needs
      // no new one. (Disposing a CPU tensor only drops its references; GPU-located outputs are not produced here.)
      if (kept === data && !Array.isArray(kept)) this.tensors.rememberOutput(kept as object, host.dtype, shape, t);
      else t.dispose();
      out[name] = host;
    }
    return out;
  }

  get runtimeNs(): number {
    return Math.round(this.sessionMs * 1e6);
  }

  async release(): Promise<void> {
    this.tensors.clear();
    await this.session.release();
  }
}

export interface OnnxLoad {
  readonly graphs: readonly GraphRunner[];
  readonly report: BackendReport;
}

/** Creates one session per graph on the first provider that can run all of them. */
export async function loadOnnxGraphs(graphs: readonly OnnxGraphBytes[], options: OnnxOptions = {}): Promise<OnnxLoad> {
  const probe = options.probe ?? onnxRuntimeProbe(() => ort.listSupportedBackends());
  const create = options.createSession ?? ((bytes, so) => ort.InferenceSession.create(bytes, so));
  const intra = options.intraOpThreads ?? 1;
  if (!Number.isInteger(intra) || intra < 1)
    throw new ImepError('E_USAGE', `intraOpThreads must be a positive integer, got ${intra}`, {
      field: 'runtime.intraOpThreads',
    });
  const sessionOptions = (provider: ExecutionProvider): ort.InferenceSession.SessionOptions => ({
    executionProviders: provider === 'cuda' ? [{ name: 'cuda', deviceId: options.deviceId ?? 0 }] : ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: intra,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const choice = await selectProvider(options, probe, async (provider) => {
    const made: OnnxGraph[] = [];
    const tensors = new FeedTensors();
    try {
      for (const g of graphs)
        made.push(new OnnxGraph(g.file, await create(g.bytes, sessionOptions(provider)), tensors));
    } catch (e) {
      await Promise.all(made.map((m) => m.release()));
      throw e;
    }
    return made;
  });
  const report: BackendReport = {
    backend: 'onnx',
    ran: choice.ran,
    requested: choice.requested,
    required: choice.required,
    notes: [...choice.notes, `intraOpNumThreads=${intra}`],
    cudaVisibleDevices: choice.cudaVisibleDevices,
    versions: { 'onnxruntime-node': String(ort.env.versions.node ?? ort.env.versions.common ?? 'unknown') },
  };
  return { graphs: choice.value, report };
}
