/**
 * The joint cohort of a contrast: rows of the listed conditions paired by (task, seed, attempt) within
 * ONE wave (each contrast is taken against its own wave's anchor), on the registered attempts only.
 *
 *   - a unit missing from some listed condition (e.g. a condition run at a smaller n) is unpaired and
 *     leaves the contrast (counted);
 *   - a unit with a 'removed' row in any listed condition (a fail-closed rule, e.g. a donor holding fewer
 *     records: E_DONOR_SHORT) leaves the contrast, counted by failure code;
 *   - a 'failed' row (or an 'ok' row whose readout is not observable) stays in the denominator as
 *     unresolved: it enters the identification bounds;
 *   - a listed condition with any 'unavailable' row is unavailable: the whole contrast is unavailable
 *     (Holm p = 1, it stays in its family) and carries no number;
 *   - units of tasks excluded by the competence gate leave every contrast.
 *
 * Unit order (shared, as a documented rule, with the cross-check): tasks in protocol `envs` order, then
 * seed ascending, then attempt ascending. The wave of a contrast is the first listed wave that runs every
 * one of its conditions.
 */
import { ImepError } from '../core/index.js';
import { pairedDesign, type PairedDesign } from '../stats/index.js';
import type { Protocol } from '../protocol/index.js';
import type { EpisodeRow } from '../evidence/index.js';
import { protocolTasks, registeredAttempts } from './sealed-inputs.js';
import type { CohortSummary, Readout } from './types.js';

export type Outcome = 0 | 1 | null;

export interface CohortUnit {
  readonly task: string;
  readonly seed: number;
  readonly attempt: number;
  /** Outcome per listed condition (null: unresolved). */
  readonly outcomes: Readonly<Record<string, Outcome>>;
}

export type Cohort =
  | {
      readonly status: 'unavailable';
      readonly conditions: readonly string[];
      readonly unavailable: readonly string[];
      readonly summary: CohortSummary;
    }
  | {
      readonly status: 'available';
      readonly conditions: readonly string[];
      readonly units: readonly CohortUnit[];
      readonly summary: CohortSummary;
    };

export function outcomeOf(row: EpisodeRow, readout: Readout): Outcome {
  if (row.status !== 'ok') return null;
  const v = readout === 'decision' ? row.decisionCorrect : row.success;
  return v === null ? null : v ? 1 : 0;
}

function unitKey(task: string, seed: number, attempt: number): string {
  return `${task}\u001f${seed}\u001f${attempt}`;
}

/** Rows indexed by (wave, condition), with the protocol's registered attempts and task order. */
export class RowIndex {
  readonly tasks: readonly string[];
  readonly registered: ReadonlySet<number>;
  private readonly byCell = new Map<string, EpisodeRow[]>();

  constructor(
    readonly protocol: Protocol,
    readonly rows: readonly EpisodeRow[],
  ) {
    this.tasks = protocolTasks(protocol);
    this.registered = new Set(registeredAttempts(protocol));
    for (const row of rows) {
      const key = `${row.wave}\u001f${row.condition}`;
      const list = this.byCell.get(key);
      if (list) list.push(row);
      else this.byCell.set(key, [row]);
    }
  }

  /** Every row of a condition in a wave (all attempts). */
  rowsOf(wave: number, condition: string): readonly EpisodeRow[] {
    return this.byCell.get(`${wave}\u001f${condition}`) ?? [];
  }

  /** Rows of a condition in a wave on the registered attempts. */
  registeredRowsOf(wave: number, condition: string): EpisodeRow[] {
    return this.rowsOf(wave, condition).filter((r) => this.registered.has(r.attempt));
  }

  /** The first wave that runs every listed condition. */
  waveFor(conditions: readonly string[], field: string): number {
    const wave = this.protocol.waves.find((w) => conditions.every((c) => w.conditions.includes(c)));
    if (wave === undefined) {
      throw new ImepError(
        'E_PROTOCOL_INVALID',
        `no wave runs all of ${conditions.join(', ')}; a contrast is taken within one wave`,
        { field },
      );
    }
    return wave.id;
  }

  /** Sort key: task (envs order), seed, attempt. */
  compareUnits(
    a: { task: string; seed: number; attempt: number },
    b: { task: string; seed: number; attempt: number },
  ): number {
    return this.tasks.indexOf(a.task) - this.tasks.indexOf(b.task) || a.seed - b.seed || a.attempt - b.attempt;
  }

  cohort(
    conditions: readonly string[],
    readout: Readout,
    excludedTasks: ReadonlySet<string>,
    field: string,
    wave?: number,
  ): Cohort {
    const w = wave ?? this.waveFor(conditions, field);
    const perCondition = conditions.map((c) => {
      const map = new Map<string, EpisodeRow>();
      for (const row of this.registeredRowsOf(w, c)) {
        if (!excludedTasks.has(row.task)) map.set(unitKey(row.task, row.seed, row.attempt), row);
      }
      return map;
    });
    const unavailable = conditions.filter((_, k) =>
      [...(perCondition[k] as Map<string, EpisodeRow>).values()].some((r) => r.status === 'unavailable'),
    );
    const all = new Map<string, { task: string; seed: number; attempt: number }>();
    for (const map of perCondition)
      for (const [key, r] of map) all.set(key, { task: r.task, seed: r.seed, attempt: r.attempt });
    const keys = [...all.entries()].sort((x, y) => this.compareUnits(x[1], y[1]));
    let unpaired = 0;
    let paired = 0;
    let unresolved = 0;
    const byCode: Record<string, number> = {};
    const byCondition: Record<string, number> = {};
    const reasons: Record<string, string> = {};
    let removedTotal = 0;
    const units: CohortUnit[] = [];
    for (const [key, id] of keys) {
      const rows = perCondition.map((m) => m.get(key));
      if (rows.some((r) => r === undefined)) {
        unpaired++;
        continue;
      }
      paired++;
      const removed = (rows as EpisodeRow[]).find((r) => r.status === 'removed');
      if (removed !== undefined) {
        const code = removed.failure?.code ?? 'removed';
        byCode[code] = (byCode[code] ?? 0) + 1;
        reasons[code] ??= removed.failure?.message ?? 'removed by a fail-closed rule';
        conditions.forEach((c, k) => {
          if ((rows[k] as EpisodeRow).status === 'removed') byCondition[c] = (byCondition[c] ?? 0) + 1;
        });
        removedTotal++;
        continue;
      }
      const outcomes: Record<string, Outcome> = {};
      conditions.forEach((c, k) => (outcomes[c] = outcomeOf(rows[k] as EpisodeRow, readout)));
      if (Object.values(outcomes).some((o) => o === null)) unresolved++;
      units.push({ ...id, outcomes });
    }
    const summary: CohortSummary = {
      wave: w,
      paired,
      unpaired,
      removed: { total: removedTotal, byCode, byCondition, reasons },
      population: populationWords(paired, unpaired, removedTotal, byCondition, reasons, units.length - unresolved),
      unresolved,
      resolved: units.length - unresolved,
      excludedTasks: [...excludedTasks].sort(),
    };
    if (unavailable.length > 0) return { status: 'unavailable', conditions, unavailable, summary };
    return { status: 'available', conditions, units, summary };
  }
}

/** The population an estimand covers, in words: units kept and removed, per condition and why. */
export function populationWords(
  paired: number,
  unpaired: number,
  removed: number,
  byCondition: Readonly<Record<string, number>>,
  reasons: Readonly<Record<string, string>>,
  resolved: number,
): string {
  const kept = paired - removed;
  const head = `${kept} of ${paired} paired units kept, ${resolved} resolved`;
  const gone =
    removed === 0
      ? 'none removed'
      : `${removed} removed (${Object.entries(byCondition)
          .map(([c, k]) => `${c}: ${k}`)
          .join(', ')}; ${Object.entries(reasons)
          .map(([code, why]) => `${code}, first: ${why}`)
          .join('; ')}) — the estimand covers the kept units only`;
  return `${head}; ${gone}${unpaired > 0 ? `; ${unpaired} unpaired` : ''}`;
}

/** The resolved units of a cohort as a src/stats PairedDesign (tasks named in order of appearance). */
export function resolvedDesign(units: readonly CohortUnit[], conditions: readonly string[]): PairedDesign {
  const kept = units.filter((u) => conditions.every((c) => u.outcomes[c] !== null));
  return designOf(kept, conditions, (u, c) => u.outcomes[c] as 0 | 1);
}

/** A design over all units, each unresolved outcome filled by `fill`. */
export function designOf(
  units: readonly CohortUnit[],
  conditions: readonly string[],
  value: (u: CohortUnit, c: string) => 0 | 1,
): PairedDesign {
  const outcomes: Record<string, number[]> = {};
  for (const c of conditions) outcomes[c] = units.map((u) => value(u, c));
  return pairedDesign({
    outcomes,
    tasks: units.map((u) => u.task),
    clusters: units.map((u) => `${u.task}\u001f${u.seed}`),
  });
}
