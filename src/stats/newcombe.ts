/**
 * Newcombe (1998) square-and-add interval for a paired difference of proportions when all four cells
 * of the paired 2×2 table are known ("method 10", Stat Med 1998;17:2635–2650).
 *
 * Cells (docs/architecture.md orientation): a = both succeed, b = reference succeeds and intervention fails,
 * c = reference fails and intervention succeeds, d = both fail; n = a + b + c + d. Then
 * p₁ = (a + b)/n (reference), p₂ = (a + c)/n (intervention) and the estimate is D = p₁ − p₂ = (b − c)/n.
 *
 * Definition followed: with Wilson score intervals (l₁, u₁) for p₁ and (l₂, u₂) for p₂ at the same
 * level, and φ̂ the correlation estimate,
 *   lower = D − √((p₁ − l₁)² − 2φ̂(p₁ − l₁)(u₂ − p₂) + (u₂ − p₂)²),
 *   upper = D + √((u₁ − p₁)² − 2φ̂(u₁ − p₁)(p₂ − l₂) + (p₂ − l₂)²).
 * φ̂ uses Newcombe's correction (default, `phi: 'corrected'`): with A = ad − bc and
 * M = (a + b)(c + d)(a + c)(b + d), φ̂ = (A − n/2)/√M if A > n/2, 0 if 0 ≤ A ≤ n/2, A/√M if A < 0.
 * This is the form of Newcombe's paper and of Fagerland, Lydersen & Laake (2017, ch. 8), whose worked
 * example (a, b, c, d) = (59, 6, 16, 80) gives −0.0621 (−0.1186 to −0.0046). `phi: 'plain'` uses
 * φ̂ = A/√M without the correction.
 *
 * Degenerate inputs: φ̂ = 0 whenever a margin is 0 (M = 0), per Newcombe. All-zero tables (n = 0),
 * negative or non-integer cells and a level outside (0, 1) throw E_STATS_DOMAIN naming the argument.
 */
import { domainError } from '../core/index.js';
import { assertCount, assertLevel, wilson } from './wilson.js';

export interface PairedTable {
  /** Both succeed. */
  readonly a: number;
  /** Reference succeeds, intervention fails. */
  readonly b: number;
  /** Reference fails, intervention succeeds. */
  readonly c: number;
  /** Both fail. */
  readonly d: number;
}

export type PhiMode = 'corrected' | 'plain';

export interface NewcombeInterval {
  readonly method: 'newcombe-square-and-add';
  /** D̂ = (b − c)/n. */
  readonly estimate: number;
  /** [lower, upper] on the D scale. */
  readonly interval: readonly [number, number];
  readonly level: number;
  /** The correlation estimate used. */
  readonly phi: number;
  readonly phiMode: PhiMode;
  readonly n: number;
}

/** Newcombe's φ̂ for the table (0 when any margin is 0). */
export function newcombePhi(table: PairedTable, mode: PhiMode = 'corrected'): number {
  const { a, b, c, d } = table;
  const n = a + b + c + d;
  const margins = [a + b, c + d, a + c, b + d];
  if (margins.some((m) => m === 0)) return 0;
  const denom = Math.sqrt(margins.reduce((p, m) => p * m, 1));
  const cross = a * d - b * c;
  if (mode === 'plain') return cross / denom;
  if (cross > n / 2) return (cross - n / 2) / denom;
  if (cross >= 0) return 0;
  return cross / denom;
}

/** Newcombe method-10 square-and-add interval for D = p₁ − p₂ from a paired 2×2 table. */
export function newcombe(table: PairedTable, level = 0.95, options: { readonly phi?: PhiMode } = {}): NewcombeInterval {
  const { a, b, c, d } = table;
  assertCount('a', a);
  assertCount('b', b);
  assertCount('c', c);
  assertCount('d', d);
  const n = a + b + c + d;
  if (n === 0) domainError('n', 'the table is empty (a + b + c + d = 0)');
  assertLevel('level', level);
  const phiMode = options.phi ?? 'corrected';
  if (phiMode !== 'corrected' && phiMode !== 'plain')
    domainError('phi', `phi must be 'corrected' or 'plain', got ${String(phiMode)}`);
  const p1 = (a + b) / n;
  const p2 = (a + c) / n;
  const [l1, u1] = wilson(a + b, n, level);
  const [l2, u2] = wilson(a + c, n, level);
  const phi = newcombePhi(table, phiMode);
  const estimate = (b - c) / n;
  const dl1 = p1 - l1;
  const du1 = u1 - p1;
  const dl2 = p2 - l2;
  const du2 = u2 - p2;
  // x² − 2φxy + y² written as (x − y)² + 2(1 − φ)xy, which does not cancel catastrophically as φ → 1.
  const below = Math.sqrt(Math.max(0, (dl1 - du2) ** 2 + 2 * (1 - phi) * dl1 * du2));
  const above = Math.sqrt(Math.max(0, (du1 - dl2) ** 2 + 2 * (1 - phi) * du1 * dl2));
  return {
    method: 'newcombe-square-and-add',
    estimate,
    interval: [Math.max(-1, estimate - below), Math.min(1, estimate + above)],
    level,
    phi,
    phiMode,
    n,
  };
}
