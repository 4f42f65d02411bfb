/**
 * A checkpoint folder with the I/O of the learned memory policies' shared contract (issue #33: encode(observation
 * fields) → query_key [batch, 8], write_candidate [batch, 8], encoding [batch, 32]; act(encoding, observation fields,
 * memory [batch, 4, 8], memory_mask [batch, 4]) → action [batch, A], decision_logits [batch, C]; an episode bank
 * `perceptual`, k 4), its graphs built by onnx-graph.ts (zero weights: only the I/O matters) and model.json written
 * with every file's SHA-256 — for tests that need a checkpoint of a given I/O without training one.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onnxModel, type GraphTensor } from './onnx-graph.js';

export interface ContractObservation {
  readonly name: string;
  /** The observation field it reads (default: its name). */
  readonly field?: string;
  readonly dtype: string;
  readonly shape: readonly (number | string)[];
}

export interface ContractCheckpoint {
  readonly name: string;
  /** model.json task.env (informative). */
  readonly env: string;
  /** encode's observation inputs; the first must be float32 [batch, m] (every encode output is computed from it). */
  readonly encode: readonly ContractObservation[];
  /** act's observation inputs (beside encoding, memory and memory_mask). */
  readonly act: readonly ContractObservation[];
  /** action [batch, …action]. */
  readonly action: readonly number[];
  readonly decisions: number;
  readonly capacity?: number;
}

const sha = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex');
const tensor = (t: { name: string; dtype: string; shape: readonly (number | string)[] }): GraphTensor => ({
  name: t.name,
  dtype: t.dtype,
  shape: t.shape,
});

/** The model.json object of `c` (files filled in by writeContractCheckpoint). */
export function contractManifest(c: ContractCheckpoint): Record<string, unknown> {
  const obs = (list: readonly ContractObservation[]) =>
    list.map((o) => ({
      name: o.name,
      dtype: o.dtype,
      shape: [...o.shape],
      role: 'observation',
      field: o.field ?? o.name,
    }));
  const f32 = (name: string, shape: (number | string)[], role: string) => ({ name, dtype: 'float32', shape, role });
  return {
    format: 'imep-checkpoint',
    version: 1,
    name: c.name,
    description: `test checkpoint with the issue #33 contract for ${c.env} (zero weights)`,
    backend: 'onnx',
    task: { env: c.env, kwargs: {} },
    graphs: {
      encode: {
        file: 'encode.onnx',
        inputs: obs(c.encode),
        outputs: [
          f32('query_key', ['batch', 8], 'queryKey'),
          f32('write_candidate', ['batch', 8], 'writeCandidate'),
          f32('encoding', ['batch', 32], 'carry'),
        ],
      },
      act: {
        file: 'act.onnx',
        inputs: [
          f32('encoding', ['batch', 32], 'carry'),
          ...obs(c.act),
          f32('memory', ['batch', 4, 8], 'memory'),
          f32('memory_mask', ['batch', 4], 'memoryMask'),
        ],
        outputs: [
          f32('action', ['batch', ...c.action], 'action'),
          f32('decision_logits', ['batch', c.decisions], 'decisionLogits'),
        ],
      },
    },
    bank: {
      kind: 'episode',
      name: 'perceptual',
      capacity: c.capacity ?? 32,
      k: 4,
      consolidation: 'token-merge',
      leaf: 'feature',
      order: 'read-before-write',
    },
    files: {},
  };
}

/** Writes checkpoint `c` into `dir` (model.json, encode.onnx, act.onnx); returns model.json's SHA-256. */
export function writeContractCheckpoint(dir: string, c: ContractCheckpoint): string {
  mkdirSync(dir, { recursive: true });
  const m = contractManifest(c) as { graphs: Record<string, { inputs: GraphTensor[]; outputs: GraphTensor[] }> } & {
    files: Record<string, { sha256: string; bytes: number }>;
  };
  const first = c.encode[0];
  if (first === undefined) throw new Error('contract-checkpoint: encode needs an observation input');
  const sources = { encode: first.name, act: 'encoding' } as const;
  for (const g of ['encode', 'act'] as const) {
    const graph = m.graphs[g] as { inputs: GraphTensor[]; outputs: GraphTensor[] };
    const bytes = onnxModel({
      inputs: graph.inputs.map(tensor),
      outputs: graph.outputs.map(tensor),
      source: sources[g],
    });
    writeFileSync(join(dir, `${g}.onnx`), bytes);
    m.files[`${g}.onnx`] = { sha256: sha(bytes), bytes: bytes.length };
  }
  const text = `${JSON.stringify(m, null, 2)}\n`;
  writeFileSync(join(dir, 'model.json'), text);
  return sha(text);
}

/** The shared contract's MIKASA-Robo RememberColor checkpoint I/O (state observations), for `cubes` rows. */
export function mikasaContract(name: string, env: string, cubes: number): ContractCheckpoint {
  const obs: ContractObservation[] = [
    { name: 'joints', dtype: 'float32', shape: ['batch', 25] },
    { name: 'cubes', dtype: 'float32', shape: ['batch', cubes, 4] },
  ];
  return { name, env, encode: obs, act: obs, action: [4], decisions: cubes };
}

/** The shared contract's LIBERO drawer-cue checkpoint I/O (cue: a scalar field, read as float32 [batch]). */
export function liberoContract(name: string): ContractCheckpoint {
  const state: ContractObservation = { name: 'state', dtype: 'float32', shape: ['batch', 8] };
  const handle: ContractObservation = { name: 'handle', dtype: 'float32', shape: ['batch', 3] };
  return {
    name,
    env: 'libero-mem/top-drawer-cue',
    encode: [state, handle, { name: 'cue', dtype: 'float32', shape: ['batch'] }],
    act: [state, handle],
    action: [7],
    decisions: 2,
    capacity: 224,
  };
}
