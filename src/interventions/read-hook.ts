/**
 * The hook-based variant of U / S_π / T_μ: the operator runs at every read instead of once at
 * installation (as in the blackout ladders, where every read with history is substituted). Each read
 * draws from its own stream `Prng(seed).fork(bank|scope|episode|queryIndex)`, so a read's result does
 * not depend on how many reads came before it. An empty read is returned as is (nothing to substitute).
 */
import type { ReadHook } from '../banks/index.js';
import { ImepError, Prng, type PrngSpec, type Seed } from '../core/index.js';
import { applyToItems, emptyLeafStats, type LeafOperator } from './leaf-operator.js';

export interface ReadHookStats {
  readonly reads: number;
  readonly emptyReads: number;
  /** Reads with at least one item, all of which the operator rewrote. */
  readonly substitutedReads: number;
  readonly leaves: number;
  readonly elements: number;
  readonly nonFinite: number;
}

export interface OperatorReadHook {
  readonly hook: ReadHook;
  readonly operator: LeafOperator;
  readonly prng: PrngSpec | null;
  stats(): ReadHookStats;
}

export function readHook(operator: LeafOperator, options: { seed?: Seed } = {}): OperatorReadHook {
  if (operator.usesPrng && options.seed === undefined) {
    throw new ImepError(
      'E_INTERVENTION_INVALID',
      `read hook: condition ${operator.condition} draws random numbers and needs a registered seed`,
      { field: 'seed' },
    );
  }
  const base = new Prng(options.seed ?? 0);
  const leafStats = emptyLeafStats();
  let reads = 0,
    emptyReads = 0,
    substitutedReads = 0;
  const hook: ReadHook = (items, ctx) => {
    reads++;
    if (items.length === 0) {
      emptyReads++;
      return items;
    }
    const prng = base.fork(`${ctx.bank}|${ctx.scope}|${ctx.episode}|${ctx.queryIndex}`);
    const out = applyToItems(items, operator, prng, leafStats);
    substitutedReads++;
    return out;
  };
  return {
    hook,
    operator,
    prng: operator.usesPrng ? base.spec : null,
    stats: () => ({ reads, emptyReads, substitutedReads, ...leafStats }),
  };
}
