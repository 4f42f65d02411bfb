/**
 * The cross-check's recomputation of the gate observations and the per-condition summaries, with its
 * own loops over the plain rows (see gates.ts / conditions.ts for the registered definitions).
 */
import { cpLower, cpUpper, wilsonClosed } from './cross-check-math.js';
import { arr, num, obj, str, type Obj, type PlainRow, type PlainStudy } from './cross-check-model.js';

const SUBSTITUTING = ['U', 'S_pi', 'T_mu', 'S', 'T'];

function wavesOf(study: PlainStudy, condition: string): number[] {
  return study
    .waves()
    .filter((w) => w.conditions.includes(condition))
    .map((w) => w.id);
}

function ok(study: PlainStudy, condition: string, excluded: Set<string>): PlainRow[] {
  const waves = wavesOf(study, condition);
  return study.rows.filter(
    (r) => r.condition === condition && waves.includes(r.wave) && r.status === 'ok' && !excluded.has(r.task),
  );
}

/** The condition's registered installation attempt, as a list; undefined when it registers none. */
function installAt(study: PlainStudy, condition: string): number[] | undefined {
  for (const c of arr(study.protocol['conditions']).map(obj)) {
    if (str(c['id']) !== condition) continue;
    const a = num(obj(c['installAt'])['attempt']);
    return a === undefined ? undefined : [a];
  }
  return undefined;
}

function installAttempt(study: PlainStudy, condition: string): number {
  for (const c of arr(study.protocol['conditions']).map(obj)) {
    if (str(c['id']) === condition) return num(obj(c['installAt'])['attempt']) ?? 1;
  }
  return 1;
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

function competenceTasks(
  study: PlainStudy,
  g: Obj,
): { task: string; successes: number; n: number; rate: number | null; wilsonLower: number | null; passed: boolean }[] {
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

/** Expected `observed` of every gate, and whether it passes, keyed by gate id. */
export interface GateX {
  gate: string;
  observed: Obj;
  passed: boolean;
}

const o = (x: unknown): Obj => x as Obj;

export function expectedGates(study: PlainStudy, excluded: Set<string>): GateX[] {
  return arr(study.protocol['gates'])
    .map(obj)
    .map((g): GateX => {
      const id = str(g['id']);
      const kind = str(g['kind']);
      if (kind === 'competence') {
        const tasks = competenceTasks(study, g);
        return { gate: id, observed: o({ tasks }), passed: tasks.every((t) => t.passed) };
      }
      if (kind === 'path') {
        const reads = arr(g['reads'])
          .map(str)
          .map((condition) => {
            const rows = ok(study, condition, excluded);
            let withReads = 0;
            for (const r of rows) if (r.reads.total > 0) withReads++;
            return { condition, rows: rows.length, withReads };
          });
        const emptyReads = arr(g['emptyReads'])
          .map(str)
          .map((condition) => {
            const from = installAttempt(study, condition);
            const rows = ok(study, condition, excluded).filter((r) => r.attempt >= from);
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
        return { gate: id, observed: o({ reads, emptyReads }), passed };
      }
      if (kind === 'replicate') {
        const c = str(g['condition']),
          ref = str(g['reference']);
        const wave = study.firstWave([c, ref]);
        const refRows = new Map<string, PlainRow>();
        for (const r of study.rows)
          if (r.wave === wave && r.condition === ref && !excluded.has(r.task))
            refRows.set(`${r.task}|${r.seed}|${r.attempt}`, r);
        let pairs = 0,
          changed = 0,
          digestPairs = 0,
          digestMismatches = 0;
        for (const r of study.rows) {
          if (r.wave !== wave || r.condition !== c || excluded.has(r.task)) continue;
          const a = refRows.get(`${r.task}|${r.seed}|${r.attempt}`);
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
        // per-condition execution noise: C executes its own draw, so its action digests need not match the reference's
        const noisy =
          obj(study.protocol['simulator'])['executionNoise'] !== undefined &&
          obj(obj(study.protocol['simulator'])['executionNoise'])['scope'] === 'per-condition';
        return {
          gate: id,
          observed: o({ pairs, changed, digestPairs, digestMismatches }),
          passed: pairs > 0 && changed <= (num(g['maxChanged']) ?? 0) && (noisy || digestMismatches === 0),
        };
      }
      if (kind === 'survival') {
        const conditions = arr(g['conditions'])
          .map(str)
          .map((condition) => {
            const rows = ok(study, condition, excluded).filter((r) => study.registered.includes(r.attempt));
            let covered = 0;
            for (const r of rows) if (r.reads.covered === true) covered++;
            return {
              condition,
              units: rows.length,
              covered,
              coverage: rows.length === 0 ? null : covered / rows.length,
            };
          });
        const min = num(g['minCoverage']) ?? 1;
        return {
          gate: id,
          observed: o({ conditions }),
          passed: conditions.every((x) => x.coverage !== null && x.coverage >= min),
        };
      }
      if (kind === 'sham-validity') {
        const sham = str(g['sham']);
        const wave = study.waves().find((w) => w.conditions.includes(sham));
        const anchor = wave?.anchor ?? sham;
        let flips = 0;
        if (wave !== undefined) {
          const co = study.cohort([anchor, sham], 'success', excluded, wave.id);
          if (co.unavailable.length === 0)
            for (const u of co.units) if (u.y[0] !== null && u.y[1] !== null && u.y[0] !== u.y[1]) flips++;
        }
        let readsTotal = 0,
          readsWithHistory = 0,
          substituted = 0,
          substitutedUnchanged = 0;
        const from = installAttempt(study, sham);
        for (const r of ok(study, sham, excluded)) {
          if (r.attempt < from) continue;
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
          gate: id,
          observed: o({
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
      }
      if (kind === 'read-canary') {
        const canary = str(g['canary']);
        const wave = study.waves().find((w) => w.conditions.includes(canary));
        const anchor = wave?.anchor ?? canary;
        let pairs = 0,
          changed = 0;
        if (wave !== undefined) {
          const co = study.cohort([anchor, canary], 'success', excluded, wave.id);
          if (co.unavailable.length === 0) {
            for (const u of co.units) {
              if (u.y[0] === null || u.y[1] === null) continue;
              pairs++;
              if (u.y[0] !== u.y[1]) changed++;
            }
          }
        }
        let readsWithHistory = 0,
          applied = 0;
        const from = installAttempt(study, canary);
        for (const r of ok(study, canary, excluded)) {
          if (r.attempt < from) continue;
          readsWithHistory += r.reads.withHistory;
          applied += r.reads.substituted + r.reads.substitutedUnchanged;
        }
        return {
          gate: id,
          observed: o({ anchor, pairs, changed, readsWithHistory, applied }),
          passed: pairs > 0 && applied > 0 && changed >= (num(g['minChanged']) ?? 1),
        };
      }
      if (kind === 'empty-read') {
        const series: { id: string; rows: PlainRow[] }[] = [];
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
        const emptyReads = series.map((s) => {
          let e = 0;
          for (const r of s.rows) e += r.reads.empty;
          return { condition: s.id, episodes: s.rows.length, empty: e };
        });
        if (str(g['rule']) === 'predicted-count') {
          const p = num(g['predicted']);
          return {
            gate: id,
            observed: o({ emptyReads }),
            passed: p !== undefined && emptyReads.every((e) => e.episodes > 0 && e.empty === p),
          };
        }
        const maps = series.map(
          (s) => new Map(s.rows.map((r) => [`${r.task}|${r.seed}|${r.attempt}`, r.reads.emptyPositions.join(',')])),
        );
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
        return {
          gate: id,
          observed: o({ compared, mismatches, emptyReads }),
          passed: compared > 0 && mismatches === 0,
        };
      }
      if (kind === 'clock' || kind === 'candidate') {
        const at = kind === 'clock' ? 0 : 1;
        const conditions: Obj[] = [];
        let passed = true;
        for (const condition of arr(g['conditions']).map(str)) {
          const attempts = installAt(study, condition) ?? study.registered;
          for (const w of study.waves()) {
            if (!w.conditions.includes(condition)) continue;
            const anchorRows = new Map<string, PlainRow>();
            for (const r of study.rows) {
              if (
                r.wave === w.id &&
                r.condition === w.anchor &&
                r.status === 'ok' &&
                !excluded.has(r.task) &&
                attempts.includes(r.attempt)
              )
                anchorRows.set(`${r.task}|${r.seed}|${r.attempt}`, r);
            }
            let pairs = 0,
              compared = 0,
              mismatches = 0,
              noQuery = 0;
            for (const r of study.rows) {
              if (
                r.wave !== w.id ||
                r.condition !== condition ||
                r.status !== 'ok' ||
                excluded.has(r.task) ||
                !attempts.includes(r.attempt)
              )
                continue;
              const a = anchorRows.get(`${r.task}|${r.seed}|${r.attempt}`);
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
            if (compared === 0 || mismatches > 0) passed = false;
            conditions.push({
              condition: `${condition}@w${w.id}`,
              reference: w.anchor,
              pairs,
              compared,
              mismatches,
              noQuery,
            });
          }
        }
        return { gate: id, observed: o({ conditions }), passed: passed && conditions.length > 0 };
      }
      return { gate: id, observed: {}, passed: false };
    });
}

export function expectedConditions(study: PlainStudy, excluded: Set<string>): Obj[] {
  const out: Obj[] = [];
  for (const w of study.waves()) {
    for (const condition of w.conditions) {
      const rows = study.rows.filter(
        (r) =>
          r.wave === w.id && r.condition === condition && study.registered.includes(r.attempt) && !excluded.has(r.task),
      );
      const count = (s: string): number => rows.filter((r) => r.status === s).length;
      let n = 0,
        s = 0;
      for (const r of rows) {
        const y = study.outcome(r, 'success');
        if (y === null) continue;
        n++;
        s += y;
      }
      const unavailable = count('unavailable');
      let success: Obj | null = null;
      if (n > 0 && unavailable === 0) {
        const [wl, wu] = wilsonClosed(s, n, 0.95);
        success = {
          successes: s,
          n,
          rate: s / n,
          wilson95: { lower: wl, upper: wu },
          cp95: { lower: cpLower(s, n, 0.025), upper: cpUpper(s, n, 0.025) },
        };
      }
      let vsAnchor: Obj | null = null;
      if (condition !== w.anchor) {
        const co = study.cohort([w.anchor, condition], 'success', excluded, w.id);
        if (co.unavailable.length === 0) {
          let b = 0,
            c = 0,
            m = 0;
          for (const u of co.units) {
            if (u.y[0] === null || u.y[1] === null) continue;
            m++;
            if (u.y[0] === 1 && u.y[1] === 0) b++;
            if (u.y[0] === 0 && u.y[1] === 1) c++;
          }
          if (m > 0) {
            vsAnchor = {
              n: m,
              b,
              c,
              D: (b - c) / m,
              rho: (b + c) / m,
              rhoCp95: { lower: cpLower(b + c, m, 0.025), upper: cpUpper(b + c, m, 0.025) },
              rhoCpOneSided95: { lower: cpLower(b + c, m, 0.05), upper: cpUpper(b + c, m, 0.05) },
            };
          }
        }
      }
      let coverage: Obj | null = null;
      if (SUBSTITUTING.includes(study.kindOf(condition))) {
        const okRows = rows.filter((r) => r.status === 'ok');
        let covered = 0;
        for (const r of okRows) if (r.reads.covered === true) covered++;
        coverage = okRows.length === 0 ? null : { covered, units: okRows.length, rate: covered / okRows.length };
      }
      out.push({
        id: `${condition}@w${w.id}`,
        rows: { total: rows.length, ok: count('ok'), failed: count('failed'), removed: count('removed'), unavailable },
        success,
        vsAnchor,
        coverage,
      });
    }
  }
  return out;
}
