/**
 * Loading a checkpoint folder: model.json (zod schema, manifest.ts) → every listed file's SHA-256 verified →
 * graphs loaded by the declared backend from the verified bytes → each graph's contract checked against the
 * signature the backend reports. Any failure is one ImepError line naming the file and the field:
 *   E_CHECKPOINT_MISSING   the folder, model.json or a listed file does not exist
 *   E_CHECKPOINT_MISMATCH  bad model.json, a hash or size differs, or the contract disagrees with the graph
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ImepError, sha256Hex } from '../core/index.js';
import type { BackendReport, GraphRunner } from './backend.js';
import { verifyGraphContract } from './contract.js';
import { GRAPH_NAMES, parseManifest, type CheckpointManifest, type GraphName } from './manifest.js';
import { loadOnnxGraphs, type OnnxOptions } from './onnx-backend.js';
import { loadTf, loadTfjsGraph, tfjsReport, type TfjsOptions } from './tfjs-backend.js';

export interface CheckpointOptions {
  readonly onnx?: OnnxOptions;
  readonly tfjs?: TfjsOptions;
}

export interface LoadedCheckpoint {
  readonly dir: string;
  readonly manifestFile: string;
  readonly manifest: CheckpointManifest;
  readonly graphs: Readonly<Record<GraphName, GraphRunner>>;
  readonly report: BackendReport;
  release(): Promise<void>;
}

/** Reads and verifies every file listed in the manifest; returns a reader of verified bytes. */
export function verifyFiles(
  dir: string,
  manifest: CheckpointManifest,
  manifestFile: string,
): (name: string) => Uint8Array {
  const verified = new Map<string, Uint8Array>();
  for (const [name, entry] of Object.entries(manifest.files)) {
    const path = join(dir, name);
    const field = `files[${JSON.stringify(name)}]`;
    if (!existsSync(path)) {
      throw new ImepError('E_CHECKPOINT_MISSING', `${name} is listed but missing from the checkpoint folder`, {
        file: manifestFile,
        field,
      });
    }
    const bytes = new Uint8Array(readFileSync(path));
    const digest = sha256Hex(bytes);
    if (digest !== entry.sha256) {
      throw new ImepError('E_CHECKPOINT_MISMATCH', `${name} has sha256 ${digest}, model.json says ${entry.sha256}`, {
        file: manifestFile,
        field: `${field}.sha256`,
        hint: `${path} was changed after model.json was written; restore it or rebuild the checkpoint`,
      });
    }
    if (bytes.length !== entry.bytes) {
      throw new ImepError(
        'E_CHECKPOINT_MISMATCH',
        `${name} has ${bytes.length} bytes, model.json says ${entry.bytes}`,
        { file: manifestFile, field: `${field}.bytes` },
      );
    }
    verified.set(name, bytes);
  }
  return (name) => {
    const bytes = verified.get(name);
    if (bytes === undefined) {
      throw new ImepError(
        'E_CHECKPOINT_MISMATCH',
        `${name} is needed but not listed in files (so its hash is unchecked)`,
        { file: manifestFile, field: 'files', hint: 'list every file the graphs read' },
      );
    }
    return bytes;
  };
}

/** Reads and parses model.json of a checkpoint folder. */
export function readManifest(dir: string): { manifest: CheckpointManifest; manifestFile: string } {
  const manifestFile = join(dir, 'model.json');
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ImepError('E_CHECKPOINT_MISSING', 'checkpoint folder does not exist', {
      file: dir,
      hint: 'give a folder holding model.json and the graph files',
    });
  }
  if (!existsSync(manifestFile))
    throw new ImepError('E_CHECKPOINT_MISSING', 'model.json is missing', { file: manifestFile });
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(manifestFile, 'utf8'));
  } catch (e) {
    throw new ImepError('E_CHECKPOINT_MISMATCH', `not valid JSON: ${e instanceof Error ? e.message : String(e)}`, {
      file: manifestFile,
      field: '(root)',
    });
  }
  return { manifest: parseManifest(value, manifestFile), manifestFile };
}

export async function loadCheckpoint(dirIn: string, options: CheckpointOptions = {}): Promise<LoadedCheckpoint> {
  const dir = resolve(dirIn);
  const { manifest, manifestFile } = readManifest(dir);
  const read = verifyFiles(dir, manifest, manifestFile);
  let runners: GraphRunner[];
  let report: BackendReport;
  if (manifest.backend === 'onnx') {
    const load = await loadOnnxGraphs(
      GRAPH_NAMES.map((g) => ({ file: join(dir, manifest.graphs[g].file), bytes: read(manifest.graphs[g].file) })),
      options.onnx,
    );
    runners = [...load.graphs];
    report = load.report;
  } else {
    const tf = await loadTf(options.tfjs);
    runners = [];
    for (const g of GRAPH_NAMES) {
      const file = manifest.graphs[g].file;
      runners.push(await loadTfjsGraph(tf, join(dir, file), read(file), read));
    }
    report = tfjsReport(tf, options.tfjs?.require ?? null);
  }
  const graphs = { encode: runners[0] as GraphRunner, act: runners[1] as GraphRunner };
  const release = async (): Promise<void> => {
    await Promise.all(runners.map((r) => r.release()));
  };
  try {
    for (const g of GRAPH_NAMES)
      verifyGraphContract(g, manifest.graphs[g], graphs[g].signature, manifestFile, manifest.graphs[g].file);
  } catch (e) {
    await release();
    throw e;
  }
  return { dir, manifestFile, manifest, graphs, report, release };
}
