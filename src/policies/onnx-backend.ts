/**
 * ONNX Runtime backend (onnxruntime-node). Sessions are created from the bytes whose SHA-256 was just verified
 * (never re-read from disk), with the execution provider chosen by providers.ts: `cuda` then `cpu` by default,
 * falling back with a recorded note, or failing when the configuration requires a provider that cannot run.
 */
import ort from 'onnxruntime-node';
import { ImepError } from '../core/errors.js';
import type { BackendReport, GraphRunner, GraphSignature, HostData, HostTensor, ValueInfo } from './backend.js';
import type { TensorDtype } from './manifest.js';
import { sameShape } from '../core/tensor.js';
import { onnxRuntimeProbe, selectProvider, type ExecutionProvider, type ProviderConfig, type ProviderProbe } from './providers.js';

export interface OnnxOptions extends ProviderConfig {
  /** Threads inside one operator (default 1: lite graphs are tiny, and one thread keeps results order-fixed). */
  readonly intraOpThreads?: number;
  /** CUDA device id (default 0). */
  readonly deviceId?: number;
  /** Availability probe (tests inject one; default: the installed onnxruntime-node). */
  readonly probe?: ProviderProbe;
  /** Session factory (tests inject one to simulate a provider that fails at creation). */
  readonly createSession?: (bytes: Uint8Array, options: ort.InferenceSession.SessionOptions) => Promise<ort.InferenceSession>;
}

export interface OnnxGraphBytes {
  /** Path shown in errors. */
  readonly file: string;
  readonly bytes: Uint8Array;
}

type OrtData = Exclude<HostData, string[]> | string[];

/** One input's ort.Tensor from the last run, reused while the caller feeds the same buffer with the same shape. */
interface FeedCache {
  readonly data: HostData;
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly tensor: ort.Tensor;
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
  /**
   * Callers that reuse an input buffer across runs (the memory policy does, per batch size) get the same
   * ort.Tensor back: it only references the buffer, whose current contents the binding reads at run time.
   */
  private readonly feedCache = new Map<string, FeedCache>();
  private sessionNs = 0n;
  constructor(readonly file: string, private readonly session: ort.InferenceSession) {
    const info = (m: ort.InferenceSession.ValueMetadata): ValueInfo =>
      m.isTensor ? { name: m.name, dtype: m.type, shape: [...m.shape] } : { name: m.name, dtype: 'non-tensor', shape: null };
    this.signature = {
      inputs: session.inputMetadata.map(info),
      outputs: session.outputMetadata.map(info),
    };
  }

  async run(feeds: Readonly<Record<string, HostTensor>>): Promise<Record<string, HostTensor>> {
    const ortFeeds: Record<string, ort.Tensor> = {};
    for (const name in feeds) {
      const t = feeds[name] as HostTensor;
      const hit = this.feedCache.get(name);
      if (hit !== undefined && hit.data === t.data && hit.dtype === t.dtype && sameShape(hit.shape, t.shape)) {
        ortFeeds[name] = hit.tensor;
        continue;
      }
      const shape = [...t.shape];
      const tensor = new ort.Tensor(t.dtype as ort.Tensor.Type, t.data as OrtData as ort.Tensor.DataType, shape);
      ortFeeds[name] = tensor;
      this.feedCache.set(name, { data: t.data, dtype: t.dtype, shape, tensor });
    }
    let results: ort.InferenceSession.ReturnType;
    const t0 = process.hrtime.bigint();
    try {
      results = await this.session.run(ortFeeds);
    } catch (e) {
      throw new ImepError('E_CHECKPOINT_MISMATCH', `running ${this.file} failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, { file: this.file, cause: e });
    }
    this.sessionNs += process.hrtime.bigint() - t0;
    const out: Record<string, HostTensor> = {};
    for (const name in results) {
      const t = results[name] as ort.Tensor;
      const data = t.data;
      out[name] = { dtype: t.type as TensorDtype, shape: t.dims.map(Number), data: ownedOrCopy(data as OrtData) };
      t.dispose();
    }
    return out;
  }

  get runtimeNs(): number {
    return Number(this.sessionNs);
  }

  async release(): Promise<void> {
    this.feedCache.clear();
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
  if (!Number.isInteger(intra) || intra < 1) throw new ImepError('E_USAGE', `intraOpThreads must be a positive integer, got ${intra}`, { field: 'runtime.intraOpThreads' });
  const sessionOptions = (provider: ExecutionProvider): ort.InferenceSession.SessionOptions => ({
    executionProviders: provider === 'cuda' ? [{ name: 'cuda', deviceId: options.deviceId ?? 0 }] : ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: intra,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const choice = await selectProvider(options, probe, async (provider) => {
    const made: OnnxGraph[] = [];
    try {
      for (const g of graphs) made.push(new OnnxGraph(g.file, await create(g.bytes, sessionOptions(provider))));
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
