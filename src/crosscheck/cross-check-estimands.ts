/**
 * The cross-check's recomputation of every estimand: counts by separate loops over the plain cohort
 * (cross-check-estimand-kinds.ts, one entry per kind), point estimates, every interval by the independent
 * arithmetic of cross-check-math.ts, the bootstrap re-run through its own resampling loop
 * (cross-check-bootstrap.ts), identification bounds and the envelopes over extreme fillings.
 */
import { cpLower, cpUpper, mcnemarBig, newcombeInterval, tangoInterval, wilsonClosed } from './cross-check-math.js';
import {
  arr,
  num,
  obj,
  str,
  type Obj,
  type PlainCohort,
  type PlainStudy,
  type PlainUnit,
} from './cross-check-model.js';
import { bootstrap } from './cross-check-bootstrap.js';
import { conditionsOf, estimandKind, readoutOf, type Filled, type Y } from './cross-check-estimand-kinds.js';

export interface XInterval {
  lower: number;
  upper: number;
  envelope: { lower: number; upper: number } | null;
}

export interface XEstimand {
  id: string;
  kind: string;
  conds: string[];
  cohort: PlainCohort;
  available: boolean;
  counts: Record<string, number>;
  estimate: number;
  intervals: Map<string, XInterval>;
  tests: Record<string, number>;
  identification: { lower: number; upper: number } | null;
  perTask: { task: string; n: number; bPrime: number; cPrime: number; theta: number | null; weight: number }[] | null;
  pair: [number, number] | null;
}

/** Each unresolved unit filled with the outcomes that make its contribution smallest (`min`) or largest. */
function fill(units: readonly PlainUnit[], kind: string, dir: 'min' | 'max'): Filled[] {
  const contribution = estimandKind(kind).contribution;
  const out: Filled[] = [];
  for (const u of units) {
    const open: number[] = [];
    for (let k = 0; k < u.y.length; k++) if (u.y[k] === null) open.push(k);
    if (open.length === 0) {
      out.push({ task: u.task, seed: u.seed, y: u.y as Y[] });
      continue;
    }
    let best: Y[] | null = null;
    let bestV = 0;
    for (let mask = 0; mask < 2 ** open.length; mask++) {
      const y = u.y.map((v) => (v === null ? 0 : v)) as Y[];
      for (let k = 0; k < open.length; k++) y[open[k]!] = (Math.floor(mask / 2 ** k) % 2) as Y;
      const v = contribution(y);
      if (best === null || (dir === 'max' && v > bestV) || (dir === 'min' && v < bestV)) {
        best = y;
        bestV = v;
      }
    }
    out.push({ task: u.task, seed: u.seed, y: best as Y[] });
  }
  return out;
}

/** Normalised θ̄ weights over `tasks` (null when a weighted task has no units: the estimand is then unavailable). */
function weights(e: Obj, tasks: readonly string[], units: readonly Filled[]): number[] | null {
  const given = e['weights'];
  const raw = tasks.map((t) => (given === undefined || given === null ? 1 : (num(obj(given)[t]) ?? 0)));
  let total = 0;
  for (const w of raw) total += w;
  if (!(total > 0)) return null;
  for (let k = 0; k < tasks.length; k++) if (raw[k]! > 0 && !units.some((u) => u.task === tasks[k])) return null;
  return raw.map((w) => w / total);
}

/** The point estimate: the mean contribution (θ̄: the weighted mean over tasks of each task's mean). */
function estimateOf(kind: string, units: readonly Filled[], w: number[] | null, tasks: readonly string[]): number {
  const contribution = estimandKind(kind).contribution;
  if (kind === 'thetaBar') {
    let s = 0;
    tasks.forEach((t, k) => {
      if ((w as number[])[k]! <= 0) return;
      const mine = units.filter((u) => u.task === t);
      let sum = 0;
      for (const u of mine) sum += contribution(u.y);
      s += (w as number[])[k]! * (sum / mine.length);
    });
    return s;
  }
  let sum = 0;
  for (const u of units) sum += contribution(u.y);
  return sum / units.length;
}

/**
 * θ̄'s exact bound, recomputed from protocols/README.md's definition: in each of the K tasks with positive
 * weight, CP bounds (bisection) on b′ and c′ of that task's units at α/K each; the weighted sums of the task
 * bounds (union bound: each end one-sided ≥ 1 − 2α).
 */
function thetaBarUnion(
  units: readonly Filled[],
  w: readonly number[],
  tasks: readonly string[],
  alpha: number,
): [number, number] {
  const used = tasks.map((t, k) => ({ t, w: w[k]! })).filter((x) => x.w > 0);
  const a = alpha / used.length;
  let lo = 0,
    hi = 0;
  for (const { t, w: wk } of used) {
    let bp = 0,
      cp = 0,
      n = 0;
    for (const u of units) {
      if (u.task !== t) continue;
      n++;
      const f = estimandKind('theta').contribution(u.y);
      if (f === 1) bp++;
      else if (f === -1) cp++;
    }
    lo += wk * (cpLower(bp, n, a) - cpUpper(cp, n, a));
    hi += wk * (cpUpper(bp, n, a) - cpLower(cp, n, a));
  }
  return [lo, hi];
}

export interface XBoot {
  replicates: number;
  seed: number | string;
}

/** One interval on completely filled units; `id` is `<method>/a<α>` or `<method>/l<level>`. */
export function intervalX(
  id: string,
  kind: string,
  units: readonly Filled[],
  w: number[] | null,
  tasks: readonly string[],
  boot: XBoot | null,
): [number, number] {
  const [method, param] = id.split('/') as [string, string];
  const value = Number(param.slice(1));
  const k = estimandKind(kind).counts(units);
  const n = k['n']!;
  // θ's unconditional exact bound is the difference bound on b′, c′
  const b = k['b'] ?? k['bPrime'] ?? 0,
    c = k['c'] ?? k['cPrime'] ?? 0;
  const x = kind === 'rho' ? b + c : (k['successes'] ?? 0);
  switch (method) {
    case 'exact-cp-difference':
      if (kind === 'thetaBar') return thetaBarUnion(units, w as number[], tasks, value);
      return [cpLower(b, n, value) - cpUpper(c, n, value), cpUpper(b, n, value) - cpLower(c, n, value)];
    case 'clopper-pearson':
      return [cpLower(x, n, value), cpUpper(x, n, value)];
    case 'conditional-exact': {
      const bp = k['bPrime']!,
        m = bp + k['cPrime']!;
      if (m === 0) return [0, 0];
      return [(2 * cpLower(bp, m, value) - 1) * (m / n), (2 * cpUpper(bp, m, value) - 1) * (m / n)];
    }
    case 'wilson':
      return wilsonClosed(x, n, value);
    case 'tango':
      return tangoInterval(b, c, n, value);
    case 'newcombe': {
      let a = 0;
      for (const u of units) if (u.y[0] === 1 && u.y[1] === 1) a++;
      return newcombeInterval(a, b, c, n - a - b - c, value);
    }
    default: {
      const level =
        method === 'unit-bootstrap' ? 'unit' : method === 'cluster-bootstrap' ? 'cluster' : 'task-stratified';
      if (boot === null) return [Number.NaN, Number.NaN];
      return bootstrap(kind, level, units, w, tasks, boot.replicates, boot.seed, value);
    }
  }
}

/** The cohort filled at both extremes, with θ̄'s weights over each (present only when some unit is unresolved). */
interface Extremes {
  lo: Filled[];
  hi: Filled[];
  wLo: number[] | null;
  wHi: number[] | null;
}

function extremesOf(
  e: Obj,
  kind: string,
  units: readonly PlainUnit[],
  tasks: readonly string[],
  w: number[] | null,
): Extremes {
  const lo = fill(units, kind, 'min');
  const hi = fill(units, kind, 'max');
  return {
    lo,
    hi,
    wLo: kind === 'thetaBar' ? weights(e, tasks, lo) : w,
    wHi: kind === 'thetaBar' ? weights(e, tasks, hi) : w,
  };
}

/** Every requested interval on the resolved units; with unresolved units, the envelope over both fillings too. */
function intervalsOf(
  ids: readonly string[],
  kind: string,
  resolved: readonly Filled[],
  w: number[] | null,
  tasks: readonly string[],
  ext: Extremes | null,
  bootFor: (id: string) => XBoot | null,
): Map<string, XInterval> {
  const intervals = new Map<string, XInterval>();
  for (const id of ids) {
    const [lower, upper] = intervalX(id, kind, resolved, w, tasks, bootFor(id));
    let envelope: XInterval['envelope'] = null;
    if (ext !== null) {
      const a = intervalX(id, kind, ext.lo, ext.wLo, tasks, bootFor(id));
      const b = intervalX(id, kind, ext.hi, ext.wHi, tasks, bootFor(id));
      envelope = { lower: Math.min(a[0], b[0]), upper: Math.max(a[1], b[1]) };
    }
    intervals.set(id, { lower, upper, envelope });
  }
  return intervals;
}

/** The discordant pair (b, c) or (b′, c′) of the counts; null for a success rate. */
function pairOf(k: Record<string, number>): [number, number] | null {
  if (k['b'] !== undefined) return [k['b'], k['c']!];
  if (k['bPrime'] !== undefined) return [k['bPrime'], k['cPrime']!];
  return null;
}

/** Exact McNemar on the discordant pair, two-sided and greater (none for ρ, which has no direction). */
function testsOf(kind: string, pair: [number, number] | null): Record<string, number> {
  const tests: Record<string, number> = {};
  if (pair !== null && kind !== 'rho') {
    tests['mcnemar-exact/two-sided'] = mcnemarBig(pair[0], pair[1], 'two-sided');
    tests['mcnemar-exact/greater'] = mcnemarBig(pair[0], pair[1], 'greater');
  }
  return tests;
}

/** Identification bounds under the unresolved units: by the arms' observed-or-open successes, or over the fillings. */
function identificationOf(
  kind: string,
  units: readonly PlainUnit[],
  ext: Extremes,
  tasks: readonly string[],
): { lower: number; upper: number } {
  const N = units.length;
  const arm = (j: number): [number, number] => {
    let s = 0,
      u = 0;
    for (const unit of units) {
      if (unit.y[j] === 1) s++;
      else if (unit.y[j] === null) u++;
    }
    return [s / N, (s + u) / N];
  };
  const how = estimandKind(kind).identification;
  if (how === 'arm') {
    const [l, h] = arm(0);
    return { lower: l, upper: h };
  }
  if (how === 'arms') {
    const [l0, h0] = arm(0);
    const [l1, h1] = arm(1);
    return { lower: l0 - h1, upper: h0 - l1 };
  }
  return { lower: estimateOf(kind, ext.lo, ext.wLo, tasks), upper: estimateOf(kind, ext.hi, ext.wHi, tasks) };
}

/** θ̄'s per-task b′, c′, θ and weight on the resolved units. */
function perTaskOf(
  resolved: readonly Filled[],
  w: number[],
  tasks: readonly string[],
): NonNullable<XEstimand['perTask']> {
  return tasks.map((t, j) => {
    const mine = estimandKind('thetaBar').counts(resolved.filter((u) => u.task === t));
    const n = mine['n']!;
    return {
      task: t,
      n,
      bPrime: mine['bPrime']!,
      cPrime: mine['cPrime']!,
      theta: n === 0 ? null : (mine['bPrime']! - mine['cPrime']!) / n,
      weight: w[j]!,
    };
  });
}

/**
 * Recomputes one protocol estimand on its first wave's cohort; `ids` lists the interval ids to recompute.
 * Unavailable (no numbers) when a condition is unavailable, no paired unit is resolved, or a θ̄ weight has no units.
 */
export function recomputeEstimand(
  study: PlainStudy,
  e: Obj,
  excluded: Set<string>,
  ids: readonly string[],
  bootFor: (id: string) => XBoot | null,
): XEstimand {
  const kind = str(e['kind']);
  const conds = conditionsOf(e);
  const wave = study.firstWave(conds) ?? -1;
  // an estimand naming a task (a suite's per-task `<id>@<task>`) is taken on that task's units only
  const only = e['task'];
  const left = typeof only === 'string' ? new Set([...excluded, ...study.tasks.filter((t) => t !== only)]) : excluded;
  const cohort = study.cohort(conds, readoutOf(e), left, wave);
  const tasks = study.tasks.filter((t) => !left.has(t));
  const base: XEstimand = {
    id: str(e['id']),
    kind,
    conds,
    cohort,
    available: false,
    counts: {},
    estimate: 0,
    intervals: new Map(),
    tests: {},
    identification: null,
    perTask: null,
    pair: null,
  };
  const resolved = cohort.units
    .filter((u) => !u.y.includes(null))
    .map((u) => ({ task: u.task, seed: u.seed, y: u.y as Y[] }));
  if (cohort.unavailable.length > 0 || resolved.length === 0) return base;
  const w = kind === 'thetaBar' ? weights(e, tasks, resolved) : null;
  if (kind === 'thetaBar' && w === null) return base;
  const counts = estimandKind(kind).counts(resolved);
  const ext = cohort.unresolved > 0 ? extremesOf(e, kind, cohort.units, tasks, w) : null;
  const pair = pairOf(counts);
  return {
    ...base,
    available: true,
    counts,
    estimate: estimateOf(kind, resolved, w, tasks),
    intervals: intervalsOf(ids, kind, resolved, w, tasks, ext, bootFor),
    tests: testsOf(kind, pair),
    identification: ext === null ? null : identificationOf(kind, cohort.units, ext, tasks),
    perTask: kind === 'thetaBar' ? perTaskOf(resolved, w!, tasks) : null,
    pair,
  };
}

/** The estimands of the protocol (plain). */
export function protocolEstimands(protocol: Obj): Obj[] {
  return arr(protocol['estimands']).map(obj);
}
