/**
 * O — the oracle: the harness supplies the correct fact or decision, and the read returns the
 * harness-supplied items in place of what the bank selected. The supplier sees the read context and the
 * bank's selection (so it can, e.g., keep identities) and must return items built from float leaves.
 */
import type { ReadContext, ReadHook, RetrievedItem } from '../banks/index.js';

export interface OracleSource {
  /** The items the reader should receive at this read (the correct fact/decision, encoded as leaves). */
  itemsFor(ctx: ReadContext, selected: readonly RetrievedItem[]): readonly RetrievedItem[];
}

export function oracleHook(source: OracleSource): ReadHook {
  return (items, ctx) => source.itemsFor(ctx, items);
}

/** An oracle that supplies fixed items per scope (empty for an unknown scope). */
export function fixedOracle(itemsByScope: ReadonlyMap<string, readonly RetrievedItem[]>): OracleSource {
  return { itemsFor: (ctx) => itemsByScope.get(ctx.scope) ?? [] };
}
