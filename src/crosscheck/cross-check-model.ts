/**
 * The cross-check's own reading of the sealed inputs: rows/rows.jsonl through the row schema of src/evidence/records
 * (the contract every consumer reads rows by), protocol.json as a plain JSON value (no src/protocol or src/stats
 * code: the frozen protocol's bytes, read with its own accessors), and its own pairing of rows into
 * cohorts by (task, seed, attempt) within one wave. The rules are the documented ones (joint-cohort.ts),
 * implemented again with separate loops: registered attempts only; a 'removed' row removes the unit
 * (counted by failure code); a 'failed' row or an unobservable readout leaves the unit unresolved; any
 * 'unavailable' row makes the condition unavailable; units ordered by task (envs order), seed, attempt.
 */

import { EpisodeRowSchema, parseRecordText, UNIT_FILES } from '../evidence/index.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Obj = { [k: string]: Json };

export interface PlainReads {
  total: number;
  empty: number;
  emptyPositions: number[];
  withHistory: number;
  substituted: number;
  substitutedUnchanged: number;
  covered: boolean | null;
  /** reads.firstQuery: [clock, candidates] of the episode's first query, null when it made none. */
  firstQuery: [number, number] | null;
}

export interface PlainRow {
  wave: number;
  condition: string;
  task: string;
  seed: number;
  attempt: number;
  status: string;
  failureCode: string | null;
  success: boolean | null;
  decisionCorrect: boolean | null;
  actionDigest: string;
  reads: PlainReads;
}

export function obj(v: Json | undefined): Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {};
}
export function arr(v: Json | undefined): Json[] {
  return Array.isArray(v) ? v : [];
}
export function str(v: Json | undefined): string {
  return typeof v === 'string' ? v : '';
}
export function num(v: Json | undefined): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** The sealed rows, each read through the row schema (EpisodeRowSchema), as the cross-check's own plain rows. */
export function readRowsPlain(text: string, where: string = UNIT_FILES.rows): PlainRow[] {
  const out: PlainRow[] = [];
  let lineNo = 0;
  for (const line of text.split('\n')) {
    lineNo++;
    if (line === '') continue;
    const r = parseRecordText(EpisodeRowSchema, line, `${where}:${lineNo}`);
    const reads = r.reads;
    out.push({
      wave: r.wave,
      condition: r.condition,
      task: r.task,
      seed: r.seed,
      attempt: r.attempt,
      status: r.status,
      failureCode: r.failure === null ? null : r.failure.code,
      success: r.success,
      decisionCorrect: r.decisionCorrect,
      actionDigest: r.actionDigest,
      reads: {
        total: reads.total,
        empty: reads.empty,
        emptyPositions: reads.emptyPositions,
        withHistory: reads.withHistory,
        substituted: reads.substituted,
        substitutedUnchanged: reads.substitutedUnchanged,
        covered: reads.covered,
        firstQuery: reads.firstQuery === null ? null : [reads.firstQuery.clock, reads.firstQuery.candidates],
      },
    });
  }
  return out;
}

export interface PlainUnit {
  task: string;
  seed: number;
  attempt: number;
  /** Outcome per listed condition, in the listed order: 1, 0 or null. */
  y: (0 | 1 | null)[];
}

export interface PlainCohort {
  wave: number;
  paired: number;
  unpaired: number;
  removedTotal: number;
  removedByCode: Record<string, number>;
  /** Removed units counted per condition whose row was removed (a unit removed in two counts in both). */
  removedByCondition: Record<string, number>;
  /** Keys `task|seed|attempt` of the paired units removed (any listed row 'removed'). */
  removedKeys: string[];
  unresolved: number;
  resolved: number;
  unavailable: string[];
  units: PlainUnit[];
}

export class PlainStudy {
  readonly tasks: string[];
  readonly registered: number[];

  constructor(
    readonly protocol: Obj,
    readonly rows: PlainRow[],
  ) {
    this.tasks = arr(protocol['envs']).map((e) => str(obj(e)['task']) || str(obj(e)['id']));
    const attempts = obj(protocol['attempts']);
    const chains = obj(protocol['chains']);
    if (typeof attempts['registered'] === 'number') this.registered = [attempts['registered']];
    else if (Array.isArray(chains['registered'])) this.registered = (chains['registered'] as number[]).slice();
    else this.registered = [1];
  }

  waves(): { id: number; anchor: string; conditions: string[] }[] {
    return arr(this.protocol['waves']).map((w) => ({
      id: obj(w)['id'] as number,
      anchor: str(obj(w)['anchor']),
      conditions: arr(obj(w)['conditions']).map(str),
    }));
  }

  kindOf(condition: string): string {
    for (const c of arr(this.protocol['conditions'])) if (str(obj(c)['id']) === condition) return str(obj(c)['kind']);
    return 'A';
  }

  firstWave(conditions: string[]): number | null {
    for (const w of this.waves()) {
      let all = true;
      for (const c of conditions) if (!w.conditions.includes(c)) all = false;
      if (all) return w.id;
    }
    return null;
  }

  outcome(r: PlainRow, readout: string): 0 | 1 | null {
    if (r.status !== 'ok') return null;
    const v = readout === 'decision' ? r.decisionCorrect : r.success;
    if (v === true) return 1;
    if (v === false) return 0;
    return null;
  }

  cohort(conditions: string[], readout: string, excluded: Set<string>, wave: number): PlainCohort {
    const maps: Map<string, PlainRow>[] = conditions.map(() => new Map());
    for (const r of this.rows) {
      if (r.wave !== wave || excluded.has(r.task) || !this.registered.includes(r.attempt)) continue;
      for (let k = 0; k < conditions.length; k++)
        if (conditions[k] === r.condition) maps[k]!.set(`${r.task}|${r.seed}|${r.attempt}`, r);
    }
    const unavailable: string[] = [];
    for (let k = 0; k < conditions.length; k++) {
      for (const r of maps[k]!.values()) {
        if (r.status === 'unavailable') {
          unavailable.push(conditions[k]!);
          break;
        }
      }
    }
    const ids = new Map<string, { task: string; seed: number; attempt: number }>();
    for (const m of maps) for (const [key, r] of m) ids.set(key, { task: r.task, seed: r.seed, attempt: r.attempt });
    const sorted = [...ids.entries()].sort((p, q) => {
      const dt = this.tasks.indexOf(p[1].task) - this.tasks.indexOf(q[1].task);
      if (dt !== 0) return dt;
      if (p[1].seed !== q[1].seed) return p[1].seed - q[1].seed;
      return p[1].attempt - q[1].attempt;
    });
    const c: PlainCohort = {
      wave,
      paired: 0,
      unpaired: 0,
      removedTotal: 0,
      removedByCode: {},
      removedByCondition: {},
      removedKeys: [],
      unresolved: 0,
      resolved: 0,
      unavailable,
      units: [],
    };
    for (const [key, id] of sorted) {
      const rows: PlainRow[] = [];
      for (const m of maps) {
        const r = m.get(key);
        if (r !== undefined) rows.push(r);
      }
      if (rows.length !== conditions.length) {
        c.unpaired += 1;
        continue;
      }
      c.paired += 1;
      let removed: PlainRow | undefined;
      for (const r of rows) if (removed === undefined && r.status === 'removed') removed = r;
      if (removed !== undefined) {
        const code = removed.failureCode ?? 'removed';
        c.removedByCode[code] = (c.removedByCode[code] ?? 0) + 1;
        for (let k = 0; k < rows.length; k++)
          if (rows[k]!.status === 'removed')
            c.removedByCondition[conditions[k]!] = (c.removedByCondition[conditions[k]!] ?? 0) + 1;
        c.removedKeys.push(key);
        c.removedTotal += 1;
        continue;
      }
      const y = rows.map((r) => this.outcome(r, readout));
      if (y.includes(null)) c.unresolved += 1;
      else c.resolved += 1;
      c.units.push({ ...id, y });
    }
    return c;
  }
}
