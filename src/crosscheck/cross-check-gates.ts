/**
 * The cross-check's recomputation of the gate observations, one function per gate kind with its own loops
 * over the plain rows (see src/adjudication gates.ts for the registered definitions), and the dispatch table
 * `expectedGates` reads them through. The gates on memory reads (sham-validity, read-canary, empty-read,
 * clock, candidate) are in cross-check-read-gates.ts; the per-condition summaries in cross-check-conditions.ts.
 */
import { wilsonClosed } from './cross-check-math.js';
import { arr, num, obj, str, type Obj, type PlainRow, type PlainStudy } from './cross-check-model.js';
import {
  installedRows,
  observed,
  okRows,
  unitKey,
  type GateCtx,
  type GateFn,
  type GateX,
} from './cross-check-gate-rows.js';
import { candidate, clock, emptyRead, readCanary, shamValidity } from './cross-check-read-gates.js';

export type { GateX } from './cross-check-gate-rows.js';

interface CompetenceTask {
  task: string;
  successes: number;
  n: number;
  rate: number | null;
  wilsonLower: number | null;
  passed: boolean;
}

/** Each task's success on the gate's condition in its first wave, registered attempts (computed on all tasks). */
function competenceTasks(study: PlainStudy, g: Obj): CompetenceTask[] {
  const cond = str(g['condition']);
  const wave = study.firstWave([cond]);
  const level = num(g['level']) ?? 0.95;
  return study.tasks.map((task) => {
    let n = 0,
      s = 0;
    for (const r of study.rows) {
      if (r.wave !== wave || r.condition !== cond || r.task !== task || !study.registered.includes(r.attempt)) continue;
      const y = study.outcome(r, 'success');
      if (y === null) continue;
      n++;
      s += y;
    }
    const wl = n === 0 ? null : wilsonClosed(s, n, level)[0];
    const rate = n === 0 ? null : s / n;
    const minS = num(g['minSuccess']);
    const floor = num(g['wilsonLowerAbove']);
    const passed =
      n > 0 && (minS === undefined || (rate as number) >= minS) && (floor === undefined || (wl as number) > floor);
    return { task, successes: s, n, rate, wilsonLower: wl, passed };
  });
}

/** Tasks failing each hard competence gate with onFail 'exclude' (computed on all tasks). */
export function competenceFailures(study: PlainStudy): Set<string> {
  const out = new Set<string>();
  for (const g of arr(study.protocol['gates']).map(obj)) {
    if (str(g['kind']) !== 'competence' || g['hard'] !== true || str(g['onFail']) !== 'exclude') continue;
    for (const t of competenceTasks(study, g)) if (!t.passed) out.add(t.task);
  }
  return out;
}

const competence: GateFn = (g, { study }) => {
  const tasks = competenceTasks(study, g);
  return { observed: observed({ tasks }), passed: tasks.every((t) => t.passed) };
};

/** Every 'ok' row of each `reads` condition reads memory; every installed row of each `emptyReads` one reads empty. */
const path: GateFn = (g, ctx) => {
  const reads = arr(g['reads'])
    .map(str)
    .map((condition) => {
      const rows = okRows(ctx, condition);
      let withReads = 0;
      for (const r of rows) if (r.reads.total > 0) withReads++;
      return { condition, rows: rows.length, withReads };
    });
  const emptyReads = arr(g['emptyReads'])
    .map(str)
    .map((condition) => {
      const rows = installedRows(ctx, condition);
      let allEmpty = 0,
        total = 0,
        empty = 0;
      for (const r of rows) {
        if (r.reads.total > 0 && r.reads.empty === r.reads.total) allEmpty++;
        total += r.reads.total;
        empty += r.reads.empty;
      }
      return { condition, rows: rows.length, allEmpty, reads: total, empty };
    });
  const passed =
    reads.every((r) => r.rows > 0 && r.withReads === r.rows) &&
    emptyReads.every((r) => r.rows > 0 && r.allEmpty === r.rows);
  return { observed: observed({ reads, emptyReads }), passed };
};

/** Per-condition execution noise: C executes its own draw, so its action digests need not match the reference's. */
function perConditionNoise(study: PlainStudy): boolean {
  const simulator = obj(study.protocol['simulator']);
  return simulator['executionNoise'] !== undefined && obj(simulator['executionNoise'])['scope'] === 'per-condition';
}

/** The condition replicates its reference in their first shared wave: outcomes (registered attempts) and digests. */
const replicate: GateFn = (g, { study, excluded }) => {
  const c = str(g['condition']),
    ref = str(g['reference']);
  const wave = study.firstWave([c, ref]);
  const refRows = new Map<string, PlainRow>();
  for (const r of study.rows)
    if (r.wave === wave && r.condition === ref && !excluded.has(r.task)) refRows.set(unitKey(r), r);
  let pairs = 0,
    changed = 0,
    digestPairs = 0,
    digestMismatches = 0;
  for (const r of study.rows) {
    if (r.wave !== wave || r.condition !== c || excluded.has(r.task)) continue;
    const a = refRows.get(unitKey(r));
    if (a === undefined || a.status !== 'ok' || r.status !== 'ok') continue;
    digestPairs++;
    if (a.actionDigest !== r.actionDigest) digestMismatches++;
    if (!study.registered.includes(r.attempt)) continue;
    const ya = study.outcome(a, 'success'),
      yc = study.outcome(r, 'success');
    if (ya === null || yc === null) continue;
    pairs++;
    if (ya !== yc) changed++;
  }
  return {
    observed: observed({ pairs, changed, digestPairs, digestMismatches }),
    passed: pairs > 0 && changed <= (num(g['maxChanged']) ?? 0) && (perConditionNoise(study) || digestMismatches === 0),
  };
};

/** The share of each condition's registered 'ok' rows whose reads the intervention covered. */
const survival: GateFn = (g, ctx) => {
  const conditions = arr(g['conditions'])
    .map(str)
    .map((condition) => {
      const rows = okRows(ctx, condition).filter((r) => ctx.study.registered.includes(r.attempt));
      let covered = 0;
      for (const r of rows) if (r.reads.covered === true) covered++;
      return { condition, units: rows.length, covered, coverage: rows.length === 0 ? null : covered / rows.length };
    });
  const min = num(g['minCoverage']) ?? 1;
  return {
    observed: observed({ conditions }),
    passed: conditions.every((x) => x.coverage !== null && x.coverage >= min),
  };
};

/** One recomputation per registered gate kind; a kind not listed here observes nothing and fails. */
const GATES: Readonly<Record<string, GateFn>> = {
  competence,
  path,
  replicate,
  survival,
  'sham-validity': shamValidity,
  'read-canary': readCanary,
  'empty-read': emptyRead,
  clock,
  candidate,
};

/** The gate kinds the cross-check recomputes. */
export const GATE_KINDS_X: readonly string[] = Object.keys(GATES);

/** Expected `observed` of every registered gate, and whether it passes, in protocol order. */
export function expectedGates(study: PlainStudy, excluded: Set<string>): GateX[] {
  const ctx: GateCtx = { study, excluded };
  return arr(study.protocol['gates'])
    .map(obj)
    .map((g): GateX => {
      const recompute = Object.hasOwn(GATES, str(g['kind'])) ? GATES[str(g['kind'])] : undefined;
      return { gate: str(g['id']), ...(recompute?.(g, ctx) ?? { observed: {}, passed: false }) };
    });
}
