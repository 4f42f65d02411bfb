/**
 * Checks a graph's declared contract (model.json) against the signature its backend REPORTS for the loaded
 * graph (ONNX Runtime session inputNames/outputNames and input/output metadata; TF.js model inputs/outputs).
 * The first disagreement is refused with one line naming model.json, the field, and the graph file.
 *
 * Rules: the declared and the real tensor names are the same sets (inputs and outputs); each dtype is equal;
 * each shape has the same rank, a declared number equals the real dimension, and the declared "batch" axis is a
 * dynamic dimension in the graph (a symbolic name, −1, or unknown). A graph whose shapes the backend does not
 * report (shape null) is checked on names and dtypes only.
 */
import { ImepError } from '../core/index.js';
import type { GraphSignature, ValueInfo } from './backend.js';
import { BATCH_AXIS, type GraphContract, type GraphName, type TensorContract } from './manifest.js';

function isDynamic(d: number | string): boolean {
  return typeof d === 'string' || d < 0;
}

const fmt = (s: readonly (number | string)[] | null): string =>
  s === null ? '(unknown)' : `[${s.map((d) => (typeof d === 'string' ? JSON.stringify(d) : String(d))).join(', ')}]`;

export function verifyGraphContract(
  graph: GraphName,
  contract: GraphContract,
  signature: GraphSignature,
  manifestFile: string,
  graphFile: string,
): void {
  const fail = (field: string, message: string, hint?: string): never => {
    throw new ImepError('E_CHECKPOINT_MISMATCH', `${message} (in ${graphFile})`, {
      file: manifestFile,
      field,
      hint: hint ?? 'model.json must describe the graph file it ships; re-export or fix the contract',
    });
  };
  const check = (kind: 'inputs' | 'outputs', declared: readonly TensorContract[], real: readonly ValueInfo[]): void => {
    const realNames = real.map((r) => r.name);
    declared.forEach((t, i) => {
      const where = `graphs.${graph}.${kind}[${i}]`;
      const r = real.find((x) => x.name === t.name);
      if (r === undefined) {
        fail(
          `${where}.name`,
          `declares ${kind === 'inputs' ? 'input' : 'output'} ${JSON.stringify(t.name)}, but the graph's ${kind} are ${realNames.map((n) => JSON.stringify(n)).join(', ') || '(none)'}`,
        );
        return;
      }
      if (r.dtype !== t.dtype)
        fail(`${where}.dtype`, `declares ${t.name} as ${t.dtype}, but the graph's ${t.name} is ${r.dtype}`);
      if (r.shape === null) return;
      if (r.shape.length !== t.shape.length)
        fail(`${where}.shape`, `declares ${t.name} with shape ${fmt(t.shape)}, but the graph's is ${fmt(r.shape)}`);
      t.shape.forEach((d, j) => {
        const rd = r.shape?.[j] as number | string;
        const ok = d === BATCH_AXIS ? isDynamic(rd) : rd === d;
        if (!ok)
          fail(
            `${where}.shape`,
            `declares ${t.name} with shape ${fmt(t.shape)}, but the graph's is ${fmt(r.shape)} (dimension ${j})`,
          );
      });
    });
    for (const r of real) {
      if (!declared.some((t) => t.name === r.name)) {
        fail(
          `graphs.${graph}.${kind}`,
          `the graph has ${kind === 'inputs' ? 'input' : 'output'} ${JSON.stringify(r.name)} (${r.dtype}${fmt(r.shape)}), which the contract does not declare`,
        );
      }
    }
  };
  check('inputs', contract.inputs, signature.inputs);
  check('outputs', contract.outputs, signature.outputs);
}
