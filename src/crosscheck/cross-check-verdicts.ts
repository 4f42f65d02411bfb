/**
 * The cross-check's own reading of each routed verdict: which interval a criterion must route on and
 * which word its bounds give. Written from protocols/README.md ("Verdict words"), not from decide.ts or
 * estimands.ts, so a producer that routes on another interval or reads a rule the other way disagrees:
 *   lower-bound-above  claim above the margin:  LB > max(margin, companions' UB) → holds; UB < margin →
 *                      not detected; else unresolved (b′ + c′ below a registered minDiscordant → unresolved)
 *   upper-bound-below  claim below the margin:  UB < margin → holds; LB > margin → not detected
 *   equivalence        claim within ±margin:    −margin < LB and UB < margin → holds; UB < −margin or
 *                      LB > margin → not detected
 *   p-below            p < α → holds, else unresolved;   point-below  estimate < than's → holds, else not detected
 * A conditional-exact criterion routes on its conditional bound only when every threshold is 0 (margin 0, no
 * companion); otherwise on exact-cp-difference at α/2 per proportion over b′, c′ (unconditional).
 */
import { num, str, type Obj } from './cross-check-model.js';

const ALPHA_METHODS = ['exact-cp-difference', 'clopper-pearson', 'conditional-exact'];

/** The registered interval id of a bound criterion (the documented id convention of types.ts). */
export function registeredIntervalId(c: Obj): string | null {
  const rule = str(c['rule']);
  if (rule === 'p-below' || rule === 'point-below') return null;
  const method = str(c['method']);
  const alpha = num(c['alphaPerComponent']);
  const level = num(c['level']);
  // a level on an α-method: the α whose two-sided interval covers it — four tails for the difference bound, two otherwise
  const tails = method === 'exact-cp-difference' ? 4 : 2;
  if (ALPHA_METHODS.includes(method))
    return `${method}/a${alpha ?? (level !== undefined ? Number(((1 - level) / tails).toPrecision(12)) : 0.05)}`;
  return `${method}/l${level ?? (alpha !== undefined ? 1 - 2 * alpha : 0.95)}`;
}

/** The interval id the criterion must route on, from its registered id. */
export function expectedRoutingId(c: Obj, registered: string | null): string | null {
  if (registered === null || !registered.startsWith('conditional-exact/a')) return registered;
  const rule = str(c['rule']);
  const companions = Array.isArray(c['aboveUpperBoundOf']) ? c['aboveUpperBoundOf'].length : 0;
  const zero =
    num(c['margin']) === 0 && (rule === 'upper-bound-below' || (rule === 'lower-bound-above' && companions === 0));
  if (zero) return registered;
  const alpha = Number(registered.slice('conditional-exact/a'.length));
  return `exact-cp-difference/a${Number((alpha / 2).toPrecision(12))}`;
}

/**
 * The exact bound that must confirm a word routed on a score interval or a bootstrap, from the registered id
 * and the estimand kind: Clopper–Pearson at (1 − level)/2 (ρ, success rate), the exact difference bound at
 * (1 − level)/4 per proportion (D, G, θ; θ̄ per task at that α/K); null for exact methods.
 */
export function exactConfirmationId(registered: string | null, kind: string): string | null {
  if (registered === null) return null;
  const [method, param] = registered.split('/') as [string, string];
  if (method === 'exact-cp-difference' || method === 'clopper-pearson' || method === 'conditional-exact') return null;
  const level = Number(param.slice(1));
  const a = (tails: number): number => Number(((1 - level) / tails).toPrecision(12));
  if (kind === 'rho' || kind === 'successRate') return `clopper-pearson/a${a(2)}`;
  // θ̄: the same id; its bound is the per-task union bound at α/K (cross-check-estimands.ts thetaBarUnion)
  if (kind === 'D' || kind === 'G' || kind === 'theta' || kind === 'thetaBar') return `exact-cp-difference/a${a(4)}`;
  return null;
}

/** An approximate interval's word stands only when the exact bound gives it too; otherwise unresolved. */
export function confirmedWord(
  approx: ReturnType<typeof expectedWord>,
  exact: ReturnType<typeof expectedWord>,
): ReturnType<typeof expectedWord> {
  if (approx === null || exact === null) return null;
  return approx === exact || approx === 'unresolved' ? approx : 'unresolved';
}

export interface XRouted {
  readonly lower: number | null;
  readonly upper: number | null;
  readonly threshold: number | null;
  readonly p: number | null;
  readonly estimate: number;
  readonly discordant: number | null;
}

/** The verdict word the cross-check expects, or null when it cannot say (a number missing). */
export function expectedWord(c: Obj, x: XRouted): 'holds' | 'not detected' | 'unresolved' | null {
  const rule = str(c['rule']);
  const margin = num(c['margin']) ?? 0;
  const { lower: lo, upper: up } = x;
  if (rule === 'p-below') return x.p === null ? null : x.p < (num(c['alpha']) ?? 0) ? 'holds' : 'unresolved';
  if (rule === 'point-below') return x.threshold === null ? null : x.estimate < x.threshold ? 'holds' : 'not detected';
  if (lo === null || up === null) return null;
  if (rule === 'lower-bound-above') {
    const floor = num(c['minDiscordant']);
    if (floor !== undefined && (x.discordant ?? 0) < floor) return 'unresolved';
    if (x.threshold === null) return null;
    return lo > x.threshold ? 'holds' : up < margin ? 'not detected' : 'unresolved';
  }
  if (rule === 'upper-bound-below') return up < margin ? 'holds' : lo > margin ? 'not detected' : 'unresolved';
  if (rule === 'equivalence')
    return -margin < lo && up < margin ? 'holds' : up < -margin || lo > margin ? 'not detected' : 'unresolved';
  return null;
}
