/**
 * Attainable verdicts: whether each registered criterion can reach "holds" at all at the registered n, computed
 * exactly from the protocol alone (nothing run). A rule that cannot hold whatever the outcomes is a design error
 * (e.g. n = 4 with a one-sided exact McNemar at α = 0.05: the smallest attainable p is 1/16), so `imep protocol
 * check` and precommit warn about it, naming the criterion; a warning does not refuse.
 *
 * The most favourable outcome of each rule, on the estimand's largest possible cohort (n paired units = tasks ×
 * min over its conditions of min(condition n, registered seeds) × registered attempts — removals only shrink it):
 *   p-below            exact McNemar at b = n, c = 0 ('greater', 'two-sided') or b = 0, c = n ('less'), Holm-adjusted
 *                      as min(1, m·p) when the estimand is in a family of m contrasts (its best case): p < α?
 *   lower-bound-above  the lower bound at b = n, c = 0 (x = n for a proportion): L > margin?  (companions ignored:
 *                      they only raise the threshold); a conditional θ bound scans b′ = m, c′ = 0 over the
 *                      registered discordance floor (minDiscordant) … n
 *   upper-bound-below  the upper bound at b = 0, c = n (x = 0): U < margin?
 *   equivalence        the diagonal b = c = k, k = 0 … ⌊n/2⌋ (x = 0 for a proportion): −margin < L and U < margin?
 *                      (the exact difference bound is symmetric and monotone — U rises with b, falls with c — so if
 *                      any (b, c) holds, (min, min) does)
 * The bound is the one the verdict routes on (src/adjudication/estimands.ts routingRequest: a conditional θ bound
 * against a non-zero threshold routes on the unconditional exact bound at α/2); an approximate interval (score,
 * bootstrap) decides only when its exact confirmation agrees, so the exact confirmation's best case is the one that
 * is tested (a necessary condition: never a false warning). θ̄ (no exact bound) and point-below are not assessed.
 * test/campaign/attainable.test.ts checks the warnings against brute force over every (b, c) with adjudication's own
 * interval (intervalOn) and decision (decideBound) routines.
 */
import {
  clopperPearsonLower,
  clopperPearsonUpper,
  conditionalThetaBound,
  decisionBound,
  mcnemarExact,
} from '../stats/index.js';
import { seedCount, type BoundMethod, type Criterion, type Estimand, type Protocol } from '../protocol/index.js';

export interface AttainableWarning {
  /** The criterion id. */
  readonly criterion: string;
  readonly question: string | undefined;
  /** One line: what cannot hold, the most favourable outcome and its bound / p, and the n that would let it. */
  readonly message: string;
}

type Shape = 'difference' | 'proportion' | 'theta' | 'thetaBar';
const ALPHA_METHODS: readonly BoundMethod[] = ['exact-cp-difference', 'clopper-pearson', 'conditional-exact'];

/** The conditions an estimand pairs, and its shape. */
function anatomyOf(e: Estimand): { conditions: string[]; shape: Shape } {
  switch (e.kind) {
    case 'D':
      return { conditions: [e.reference, e.intervention], shape: 'difference' };
    case 'rho':
      return { conditions: [e.reference, e.intervention], shape: 'proportion' };
    case 'theta':
      return { conditions: [e.reference, e.T, e.S], shape: 'theta' };
    case 'thetaBar':
      return { conditions: [e.reference, e.T, e.S], shape: 'thetaBar' };
    case 'G':
      return { conditions: [e.oracle, e.none], shape: 'difference' };
    case 'successRate':
      return { conditions: [e.condition], shape: 'proportion' };
  }
}

/** The largest number of paired units an estimand's cohort can have under the protocol's plan. */
export function maxPairedUnits(protocol: Protocol, estimand: Estimand): number {
  const seeds = seedCount(protocol.seeds);
  const nOf = new Map(protocol.conditions.map((c) => [c.id, c.n ?? protocol.n]));
  const perTask = Math.min(seeds, ...anatomyOf(estimand).conditions.map((id) => nOf.get(id) ?? protocol.n));
  const attempts = protocol.attempts ? 1 : protocol.chains ? protocol.chains.registered.length : 1;
  // an estimand restricted to one task (a suite's <id>@<task>) has that task's units only
  const tasks = estimand.task === undefined ? protocol.envs.length : 1;
  return Math.max(0, perTask) * tasks * attempts;
}

const alphaForLevel = (method: BoundMethod, level: number): number =>
  Number(((1 - level) / (method === 'exact-cp-difference' ? 4 : 2)).toPrecision(12));

/** The exact bound a bound rule's verdict needs (routed, or the exact confirmation of an approximate one). */
function exactBoundOf(c: Criterion, shape: Shape): { method: BoundMethod; alpha: number } | null {
  if (c.rule !== 'lower-bound-above' && c.rule !== 'upper-bound-below' && c.rule !== 'equivalence') return null;
  if (shape === 'thetaBar') return null;
  const alphaRegistered = c.rule === 'equivalence' ? undefined : c.alphaPerComponent;
  const level = c.level;
  if (ALPHA_METHODS.includes(c.method)) {
    const alpha = alphaRegistered ?? (level !== undefined ? alphaForLevel(c.method, level) : 0.05);
    if (c.method !== 'conditional-exact') return { method: c.method, alpha };
    const alone =
      (c.rule === 'lower-bound-above' && c.margin === 0 && (c.aboveUpperBoundOf ?? []).length === 0) ||
      (c.rule === 'upper-bound-below' && c.margin === 0);
    return alone
      ? { method: 'conditional-exact', alpha }
      : { method: 'exact-cp-difference', alpha: Number((alpha / 2).toPrecision(12)) };
  }
  const lvl = level ?? (alphaRegistered !== undefined ? 1 - 2 * alphaRegistered : 0.95);
  return shape === 'proportion'
    ? { method: 'clopper-pearson', alpha: alphaForLevel('clopper-pearson', lvl) }
    : { method: 'exact-cp-difference', alpha: alphaForLevel('exact-cp-difference', lvl) };
}

const floorWords = (floor: number, n: number): string =>
  `its registered discordance floor (minDiscordant: ${floor}) exceeds the ${n} paired units, so it is unresolved whatever happens`;
const pp = (v: number): string => `${v > 0 ? '+' : ''}${(100 * v).toFixed(2)} pp`;
const bounds = (lo: number, hi: number): string => `[${pp(lo)}, ${pp(hi)}]`;

/** The most favourable outcome of a bound rule at n: whether it holds, and what it gives (for the message). */
function bestBound(
  c: Criterion & { rule: 'lower-bound-above' | 'upper-bound-below' | 'equivalence' },
  method: BoundMethod,
  alpha: number,
  n: number,
): { holds: boolean; what: string; whole?: true } {
  const m = c.margin;
  if (method === 'clopper-pearson') {
    if (c.rule === 'lower-bound-above') {
      const L = clopperPearsonLower(n, n, alpha);
      return { holds: L > m, what: `x = ${n} of ${n} gives the lower bound ${pp(L)}` };
    }
    const U = clopperPearsonUpper(0, n, alpha);
    const holds = c.rule === 'upper-bound-below' ? U < m : U < m && -m < 0;
    return { holds, what: `x = 0 of ${n} gives the upper bound ${pp(U)}` };
  }
  if (method === 'conditional-exact') {
    // margin 0 (it decides alone only there): scan m = b′ + c′ with every flip on the favourable side
    const floor = c.rule === 'lower-bound-above' ? Math.max(1, c.minDiscordant ?? 1) : 1;
    if (floor > n) return { holds: false, what: floorWords(floor, n), whole: true };
    let best = c.rule === 'lower-bound-above' ? -Infinity : Infinity;
    for (let k = floor; k <= n; k++) {
      const t =
        c.rule === 'lower-bound-above' ? conditionalThetaBound(k, 0, n, alpha) : conditionalThetaBound(0, k, n, alpha);
      best = c.rule === 'lower-bound-above' ? Math.max(best, t.lower) : Math.min(best, t.upper);
    }
    return c.rule === 'lower-bound-above'
      ? { holds: best > m, what: `b′ = ${n}, c′ = 0 at best gives the conditional lower bound ${pp(best)}` }
      : { holds: best < m, what: `b′ = 0, c′ = ${n} at best gives the conditional upper bound ${pp(best)}` };
  }
  // exact-cp-difference (D, G, θ over b′, c′)
  if (c.rule === 'lower-bound-above') {
    if (c.minDiscordant !== undefined && c.minDiscordant > n)
      return { holds: false, what: floorWords(c.minDiscordant, n), whole: true };
    const L = decisionBound(n, 0, n, alpha).lower;
    return { holds: L > m, what: `b = ${n}, c = 0 gives the lower bound ${pp(L)}` };
  }
  if (c.rule === 'upper-bound-below') {
    const U = decisionBound(0, n, n, alpha).upper;
    return { holds: U < m, what: `b = 0, c = ${n} gives the upper bound ${pp(U)}` };
  }
  let narrowest = decisionBound(0, 0, n, alpha);
  for (let k = 0; 2 * k <= n; k++) {
    const d = decisionBound(k, k, n, alpha);
    if (-m < d.lower && d.upper < m) return { holds: true, what: '' };
    if (d.upper < narrowest.upper) narrowest = d;
  }
  return {
    holds: false,
    what: `the narrowest interval (b = c = ${narrowest.b}) is ${bounds(narrowest.lower, narrowest.upper)}`,
  };
}

/** The best-case p of a p-below criterion at n (Holm-adjusted at its best when the estimand is in a family). */
function bestP(protocol: Protocol, c: Criterion & { rule: 'p-below' }, n: number): { p: number; what: string } {
  const family = protocol.holmFamilies.find((f) => f.contrasts.includes(c.estimand));
  if (family !== undefined) {
    const dir = family.test === 'mcnemar-exact-one-sided' ? 'greater' : 'two-sided';
    const raw = mcnemarExact(n, 0, dir);
    const m = family.contrasts.length;
    return {
      p: Math.min(1, m * raw),
      what: `b = ${n}, c = 0 gives exact McNemar p = ${raw.toPrecision(4)} (${dir}), Holm-adjusted over the ${m} contrasts of family ${family.id} to ${Math.min(1, m * raw).toPrecision(4)}`,
    };
  }
  const p = c.direction === 'less' ? mcnemarExact(0, n, 'less') : mcnemarExact(n, 0, c.direction);
  const outcome = c.direction === 'less' ? `b = 0, c = ${n}` : `b = ${n}, c = 0`;
  return { p, what: `${outcome} gives exact McNemar p = ${p.toPrecision(4)} (${c.direction})` };
}

/** The smallest number of paired units (≤ limit) at which `holdsAt` is true, assuming it stays true above; null if none. */
function smallestN(holdsAt: (n: number) => boolean, from: number, limit = 10_000): number | null {
  let hi = Math.max(1, from);
  while (!holdsAt(hi)) {
    if (hi >= limit) return null;
    hi = Math.min(limit, hi * 2);
  }
  let lo = Math.max(1, from);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (holdsAt(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** One warning per registered criterion that cannot reach "holds" at the registered n. */
export function attainableWarnings(protocol: Protocol): AttainableWarning[] {
  const out: AttainableWarning[] = [];
  for (const c of protocol.criteria) {
    const e = protocol.estimands.find((x) => x.id === c.estimand);
    if (e === undefined) continue;
    const n = maxPairedUnits(protocol, e);
    const { shape } = anatomyOf(e);
    const warn = (rule: string, why: string, need: number | null): void => {
      const units = `${n} paired unit${n === 1 ? '' : 's'}`;
      const fix =
        need === null
          ? 'no n up to 10000 paired units lets it hold: change the rule'
          : `it needs at least ${need} paired units`;
      out.push({
        criterion: c.id,
        question: c.question,
        message: `criterion ${c.id}${c.question === undefined ? '' : ` (${c.question})`}: ${rule} on ${e.id} can never hold at the registered n (at most ${units}): ${why}; ${fix}`,
      });
    };
    if (c.rule === 'p-below') {
      if (e.kind === 'successRate' || e.kind === 'thetaBar') continue; // p-below needs b, c (or b′, c′)
      const at = (k: number): boolean => k >= 1 && bestP(protocol, c, k).p < c.alpha;
      if (n >= 1 && at(n)) continue;
      const why = n < 1 ? 'no unit is planned' : `at best ${bestP(protocol, c, n).what}, not below α = ${c.alpha}`;
      warn(`p-below (exact McNemar, ${c.direction}, α = ${c.alpha})`, why, smallestN(at, n + 1));
      continue;
    }
    if (c.rule !== 'lower-bound-above' && c.rule !== 'upper-bound-below' && c.rule !== 'equivalence') continue;
    const exact = exactBoundOf(c, shape);
    if (exact === null) continue;
    const at = (k: number): boolean => k >= 1 && bestBound(c, exact.method, exact.alpha, k).holds;
    if (n >= 1 && at(n)) continue;
    const which = `${exact.method} at α = ${exact.alpha} per component${exact.method === c.method ? '' : ` (the exact bound its ${c.method} verdict needs)`}`;
    const target =
      c.rule === 'equivalence'
        ? `inside ±${(100 * c.margin).toFixed(2)} pp`
        : c.rule === 'lower-bound-above'
          ? `above the margin ${pp(c.margin)}`
          : `below the margin ${pp(c.margin)}`;
    const best = n < 1 ? null : bestBound(c, exact.method, exact.alpha, n);
    const why =
      best === null
        ? 'no unit is planned'
        : best.whole === true
          ? best.what
          : `at best ${best.what} (${which}), not ${target}`;
    warn(c.rule, why, smallestN(at, n + 1));
  }
  return out;
}
