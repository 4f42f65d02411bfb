/**
 * The shape every payload operator (U, S_π, T_μ) shares: a pure function of (one float leaf, a seeded
 * Prng) → a new leaf of the same dtype and shape in its own buffer. The same operator runs either at
 * installation (on stored payloads) or at each read (on retrieved items); identities and keys are never
 * passed to it, so no operator can change which record is selected.
 */
import { PAYLOAD_FIELDS, type Payload, type PayloadField, type RetrievedItem } from '../banks/index.js';
import type { Prng, FloatTensor } from '../core/index.js';

/** The condition kind an operator belongs to (U, S_pi, T_mu, or a registered kind's name): errors and records name it. */
export type LeafOperatorCondition = string;

export type RegisteredParams = Readonly<Record<string, string | number | boolean>>;

/** Counters an operator adds to while it runs. */
export interface LeafStats {
  leaves: number;
  elements: number;
  /** Elements left unchanged because they are ±Inf or NaN. */
  nonFinite: number;
}

export function emptyLeafStats(): LeafStats {
  return { leaves: 0, elements: 0, nonFinite: 0 };
}

export interface LeafOperator {
  readonly condition: LeafOperatorCondition;
  /** The condition's registered parameters (recorded with every installation). */
  readonly params: RegisteredParams;
  /** False when `apply` draws nothing (U); a seed is then not required. */
  readonly usesPrng: boolean;
  /** Returns a new tensor of the same dtype and shape; never aliases or mutates `leaf`. */
  apply(leaf: FloatTensor, prng: Prng, stats: LeafStats): FloatTensor;
}

/**
 * Applies `op` to every leaf. Draws happen in sorted-name order (so the result does not depend on how
 * the leaves object was built); the output keeps the input's key order.
 */
export function applyToLeaves(
  leaves: Readonly<Record<string, FloatTensor>>,
  op: LeafOperator,
  prng: Prng,
  stats: LeafStats,
): Record<string, FloatTensor> {
  const names = Object.keys(leaves);
  const done = new Map<string, FloatTensor>();
  for (const name of [...names].sort()) {
    const leaf = leaves[name] as FloatTensor;
    done.set(name, op.apply(leaf, prng, stats));
    stats.leaves += 1;
    stats.elements += leaf.data.length;
  }
  const out: Record<string, FloatTensor> = {};
  for (const name of names) out[name] = done.get(name) as FloatTensor;
  return out;
}

/** Applies `op` to each item's leaves; identities are passed through as the same objects. */
export function applyToItems(
  items: readonly RetrievedItem[],
  op: LeafOperator,
  prng: Prng,
  stats: LeafStats,
): RetrievedItem[] {
  return items.map((item) => ({ identity: item.identity, leaves: applyToLeaves(item.leaves, op, prng, stats) }));
}

/** Applies `op` to every payload field, in canonical PAYLOAD_FIELDS order. */
export function applyToPayload(payload: Payload, op: LeafOperator, prng: Prng, stats: LeafStats): Payload {
  const out = {} as Record<PayloadField, FloatTensor>;
  for (const field of PAYLOAD_FIELDS) {
    const leaf = payload[field];
    out[field] = op.apply(leaf, prng, stats);
    stats.leaves += 1;
    stats.elements += leaf.data.length;
  }
  return out;
}
