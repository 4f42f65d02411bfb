/**
 * Information isolation on the client side (PROTOCOL.md, "Information isolation"): every observation is
 * split again by the run's allowlists, so a policy sees only method-visible fields whatever a server
 * sends; a run whose method-visible and evaluator-only allowlists overlap refuses to start.
 */
import { ImepError } from '../core/index.js';
import type { EnvSpec, NdArray, ObsValue, ResetRequest, SimEnvironment, StepResult } from './environment.js';

export interface Allowlists {
  readonly methodVisible: readonly string[];
  readonly evaluatorOnly: readonly string[];
}

/** Throws E_ALLOWLIST_OVERLAP naming every field on both lists. */
export function assertDisjointAllowlists(lists: Allowlists, where = 'allowlists'): void {
  const evaluator = new Set(lists.evaluatorOnly);
  const overlap = [...new Set(lists.methodVisible)].filter((f) => evaluator.has(f)).sort();
  if (overlap.length > 0) {
    throw new ImepError(
      'E_ALLOWLIST_OVERLAP',
      `field${overlap.length > 1 ? 's' : ''} ${overlap.map((f) => JSON.stringify(f)).join(', ')} ${overlap.length > 1 ? 'are' : 'is'} on both the method-visible and the evaluator-only allowlist`,
      { field: where, hint: 'a field is either shown to the policy or kept for the evaluator, never both' },
    );
  }
}

/**
 * Keeps in `obs` only method-visible fields. Fields dropped from `obs` that are on the evaluator-only
 * list move to `evaluator` (unless it already has them); other dropped fields are discarded.
 */
export function splitObservation(result: StepResult, lists: Allowlists): StepResult {
  // Runs on every step of every episode: the lists are short, so membership is a scan of the arrays
  // (Array.includes and Set.has agree: both SameValueZero) rather than two Sets built per call, and the
  // fields are walked by key (Object.keys order is Object.entries order) without an entry pair each.
  const visible = lists.methodVisible;
  const evaluatorOnly = lists.evaluatorOnly;
  const source = result.obs;
  const obs: Record<string, ObsValue | NdArray> = {};
  let evaluator: Record<string, ObsValue | NdArray> | undefined;
  const keys = Object.keys(source);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = source[k] as ObsValue | NdArray;
    if (visible.includes(k)) obs[k] = ndarrayOnly(v);
    else if (evaluatorOnly.includes(k) && !(k in result.evaluator)) {
      evaluator ??= { ...result.evaluator };
      evaluator[k] = v;
    }
  }
  return { ...result, obs, evaluator: evaluator ?? result.evaluator };
}

/**
 * A visible ndarray (an object with dtype, shape and data) passes with those three fields and no others: a
 * key riding along on it (an adapter attaching `ballCup` to its frame object) would reach the policy under a
 * visible name. Other values pass as they are (nested observation maps are the simulator's own structure).
 * Counted without allocating: this runs for every visible field of every step.
 */
function ndarrayOnly(v: ObsValue | NdArray): ObsValue | NdArray {
  if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v) || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  if (!('dtype' in o) || !('shape' in o) || !('data' in o)) return v;
  let n = 0;
  for (const key in o) if (Object.prototype.hasOwnProperty.call(o, key)) n += 1;
  if (n === 3) return v;
  const a = v as NdArray;
  return { dtype: a.dtype, shape: a.shape, data: a.data };
}

/**
 * The server-side split (PROTOCOL.md, "Information isolation"): of every field the simulator reported
 * (in `obs` or `evaluator`), `obs` gets exactly the spec's method-visible ones and `evaluator` exactly its
 * evaluator-only ones, each in the spec's list order; a field on neither list is not sent.
 */
export function splitBySpec(result: StepResult, spec: Allowlists): StepResult {
  const fields: Record<string, ObsValue | NdArray> = { ...result.obs, ...result.evaluator };
  const pick = (names: readonly string[]): Record<string, ObsValue | NdArray> => {
    const out: Record<string, ObsValue | NdArray> = {};
    for (const k of names)
      if (Object.prototype.hasOwnProperty.call(fields, k)) out[k] = fields[k] as ObsValue | NdArray;
    return out;
  };
  return { ...result, obs: pick(spec.methodVisible), evaluator: pick(spec.evaluatorOnly) };
}

/** Fields of `result.obs` that `splitObservation` would drop (for diagnostics). */
export function droppedFields(result: StepResult, lists: Allowlists): string[] {
  const visible = new Set(lists.methodVisible);
  return Object.keys(result.obs).filter((k) => !visible.has(k));
}

/**
 * A SimEnvironment whose observations pass through the run's allowlists. Construction refuses
 * overlapping allowlists, and a method-visible allowlist naming a field the environment declares
 * evaluator-only.
 */
export class AllowlistedEnvironment implements SimEnvironment {
  readonly spec: EnvSpec;
  readonly #inner: SimEnvironment;
  readonly #lists: Allowlists;

  constructor(inner: SimEnvironment, lists: Allowlists) {
    assertDisjointAllowlists(lists);
    assertDisjointAllowlists(
      { methodVisible: lists.methodVisible, evaluatorOnly: inner.spec.evaluatorOnly },
      `${inner.spec.id}: evaluatorOnly`,
    );
    this.#inner = inner;
    const allowed = new Set(lists.methodVisible);
    const evaluatorOnly = [...new Set([...inner.spec.evaluatorOnly, ...lists.evaluatorOnly])];
    // fields evaluator-only by the run's list or by the environment's spec move to `evaluator`
    this.#lists = { methodVisible: lists.methodVisible, evaluatorOnly };
    this.spec = { ...inner.spec, methodVisible: inner.spec.methodVisible.filter((f) => allowed.has(f)), evaluatorOnly };
  }

  async reset(request: ResetRequest): Promise<StepResult> {
    return splitObservation(await this.#inner.reset(request), this.#lists);
  }

  async step(action: NdArray): Promise<StepResult> {
    return splitObservation(await this.#inner.step(action), this.#lists);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
