/**
 * The cross-check's recomputation of the gates on memory reads, one function per gate kind (see src/adjudication
 * gates.ts for the registered definitions), dispatched from cross-check-gates.ts:
 *   sham-validity  the sham flips outcomes against its anchor and substitutes the registered fraction of reads
 *   read-canary    the canary's substitutions change outcomes against its anchor
 *   empty-read     empty reads at the predicted count, or at identical positions across the listed series
 *   clock          each condition's first query reads the anchor's clock, pair by pair
 *   candidate      … and the anchor's candidate count
 */
import { arr, num, obj, str, type Obj, type PlainRow } from './cross-check-model.js';
import {
  anchorChanges,
  installAt,
  installedRows,
  observed,
  unitKey,
  wavesOf,
  type GateCtx,
  type GateFn,
} from './cross-check-gate-rows.js';

export const shamValidity: GateFn = (g, ctx) => {
  const sham = str(g['sham']);
  const flips = anchorChanges(ctx, sham).changed;
  let readsTotal = 0,
    readsWithHistory = 0,
    substituted = 0,
    substitutedUnchanged = 0;
  for (const r of installedRows(ctx, sham)) {
    readsTotal += r.reads.total;
    readsWithHistory += r.reads.withHistory;
    substituted += r.reads.substituted;
    substitutedUnchanged += r.reads.substitutedUnchanged;
  }
  const frac = obj(g['substitutionFraction']);
  const denominator = str(frac['denominator']) === 'all-reads' ? readsTotal : readsWithHistory;
  const applied = substituted + substitutedUnchanged;
  const fraction = denominator === 0 ? null : applied / denominator;
  const passed =
    flips >= (num(g['minFlips']) ?? 1) &&
    fraction !== null &&
    fraction >= (num(frac['min']) ?? 1) &&
    (g['requireContentChange'] === false || substitutedUnchanged === 0);
  return {
    observed: observed({
      flips,
      readsTotal,
      readsWithHistory,
      substituted,
      substitutedUnchanged,
      applied,
      denominator,
      fraction,
    }),
    passed,
  };
};

export const readCanary: GateFn = (g, ctx) => {
  const canary = str(g['canary']);
  const { anchor, pairs, changed } = anchorChanges(ctx, canary);
  let readsWithHistory = 0,
    applied = 0;
  for (const r of installedRows(ctx, canary)) {
    readsWithHistory += r.reads.withHistory;
    applied += r.reads.substituted + r.reads.substitutedUnchanged;
  }
  return {
    observed: observed({ anchor, pairs, changed, readsWithHistory, applied }),
    passed: pairs > 0 && applied > 0 && changed >= (num(g['minChanged']) ?? 1),
  };
};

interface Series {
  id: string;
  rows: PlainRow[];
}

/** Each listed condition in each wave running it: its 'ok' rows on the competent tasks, all attempts. */
function emptyReadSeries({ study, excluded }: GateCtx, g: Obj): Series[] {
  const series: Series[] = [];
  for (const condition of arr(g['conditions']).map(str)) {
    for (const w of wavesOf(study, condition)) {
      series.push({
        id: `${condition}@w${w}`,
        rows: study.rows.filter(
          (r) => r.wave === w && r.condition === condition && r.status === 'ok' && !excluded.has(r.task),
        ),
      });
    }
  }
  return series;
}

/** Units of the first series that some other series also ran, and how many read empty at other positions there. */
function positionMismatches(series: readonly Series[]): { compared: number; mismatches: number } {
  const maps = series.map((s) => new Map(s.rows.map((r) => [unitKey(r), r.reads.emptyPositions.join(',')])));
  let compared = 0,
    mismatches = 0;
  for (const [k, pos] of maps[0] ?? new Map<string, string>()) {
    let seen = 0,
      differs = false;
    for (let j = 1; j < maps.length; j++) {
      const p = maps[j]!.get(k);
      if (p === undefined) continue;
      seen++;
      if (p !== pos) differs = true;
    }
    if (seen === 0) continue;
    compared++;
    if (differs) mismatches++;
  }
  return { compared, mismatches };
}

export const emptyRead: GateFn = (g, ctx) => {
  const series = emptyReadSeries(ctx, g);
  const emptyReads = series.map((s) => {
    let e = 0;
    for (const r of s.rows) e += r.reads.empty;
    return { condition: s.id, episodes: s.rows.length, empty: e };
  });
  if (str(g['rule']) === 'predicted-count') {
    const p = num(g['predicted']);
    return {
      observed: observed({ emptyReads }),
      passed: p !== undefined && emptyReads.every((e) => e.episodes > 0 && e.empty === p),
    };
  }
  const { compared, mismatches } = positionMismatches(series);
  return { observed: observed({ compared, mismatches, emptyReads }), passed: compared > 0 && mismatches === 0 };
};

/** The rows of one wave the first-query gates compare: 'ok', competent tasks, the checked attempts. */
function checkedRows({ study, excluded }: GateCtx, wave: number, condition: string, attempts: number[]): PlainRow[] {
  return study.rows.filter(
    (r) =>
      r.wave === wave &&
      r.condition === condition &&
      r.status === 'ok' &&
      !excluded.has(r.task) &&
      attempts.includes(r.attempt),
  );
}

/** One condition in one wave against the wave's anchor: the first query's field `at` (0 clock, 1 candidates). */
function firstQuerySeries(ctx: GateCtx, condition: string, w: { id: number; anchor: string }, at: 0 | 1): Obj {
  const attempts = installAt(ctx.study, condition) ?? ctx.study.registered;
  const anchorRows = new Map<string, PlainRow>();
  for (const r of checkedRows(ctx, w.id, w.anchor, attempts)) anchorRows.set(unitKey(r), r);
  let pairs = 0,
    compared = 0,
    mismatches = 0,
    noQuery = 0;
  for (const r of checkedRows(ctx, w.id, condition, attempts)) {
    const a = anchorRows.get(unitKey(r));
    if (a === undefined) continue;
    pairs++;
    const mine = r.reads.firstQuery,
      theirs = a.reads.firstQuery;
    if (mine === null && theirs === null) {
      noQuery++;
    } else {
      compared++;
      if (mine === null || theirs === null || mine[at] !== theirs[at]) mismatches++;
    }
  }
  return { condition: `${condition}@w${w.id}`, reference: w.anchor, pairs, compared, mismatches, noQuery };
}

function firstQuery(at: 0 | 1): GateFn {
  return (g, ctx) => {
    const conditions: Obj[] = [];
    for (const condition of arr(g['conditions']).map(str))
      for (const w of ctx.study.waves())
        if (w.conditions.includes(condition)) conditions.push(firstQuerySeries(ctx, condition, w, at));
    const passed = conditions.every((c) => (c['compared'] as number) > 0 && c['mismatches'] === 0);
    return { observed: observed({ conditions }), passed: passed && conditions.length > 0 };
  };
}

export const clock: GateFn = firstQuery(0);
export const candidate: GateFn = firstQuery(1);
