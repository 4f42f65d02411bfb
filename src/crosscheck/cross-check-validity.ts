/**
 * The cross-check's recomputation of the two validity checks every protocol runs (protocol `validity`; see
 * src/adjudication removal-check.ts and blocked-reads-check.ts for the definitions), with its own loops over the
 * plain rows and its own exact arithmetic (BigInt Fisher, BigInt McNemar):
 *   informative-removal  per estimand with removed units: each condition of its wave, its readout on the removed
 *                        against the kept units, Fisher two-sided; Holm step-down over that estimand's tables,
 *                        some adjusted p < α → the estimand fails;
 *   blocked-reads        some T / S_pi / T_mu condition changes outcomes against its wave anchor (McNemar two-sided
 *                        p < α) while a kind-N condition does not (p ≥ α) → that N condition fails.
 * Each result also says which estimands or conditions it withholds, so the verdict words can be checked.
 */
import { fisherBig, holmStepDown, mcnemarBig } from './cross-check-math.js';
import { arr, num, obj, str, type Obj, type PlainStudy } from './cross-check-model.js';
import { conditionsOf, readoutOf } from './cross-check-estimand-kinds.js';

export interface ValidityX {
  gate: string;
  observed: Obj;
  passed: boolean;
  /** Estimand ids (informative-removal) or condition ids (blocked-reads) the failure is attributed to. */
  failing: string[];
  /** True when registered to withhold (else: qualify). */
  withhold: boolean;
}

const o = (x: unknown): Obj => x as Obj;

function settings(study: PlainStudy, which: string): { alpha: number; withhold: boolean } {
  const v = obj(obj(study.protocol['validity'])[which]);
  const word = str(v[which === 'informativeRemoval' ? 'onInformative' : 'onFail']);
  return { alpha: num(v['alpha']) ?? 0.05, withhold: word !== 'qualify' };
}

/** The units of one estimand's cohort: its wave, its readout, the removed and the kept unit keys. */
interface RemovalCohort {
  estimand: string;
  wave: number;
  readout: string;
  removedKeys: Set<string>;
  keptKeys: Set<string>;
}

/** One condition of the wave: its readout on the removed against the kept units, Fisher two-sided; null if one is empty. */
function removalTable(
  study: PlainStudy,
  excluded: Set<string>,
  k: RemovalCohort,
  y: string,
): { t: Obj; p: number } | null {
  let ks = 0,
    kn = 0,
    rs = 0,
    rn = 0;
  for (const r of study.rows) {
    if (r.wave !== k.wave || r.condition !== y || excluded.has(r.task) || !study.registered.includes(r.attempt))
      continue;
    const v = study.outcome(r, k.readout);
    if (v === null) continue;
    const key = `${r.task}|${r.seed}|${r.attempt}`;
    if (k.removedKeys.has(key)) {
      rn++;
      rs += v;
    } else if (k.keptKeys.has(key)) {
      kn++;
      ks += v;
    }
  }
  if (kn === 0 || rn === 0) return null;
  const p = fisherBig(ks, kn - ks, rs, rn - rs);
  const { estimand, wave } = k;
  return {
    t: o({ estimand, wave, outcome: y, kept: { successes: ks, n: kn }, removed: { successes: rs, n: rn }, p }),
    p,
  };
}

/** The estimand's cohort when some of its paired units were removed; null when none was (or no wave runs it). */
function removalCohort(study: PlainStudy, excluded: Set<string>, e: Obj): RemovalCohort | null {
  const conds = conditionsOf(e);
  const readout = readoutOf(e);
  const wave = study.firstWave(conds);
  if (wave === null) return null;
  const only = e['task'];
  const left = typeof only === 'string' ? new Set([...excluded, ...study.tasks.filter((t) => t !== only)]) : excluded;
  const co = study.cohort(conds, readout, left, wave);
  if (co.removedKeys.length === 0) return null;
  const removedKeys = new Set(co.removedKeys);
  const keptKeys = new Set(co.units.map((u) => `${u.task}|${u.seed}|${u.attempt}`));
  return { estimand: str(e['id']), wave, readout, removedKeys, keptKeys };
}

export function informativeRemovalX(study: PlainStudy, excluded: Set<string>): ValidityX {
  const { alpha, withhold } = settings(study, 'informativeRemoval');
  const removedCounts: Obj[] = [];
  const tables: Obj[] = [];
  const failing: string[] = [];
  for (const e of arr(study.protocol['estimands']).map(obj)) {
    const k = removalCohort(study, excluded, e);
    if (k === null) continue;
    const { estimand: id, wave } = k;
    removedCounts.push(o({ estimand: id, wave, removed: k.removedKeys.size, kept: k.keptKeys.size }));
    const waveConditions = study.waves().find((w) => w.id === wave)?.conditions ?? [];
    const mine = waveConditions
      .map((y) => removalTable(study, excluded, k, y))
      .filter((m): m is { t: Obj; p: number } => m !== null);
    // the estimand's tables are one family: Holm step-down, the estimand fails when some adjusted p < α
    const adjusted = holmStepDown(mine.map((m) => m.p));
    mine.forEach((m, i) => {
      const pAdjusted = adjusted[i] ?? 1;
      if (pAdjusted < alpha && !failing.includes(id)) failing.push(id);
      tables.push(o({ ...m.t, pAdjusted }));
    });
  }
  return {
    gate: 'informative-removal',
    observed: o({ removed: removedCounts, tables }),
    passed: failing.length === 0,
    failing,
    withhold,
  };
}

interface ContrastX {
  condition: string;
  wave: number;
  n: number;
  b: number;
  c: number;
  p: number;
}

function contrastX(study: PlainStudy, excluded: Set<string>, x: string): ContrastX | null {
  const w = study.waves().find((v) => v.conditions.includes(x));
  if (w === undefined || w.anchor === x) return null;
  const co = study.cohort([w.anchor, x], 'success', excluded, w.id);
  if (co.unavailable.length > 0) return null;
  let n = 0,
    b = 0,
    c = 0;
  for (const u of co.units) {
    if (u.y[0] === null || u.y[1] === null) continue;
    n++;
    if (u.y[0] === 1 && u.y[1] === 0) b++;
    if (u.y[0] === 0 && u.y[1] === 1) c++;
  }
  return { condition: x, wave: w.id, n, b, c, p: mcnemarBig(b, c, 'two-sided') };
}

/** null when the protocol has no kind-N condition (the producer then lists no such gate). */
export function blockedReadsX(study: PlainStudy, excluded: Set<string>): ValidityX | null {
  const ids = arr(study.protocol['conditions']).map((c) => str(obj(c)['id']));
  const blocks = ids.filter((id) => study.kindOf(id) === 'N');
  if (blocks.length === 0) return null;
  const { alpha, withhold } = settings(study, 'blockedReads');
  const content = ids
    .filter((id) => ['T', 'S_pi', 'T_mu'].includes(study.kindOf(id)))
    .map((id) => contrastX(study, excluded, id))
    .filter((k): k is ContrastX => k !== null);
  const blocking = blocks.map((id) => contrastX(study, excluded, id)).filter((k): k is ContrastX => k !== null);
  const shown = content.some((k) => k.p < alpha);
  const failing = shown ? blocking.filter((k) => k.p >= alpha).map((k) => k.condition) : [];
  return {
    gate: 'blocked-reads',
    observed: o({ content, blocking }),
    passed: failing.length === 0,
    failing,
    withhold,
  };
}
