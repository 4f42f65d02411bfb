/**
 * TF.js backend behind the same GraphRunner interface as ONNX Runtime.
 *
 * Package: `@tensorflow/tfjs-node-gpu` when the user has installed it (dynamic import; it brings CUDA TensorFlow),
 * else the pure-JavaScript `@tensorflow/tfjs` (a dependency of IMEP; CPU backend). Which one ran is recorded. A
 * configuration that requires CUDA fails with one line when tfjs-node-gpu cannot be imported.
 *
 * Graph files are TF.js layers models: `<graph>.tfjs.json` (the TF.js model.json format: modelTopology +
 * weightsManifest) whose weight files sit next to it; every file is listed, with its SHA-256, in the checkpoint's
 * model.json and is read through the checkpoint's verified reader. TF.js tensors are float32/int32/bool, so a
 * TF.js contract declares e.g. rgb as float32 (the runtime converts the uint8 observation).
 */
import type * as TfModule from '@tensorflow/tfjs';
import { ImepError } from '../core/index.js';
import type { BackendReport, GraphRunner, GraphSignature, HostData, HostTensor, ValueInfo } from './backend.js';
import type { TensorDtype } from './manifest.js';
import type { ExecutionProvider } from './providers.js';

export type Tf = typeof TfModule;
export type TfjsPackage = '@tensorflow/tfjs-node-gpu' | '@tensorflow/tfjs';

export interface TfjsOptions {
  /** 'cuda' fails unless tfjs-node-gpu loads; otherwise the pure-JS package is an acceptable fallback. */
  readonly require?: ExecutionProvider | null;
  /** Module importer (tests inject one to simulate an installed or missing tfjs-node-gpu). */
  readonly importer?: (specifier: TfjsPackage) => Promise<unknown>;
}

export interface LoadedTf {
  readonly tf: Tf;
  readonly pkg: TfjsPackage;
  readonly notes: readonly string[];
}

const defaultImporter = (specifier: TfjsPackage): Promise<unknown> => import(specifier);

/** Imports tfjs-node-gpu when available, else @tensorflow/tfjs. */
export async function loadTf(options: TfjsOptions = {}): Promise<LoadedTf> {
  const importer = options.importer ?? defaultImporter;
  const notes: string[] = [];
  try {
    const tf = (await importer('@tensorflow/tfjs-node-gpu')) as Tf;
    return { tf, pkg: '@tensorflow/tfjs-node-gpu', notes: ['@tensorflow/tfjs-node-gpu loaded'] };
  } catch (e) {
    const reason = e instanceof Error ? e.message.split('\n')[0] : String(e);
    if (options.require === 'cuda') {
      throw new ImepError('E_USAGE', `CUDA is required but @tensorflow/tfjs-node-gpu cannot be imported: ${reason}`, {
        field: 'runtime.require',
        hint: 'npm install @tensorflow/tfjs-node-gpu, or drop runtime.require to run TF.js on the CPU',
      });
    }
    notes.push(`@tensorflow/tfjs-node-gpu not available (${reason}); using @tensorflow/tfjs`);
  }
  const tf = (await importer('@tensorflow/tfjs')) as Tf;
  return { tf, pkg: '@tensorflow/tfjs', notes };
}

interface TfjsModelJson {
  readonly modelTopology: unknown;
  readonly weightsManifest: readonly {
    readonly paths: readonly string[];
    readonly weights: readonly TfModule.io.WeightsManifestEntry[];
  }[];
  readonly format?: string;
}

class TfjsGraph implements GraphRunner {
  readonly signature: GraphSignature;
  constructor(
    readonly file: string,
    private readonly tf: Tf,
    private readonly model: TfModule.LayersModel,
  ) {
    const info = (name: string, t: TfModule.SymbolicTensor): ValueInfo => ({
      name,
      dtype: t.dtype,
      shape: t.shape.map((d) => (d === null ? '?' : d)),
    });
    this.signature = {
      inputs: model.inputs.map((t, i) => info(model.inputNames[i] ?? `input${i}`, t)),
      outputs: model.outputs.map((t, i) => info(model.outputNames[i] ?? `output${i}`, t)),
    };
  }

  async run(feeds: Readonly<Record<string, HostTensor>>): Promise<Record<string, HostTensor>> {
    const tf = this.tf;
    const inputs = this.signature.inputs.map((s) => {
      const t = feeds[s.name];
      if (t === undefined) throw new ImepError('E_INTERNAL', `${this.file}: no feed for input ${s.name}`);
      return tf.tensor(
        t.data as Float32Array | Int32Array | Uint8Array,
        [...t.shape],
        t.dtype as 'float32' | 'int32' | 'bool',
      );
    });
    const result = this.model.predict(inputs.length === 1 ? (inputs[0] as TfModule.Tensor) : inputs);
    const list = Array.isArray(result) ? result : [result];
    const out: Record<string, HostTensor> = {};
    try {
      for (let i = 0; i < list.length; i++) {
        const t = list[i] as TfModule.Tensor;
        const name = this.signature.outputs[i]?.name ?? `output${i}`;
        const data = (await t.data()) as HostData;
        out[name] = { dtype: t.dtype as TensorDtype, shape: [...t.shape], data: (data as Float32Array).slice() };
      }
    } finally {
      tf.dispose([...inputs, ...list]);
    }
    return out;
  }

  async release(): Promise<void> {
    this.model.dispose();
  }
}

/** Loads a TF.js layers model from a verified `<graph>.tfjs.json` and its weight files. */
export async function loadTfjsGraph(
  loaded: LoadedTf,
  file: string,
  jsonBytes: Uint8Array,
  readWeights: (name: string) => Uint8Array,
): Promise<GraphRunner> {
  let parsed: TfjsModelJson;
  try {
    parsed = JSON.parse(new TextDecoder().decode(jsonBytes)) as TfjsModelJson;
  } catch (e) {
    throw new ImepError('E_CHECKPOINT_MISMATCH', `${file} is not JSON: ${String(e)}`, { file });
  }
  if (parsed.modelTopology === undefined || !Array.isArray(parsed.weightsManifest)) {
    throw new ImepError('E_CHECKPOINT_MISMATCH', 'not a TF.js layers model (modelTopology / weightsManifest missing)', {
      file,
      field: 'modelTopology',
    });
  }
  const specs: TfModule.io.WeightsManifestEntry[] = [];
  const chunks: Uint8Array[] = [];
  for (const group of parsed.weightsManifest) {
    for (const p of group.paths) chunks.push(readWeights(p));
    specs.push(...group.weights);
  }
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const weightData = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    weightData.set(c, off);
    off += c.length;
  }
  const tf = loaded.tf;
  let model: TfModule.LayersModel;
  try {
    model = await tf.loadLayersModel(
      tf.io.fromMemory({
        modelTopology: parsed.modelTopology as object,
        weightSpecs: specs,
        weightData: weightData.buffer,
      }),
    );
  } catch (e) {
    throw new ImepError(
      'E_CHECKPOINT_MISMATCH',
      `TF.js cannot load ${file}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
      { file, cause: e },
    );
  }
  return new TfjsGraph(file, tf, model);
}

export function tfjsReport(loaded: LoadedTf, required: ExecutionProvider | null): BackendReport {
  return {
    backend: 'tfjs',
    ran: `${loaded.pkg}/${loaded.tf.getBackend()}`,
    requested: ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs'],
    required,
    notes: loaded.notes,
    cudaVisibleDevices: process.env['CUDA_VISIBLE_DEVICES'] ?? null,
    versions: { tfjs: String(loaded.tf.version?.['tfjs'] ?? loaded.tf.version_core ?? 'unknown') },
  };
}

/**
 * Saves a TF.js layers model as `<stem>.tfjs.json` + `<stem>.weights.bin` (the files a tfjs checkpoint ships);
 * returns the two files' names and bytes. Works with the pure-JS package (no file:// handler needed).
 */
export async function serializeTfjsModel(
  tf: Tf,
  model: TfModule.LayersModel,
  stem: string,
): Promise<Record<string, Uint8Array>> {
  let files: Record<string, Uint8Array> | undefined;
  await model.save(
    tf.io.withSaveHandler(async (artifacts) => {
      const weightsName = `${stem}.weights.bin`;
      const data = artifacts.weightData;
      const bytes =
        data === undefined
          ? new Uint8Array(0)
          : Array.isArray(data)
            ? concat(data.map((b) => new Uint8Array(b)))
            : new Uint8Array(data as ArrayBuffer);
      const json = {
        format: 'layers-model',
        generatedBy: artifacts.generatedBy,
        convertedBy: artifacts.convertedBy ?? null,
        modelTopology: artifacts.modelTopology,
        weightsManifest: [{ paths: [weightsName], weights: artifacts.weightSpecs ?? [] }],
      };
      files = { [`${stem}.tfjs.json`]: new TextEncoder().encode(`${JSON.stringify(json)}\n`), [weightsName]: bytes };
      return { modelArtifactsInfo: { dateSaved: new Date(0), modelTopologyType: 'JSON' } };
    }),
  );
  if (files === undefined) throw new ImepError('E_INTERNAL', 'TF.js save handler was not called');
  return files;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
