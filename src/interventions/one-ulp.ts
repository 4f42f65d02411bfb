/**
 * U — the one-ULP control: every float leaf moves by one representable value in its own dtype
 * (edge cases in ulp.ts). At installation it runs through the same routine as S and T (install.ts);
 * under a blackout ladder it runs at each read (read-hook.ts).
 */
import type { FloatTensor } from '../core/index.js';
import type { LeafOperator, LeafStats } from './leaf-operator.js';
import { stepTensorUlp, type UlpDirection } from './ulp.js';

export const DEFAULT_ULP_DIRECTION: UlpDirection = 'away';

export function oneUlpLeaf(leaf: FloatTensor, direction: UlpDirection, stats?: LeafStats): FloatTensor {
  const { tensor, nonFinite } = stepTensorUlp(leaf, direction);
  if (stats) stats.nonFinite += nonFinite;
  return tensor;
}

export function oneUlpOperator(direction: UlpDirection = DEFAULT_ULP_DIRECTION): LeafOperator {
  return {
    condition: 'U',
    params: { direction },
    usesPrng: false,
    apply: (leaf, _prng, stats) => oneUlpLeaf(leaf, direction, stats),
  };
}
