/**
 * The cross-check's recomputation of every estimand: counts by separate loops over the plain cohort,
 * point estimates, every interval by the independent arithmetic of cross-check-math.ts, the bootstrap
 * re-run through its own resampling loop (the same named PRNG, xoshiro128** v1 from src/core, and the
 * same registered seed and lane rule: 16-bit lanes, high half first, Lemire rejection, a fresh uint32
 * per stratum, strata in task order), identification bounds and the envelopes over extreme fillings.
 */
import { Prng } from '../core/index.js';
import {
  cpLower,
  cpUpper,
  mcnemarBig,
  newcombeInterval,
  tangoInterval,
  type7,
  wilsonClosed,
} from './cross-check-math.js';
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

type Y = 0 | 1;

function contribution(kind: string, y: readonly Y[]): number {
  if (kind === 'D' || kind === 'G') return y[0]! - y[1]!;
  if (kind === 'rho') return Math.abs(y[0]! - y[1]!);
  if (kind === 'theta' || kind === 'thetaBar') return (y[0]! ^ y[1]!) - (y[0]! ^ y[2]!);
  return y[0]!;
}

function conditionsOf(e: Obj): string[] {
  const k = str(e['kind']);
  if (k === 'D' || k === 'rho') return [str(e['reference']), str(e['intervention'])];
  if (k === 'G') return [str(e['oracle']), str(e['none'])];
  if (k === 'theta' || k === 'thetaBar') return [str(e['reference']), str(e['T']), str(e['S'])];
  return [str(e['condition'])];
}

interface Filled {
  task: string;
  seed: number;
  y: Y[];
}

function fill(units: readonly PlainUnit[], kind: string, dir: 'min' | 'max'): Filled[] {
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
      const v = contribution(kind, y);
      if (best === null || (dir === 'max' && v > bestV) || (dir === 'min' && v < bestV)) {
        best = y;
        bestV = v;
      }
    }
    out.push({ task: u.task, seed: u.seed, y: best as Y[] });
  }
  return out;
}

function counts(kind: string, units: readonly Filled[]): Record<string, number> {
  let b = 0,
    c = 0,
    bp = 0,
    cp = 0,
    ft = 0,
    fs = 0,
    s = 0;
  for (const u of units) {
    const y = u.y;
    if (kind === 'D' || kind === 'G' || kind === 'rho') {
      if (y[0] === 1 && y[1] === 0) b++;
      if (y[0] === 0 && y[1] === 1) c++;
    } else if (kind === 'theta' || kind === 'thetaBar') {
      const t = y[0] !== y[1] ? 1 : 0;
      const sh = y[0] !== y[2] ? 1 : 0;
      ft += t;
      fs += sh;
      if (t === 1 && sh === 0) bp++;
      if (t === 0 && sh === 1) cp++;
    } else if (y[0] === 1) s++;
  }
  const n = units.length;
  if (kind === 'D' || kind === 'G' || kind === 'rho') return { n, b, c };
  if (kind === 'theta' || kind === 'thetaBar') return { n, bPrime: bp, cPrime: cp, flipsT: ft, flipsS: fs };
  return { n, successes: s };
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

function estimateOf(kind: string, units: readonly Filled[], w: number[] | null, tasks: readonly string[]): number {
  if (kind === 'thetaBar') {
    let s = 0;
    tasks.forEach((t, k) => {
      if ((w as number[])[k]! <= 0) return;
      const mine = units.filter((u) => u.task === t);
      let sum = 0;
      for (const u of mine) sum += contribution(kind, u.y);
      s += (w as number[])[k]! * (sum / mine.length);
    });
    return s;
  }
  let sum = 0;
  for (const u of units) sum += contribution(kind, u.y);
  return sum / units.length;
}

interface Stratum {
  sums: number[];
  sizes: number[];
  weight: number;
}

function strata(
  kind: string,
  level: string,
  units: readonly Filled[],
  w: number[] | null,
  tasks: readonly string[],
): Stratum[] {
  const byTask = kind === 'thetaBar';
  const blocksOf = (list: readonly Filled[]): { sums: number[]; sizes: number[] } => {
    if (level !== 'cluster') return { sums: list.map((u) => contribution(kind, u.y)), sizes: list.map(() => 1) };
    const order: string[] = [];
    const acc = new Map<string, { s: number; z: number }>();
    for (const u of list) {
      const key = `${u.task}\u001f${u.seed}`;
      if (!acc.has(key)) {
        acc.set(key, { s: 0, z: 0 });
        order.push(key);
      }
      const a = acc.get(key)!;
      a.s += contribution(kind, u.y);
      a.z += 1;
    }
    return { sums: order.map((k) => acc.get(k)!.s), sizes: order.map((k) => acc.get(k)!.z) };
  };
  if (level === 'unit' || (level === 'cluster' && !byTask)) return [{ ...blocksOf(units), weight: 1 }];
  const out: Stratum[] = [];
  tasks.forEach((t, k) => {
    const mine = units.filter((u) => u.task === t);
    const weight = byTask ? (w as number[])[k]! : mine.length / units.length;
    if (mine.length > 0 && weight > 0) out.push({ ...blocksOf(mine), weight });
  });
  return out;
}

function resampleOnce(prng: Prng, s: Stratum): number {
  const m = s.sums.length;
  let sum = 0,
    size = 0,
    drawn = 0;
  if (m > 0x10000) {
    for (let j = 0; j < m; j++) {
      const i = prng.nextInt(m);
      sum += s.sums[i]!;
      size += s.sizes[i]!;
    }
    return sum / size;
  }
  const reject = (0x10000 - m) % m;
  while (drawn < m) {
    const x = prng.nextUint32();
    for (const lane of [Math.floor(x / 0x10000), x % 0x10000]) {
      const prod = lane * m;
      if (prod % 0x10000 >= reject) {
        const i = Math.floor(prod / 0x10000);
        sum += s.sums[i]!;
        size += s.sizes[i]!;
        drawn++;
        if (drawn === m) break;
      }
    }
  }
  return sum / size;
}

function bootstrap(
  kind: string,
  level: string,
  units: readonly Filled[],
  w: number[] | null,
  tasks: readonly string[],
  replicates: number,
  seed: number | string,
  confidence: number,
): [number, number] {
  const st = strata(kind, level, units, w, tasks);
  const prng = new Prng(seed);
  const reps = new Float64Array(replicates);
  for (let r = 0; r < replicates; r++) {
    let stat = 0;
    for (const s of st) stat += s.weight * resampleOnce(prng, s);
    reps[r] = stat;
  }
  reps.sort();
  return [type7(reps, (1 - confidence) / 2), type7(reps, (1 + confidence) / 2)];
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
      const f = contribution('theta', u.y);
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
  const k = counts(kind, units);
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

/** Recomputes one protocol estimand; `ids` lists the interval ids to recompute. */
export function recomputeEstimand(
  study: PlainStudy,
  e: Obj,
  excluded: Set<string>,
  ids: readonly string[],
  bootFor: (id: string) => XBoot | null,
): XEstimand {
  const kind = str(e['kind']);
  const conds = conditionsOf(e);
  const readout = str(e['readout']) || (kind === 'G' ? 'decision' : 'success');
  const wave = study.firstWave(conds) ?? -1;
  const cohort = study.cohort(conds, readout, excluded, wave);
  const tasks = study.tasks.filter((t) => !excluded.has(t));
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
  const k = counts(kind, resolved);
  const unresolved = cohort.unresolved > 0;
  const lo = unresolved ? fill(cohort.units, kind, 'min') : null;
  const hi = unresolved ? fill(cohort.units, kind, 'max') : null;
  const wLo = lo && kind === 'thetaBar' ? weights(e, tasks, lo) : w;
  const wHi = hi && kind === 'thetaBar' ? weights(e, tasks, hi) : w;
  const intervals = new Map<string, XInterval>();
  for (const id of ids) {
    const [lower, upper] = intervalX(id, kind, resolved, w, tasks, bootFor(id));
    let envelope: XInterval['envelope'] = null;
    if (lo !== null && hi !== null) {
      const a = intervalX(id, kind, lo, wLo, tasks, bootFor(id));
      const b = intervalX(id, kind, hi, wHi, tasks, bootFor(id));
      envelope = { lower: Math.min(a[0], b[0]), upper: Math.max(a[1], b[1]) };
    }
    intervals.set(id, { lower, upper, envelope });
  }
  const pair: [number, number] | null =
    k['b'] !== undefined ? [k['b'], k['c']!] : k['bPrime'] !== undefined ? [k['bPrime'], k['cPrime']!] : null;
  const tests: Record<string, number> = {};
  if (pair !== null && kind !== 'rho') {
    tests['mcnemar-exact/two-sided'] = mcnemarBig(pair[0], pair[1], 'two-sided');
    tests['mcnemar-exact/greater'] = mcnemarBig(pair[0], pair[1], 'greater');
  }
  let identification: XEstimand['identification'] = null;
  if (unresolved) {
    const N = cohort.units.length;
    const arm = (j: number): [number, number] => {
      let s = 0,
        u = 0;
      for (const unit of cohort.units) {
        if (unit.y[j] === 1) s++;
        else if (unit.y[j] === null) u++;
      }
      return [s / N, (s + u) / N];
    };
    if (kind === 'successRate') {
      const [l, h] = arm(0);
      identification = { lower: l, upper: h };
    } else if (kind === 'D' || kind === 'G') {
      const [l0, h0] = arm(0);
      const [l1, h1] = arm(1);
      identification = { lower: l0 - h1, upper: h0 - l1 };
    } else {
      identification = { lower: estimateOf(kind, lo!, wLo, tasks), upper: estimateOf(kind, hi!, wHi, tasks) };
    }
  }
  let perTask: XEstimand['perTask'] = null;
  if (kind === 'thetaBar') {
    perTask = tasks.map((t, j) => {
      const mine = counts(
        kind,
        resolved.filter((u) => u.task === t),
      );
      const n = mine['n']!;
      return {
        task: t,
        n,
        bPrime: mine['bPrime']!,
        cPrime: mine['cPrime']!,
        theta: n === 0 ? null : (mine['bPrime']! - mine['cPrime']!) / n,
        weight: w![j]!,
      };
    });
  }
  return {
    ...base,
    available: true,
    counts: k,
    estimate: estimateOf(kind, resolved, w, tasks),
    intervals,
    tests,
    identification,
    perTask,
    pair,
  };
}

/** The estimands of the protocol (plain). */
export function protocolEstimands(protocol: Obj): Obj[] {
  return arr(protocol['estimands']).map(obj);
}
