/** A graph run's output, checked against its contract (float32, the declared shape) and the batch size. */
import { ImepError } from '../core/index.js';
import type { HostTensor } from './backend.js';
import type { GraphName } from './manifest.js';

/** Output `c.name` of a run of `graph` over a batch of B; an error naming the manifest `file` where it is off-contract. */
export function checkedOutput(
  out: Record<string, HostTensor>,
  c: { name: string; shape: readonly (number | string)[] },
  graph: GraphName,
  B: number,
  file: string,
): HostTensor {
  const t = out[c.name];
  if (t === undefined)
    throw new ImepError('E_CHECKPOINT_MISMATCH', `the ${graph} graph returned no ${c.name}`, {
      file,
      field: `graphs.${graph}.outputs`,
    });
  let ok = t.shape.length === c.shape.length && t.shape[0] === B;
  for (let j = 1; ok && j < c.shape.length; j++) ok = c.shape[j] === t.shape[j];
  if (!ok || !(t.data instanceof Float32Array)) {
    throw new ImepError(
      'E_CHECKPOINT_MISMATCH',
      `the ${graph} graph returned ${c.name} as ${t.dtype}[${t.shape.join(', ')}] for a batch of ${B}, contract says float32[${c.shape.join(', ')}]`,
      { file, field: `graphs.${graph}.outputs` },
    );
  }
  return t;
}
