import type { RecordKeys } from './record.js';
import { dot64, unitVector } from './cosine.js';
import { assertFiniteNumber, assertKeys, assertPositiveInteger, bankError } from './validate.js';

/**
 * The parameter-free PCMB selector.
 *
 *   score(r) = w_cog · cos(q.cognitiveKey, r.cognitiveKey) + w_per · cos(q.perceptualKey, r.perceptualKey)
 *
 * Gate: the query is accepted only when the best state-signature similarity over all candidates,
 * max_r cos(q.stateSignature, r.stateSignature), is ≥ `gate`; otherwise nothing is selected and the
 * selection says why (`below-gate`, or `no-candidates` for an empty scope).
 * Accepted queries return at most `k` candidates by descending score; equal scores are ordered by
 * (timestep ascending, slot ascending). Cosines follow the canonical definition in `cosine.ts`.
 *
 * The scorer reads only the three keys. Its inputs are prepared keys (cached unit vectors) plus slot
 * and timestep, which are used for nothing but breaking ties; payload and version never reach it.
 */

export interface SelectorWeights {
  readonly cognitive: number;
  readonly perceptual: number;
}

export interface SelectorConfig {
  /** Most records a query returns. */
  readonly k: number;
  /** Minimum best state-signature similarity for the query to be accepted. */
  readonly gate: number;
  readonly weights: SelectorWeights;
}

export const DEFAULT_SELECTOR_CONFIG: SelectorConfig = Object.freeze({
  k: 4,
  gate: 0.45,
  weights: Object.freeze({ cognitive: 0.5, perceptual: 0.5 }),
});

export interface SelectorConfigInput {
  readonly k?: number | undefined;
  readonly gate?: number | undefined;
  readonly weights?: SelectorWeights | undefined;
}

/** Fills defaults and validates (k a positive integer; gate and weights finite). */
export function resolveSelectorConfig(input: SelectorConfigInput = {}): SelectorConfig {
  const k = input.k ?? DEFAULT_SELECTOR_CONFIG.k;
  const gate = input.gate ?? DEFAULT_SELECTOR_CONFIG.gate;
  const weights = input.weights ?? DEFAULT_SELECTOR_CONFIG.weights;
  assertPositiveInteger(k, 'k');
  assertFiniteNumber(gate, 'gate');
  assertFiniteNumber(weights.cognitive, 'weights.cognitive');
  assertFiniteNumber(weights.perceptual, 'weights.perceptual');
  return Object.freeze({
    k,
    gate,
    weights: Object.freeze({ cognitive: weights.cognitive, perceptual: weights.perceptual }),
  });
}

/** Canonical unit vectors of the three keys (see `cosine.ts`), cached per record by the banks. */
export interface PreparedKeys {
  readonly cognitive: Float64Array;
  readonly perceptual: Float64Array;
  readonly signature: Float64Array;
}

export function prepareKeys(keys: RecordKeys): PreparedKeys {
  return {
    cognitive: unitVector(keys.cognitiveKey),
    perceptual: unitVector(keys.perceptualKey),
    signature: unitVector(keys.stateSignature),
  };
}

/** What the selector sees of a record: its prepared keys, and slot/timestep for tie-breaking only. */
export interface SelectorCandidate {
  readonly slot: number;
  readonly timestep: number;
  readonly prepared: PreparedKeys;
}

export type SelectionReason = 'accepted' | 'no-candidates' | 'below-gate';

export interface SelectionPick {
  /** Position of the pick in the candidate list. */
  readonly index: number;
  readonly slot: number;
  readonly timestep: number;
  readonly score: number;
}

export interface Selection {
  readonly accepted: boolean;
  readonly reason: SelectionReason;
  /** max over candidates of the state-signature cosine; null when there were no candidates. */
  readonly bestSignatureSimilarity: number | null;
  readonly candidateCount: number;
  /** Best first; empty unless accepted. */
  readonly picks: readonly SelectionPick[];
}

function checkDims(q: PreparedKeys, c: PreparedKeys, index: number): void {
  if (c.cognitive.length !== q.cognitive.length)
    throw dimError('cognitiveKey', q.cognitive.length, c.cognitive.length, index);
  if (c.perceptual.length !== q.perceptual.length)
    throw dimError('perceptualKey', q.perceptual.length, c.perceptual.length, index);
  if (c.signature.length !== q.signature.length)
    throw dimError('stateSignature', q.signature.length, c.signature.length, index);
}

function dimError(key: string, q: number, c: number, index: number): Error {
  return bankError(`selector: query ${key} has ${q} elements, candidate ${index} has ${c}`, `keys.${key}`);
}

/** True when pick a ranks before pick b: higher score, then earlier timestep, then lower slot. */
function ranksBefore(sa: number, ta: number, la: number, sb: number, tb: number, lb: number): boolean {
  if (sa !== sb) return sa > sb;
  if (ta !== tb) return ta < tb;
  return la < lb;
}

/** Runs the selector over prepared candidates. */
export function selectPrepared(
  query: PreparedKeys,
  candidates: readonly SelectorCandidate[],
  config: SelectorConfig,
): Selection {
  const n = candidates.length;
  if (n === 0)
    return { accepted: false, reason: 'no-candidates', bestSignatureSimilarity: null, candidateCount: 0, picks: [] };
  let best = -Infinity;
  for (let i = 0; i < n; i++) {
    const c = (candidates[i] as SelectorCandidate).prepared;
    checkDims(query, c, i);
    const s = dot64(query.signature, c.signature);
    if (s > best) best = s;
  }
  if (!(best >= config.gate)) {
    return { accepted: false, reason: 'below-gate', bestSignatureSimilarity: best, candidateCount: n, picks: [] };
  }
  const wc = config.weights.cognitive;
  const wp = config.weights.perceptual;
  const k = Math.min(config.k, n);
  // Top-k by insertion into a small sorted buffer (n is the bank capacity, typically 16).
  const topIdx = new Int32Array(k);
  const topScore = new Float64Array(k);
  let filled = 0;
  for (let i = 0; i < n; i++) {
    const cand = candidates[i] as SelectorCandidate;
    const c = cand.prepared;
    const score = wc * dot64(query.cognitive, c.cognitive) + wp * dot64(query.perceptual, c.perceptual);
    let pos = filled;
    while (pos > 0) {
      const j = topIdx[pos - 1] as number;
      const o = candidates[j] as SelectorCandidate;
      if (!ranksBefore(score, cand.timestep, cand.slot, topScore[pos - 1] as number, o.timestep, o.slot)) break;
      pos--;
    }
    if (pos >= k) continue;
    const last = filled < k ? filled : k - 1;
    for (let m = last; m > pos; m--) {
      topIdx[m] = topIdx[m - 1] as number;
      topScore[m] = topScore[m - 1] as number;
    }
    topIdx[pos] = i;
    topScore[pos] = score;
    if (filled < k) filled++;
  }
  const picks: SelectionPick[] = new Array<SelectionPick>(filled);
  for (let m = 0; m < filled; m++) {
    const index = topIdx[m] as number;
    const cand = candidates[index] as SelectorCandidate;
    picks[m] = { index, slot: cand.slot, timestep: cand.timestep, score: topScore[m] as number };
  }
  return { accepted: true, reason: 'accepted', bestSignatureSimilarity: best, candidateCount: n, picks };
}

/** The fields of a record the uncached selector reads: keys, and slot/timestep for ties. */
export interface SelectableRecord {
  readonly slot: number;
  readonly timestep: number;
  readonly keys: RecordKeys;
}

/**
 * Uncached convenience: prepares the query and every record's keys, then selects. Reads nothing of a
 * record but `keys`, `slot` and `timestep` (a record's payload and version are never touched).
 */
export function selectRecords(
  query: RecordKeys,
  records: readonly SelectableRecord[],
  config: SelectorConfigInput = {},
): Selection {
  assertKeys(query, 'query');
  const cfg = resolveSelectorConfig(config);
  const candidates: SelectorCandidate[] = records.map((r) => ({
    slot: r.slot,
    timestep: r.timestep,
    prepared: prepareKeys(r.keys),
  }));
  return selectPrepared(prepareKeys(query), candidates, cfg);
}
