/**
 * The planted-effect wrapper's fact reader: a nearest-centroid decoder over what a memory read returned.
 *
 * A read's items are summarised by the float64 mean of their `leaf` tensors (every item's leaf must have
 * the same length); the decoded fact is the label of the nearest centroid (squared Euclidean distance,
 * ties → the smaller label). Centroids are fitted once, before any calibration campaign, on a registered
 * fit band that no campaign uses (`fitFactDecoder`): the labels used to fit are evaluator-side, as a
 * checkpoint's training labels are; at run time the decoder sees nothing but the read's items.
 *
 * Empty input: `summariseRead` of zero items returns null and `decode(null)` returns null (no fact read).
 * Pure, no I/O.
 */
import type { RetrievedItem } from '../banks/index.js';
import { ImepError, toFloat64 } from '../core/index.js';

export interface FactDecoderSpec {
  /** The item leaf the decoder reads (the lite checkpoints' episode bank: `feature`). */
  readonly leaf: string;
  /** centroids[k] is the mean read summary of fit units whose fact is k (k = 0 … K−1). */
  readonly centroids: readonly (readonly number[])[];
}

/** The float64 mean of the items' `leaf` tensors, or null for an empty read. */
export function summariseRead(items: readonly RetrievedItem[], leaf: string): Float64Array | null {
  if (items.length === 0) return null;
  let sum: Float64Array | null = null;
  for (const item of items) {
    const t = item.leaves[leaf];
    if (t === undefined)
      throw new ImepError(
        'E_INTERVENTION_INVALID',
        `a read item has no ${JSON.stringify(leaf)} leaf for the fact decoder`,
        { field: 'decoder.leaf' },
      );
    const v = toFloat64(t);
    if (sum === null) sum = new Float64Array(v.length);
    if (v.length !== sum.length)
      throw new ImepError(
        'E_INTERVENTION_INVALID',
        `read items carry ${leaf} leaves of ${sum.length} and ${v.length} values`,
        { field: 'decoder.leaf' },
      );
    for (let i = 0; i < v.length; i++) sum[i] = (sum[i] as number) + (v[i] as number);
  }
  const out = sum as Float64Array;
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / items.length;
  return out;
}

/** The label of the nearest centroid (ties → smaller label), or null when nothing was read. */
export function decodeFact(spec: FactDecoderSpec, summary: Float64Array | null): number | null {
  if (summary === null) return null;
  let best = -1;
  let bestD = Infinity;
  spec.centroids.forEach((c, k) => {
    if (c.length !== summary.length) {
      throw new ImepError(
        'E_INTERVENTION_INVALID',
        `decoder centroid ${k} has ${c.length} values, the read summary ${summary.length}`,
        { field: 'decoder.centroids' },
      );
    }
    let d = 0;
    for (let i = 0; i < c.length; i++) d += ((c[i] as number) - (summary[i] as number)) ** 2;
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  });
  return best < 0 ? null : best;
}

export interface FitExample {
  readonly summary: Float64Array;
  /** The fact label 0 … classes−1 (evaluator-side, fit band only). */
  readonly fact: number;
}

/** Centroids by class; a class with no fit example is refused (the decoder could never answer it). */
export function fitFactDecoder(examples: readonly FitExample[], classes: number, leaf: string): FactDecoderSpec {
  const first = examples[0];
  if (first === undefined)
    throw new ImepError('E_PROTOCOL_INVALID', 'the decoder fit band produced no read to fit on', {
      field: 'decoder.fit',
    });
  const d = first.summary.length;
  const sums = Array.from({ length: classes }, () => new Float64Array(d));
  const counts = new Array<number>(classes).fill(0);
  for (const ex of examples) {
    if (!Number.isInteger(ex.fact) || ex.fact < 0 || ex.fact >= classes) {
      throw new ImepError('E_PROTOCOL_INVALID', `fit example fact ${ex.fact} outside 0…${classes - 1}`, {
        field: 'decoder.classes',
      });
    }
    const s = sums[ex.fact] as Float64Array;
    for (let i = 0; i < d; i++) s[i] = (s[i] as number) + (ex.summary[i] as number);
    counts[ex.fact] = (counts[ex.fact] as number) + 1;
  }
  const centroids = sums.map((s, k) => {
    const n = counts[k] as number;
    if (n === 0)
      throw new ImepError('E_PROTOCOL_INVALID', `the decoder fit band has no unit with fact ${k}`, {
        field: 'decoder.fit',
        hint: 'widen the fit band',
      });
    return Array.from(s, (x) => x / n);
  });
  return { leaf, centroids };
}
