/**
 * The registered execution-failure budget (`executionFailures.budget`), as a wrapper of the run's durable row target:
 * it watches the rows the sink writes — in seq order, so where a run stops depends on which rows failed, never on
 * batch size or timing — and stops the run, before the seal, when the budget is exceeded. The loop knows nothing of
 * it: the wrapper's append throws an E_FAILURE_BUDGET error after the row is durable, the sink keeps that error and
 * aborts the loop at its next step (as it does on a write error), and no later row is written.
 *
 * Counted per wave × condition, in units (a unit failed when any of its rows failed; a removed unit is neither):
 *   firstFailed K  — the first K units of a wave × condition (plan order) all failed: nothing works, stop;
 *   maxFraction f  — the failed units of a wave × condition exceed max(K, f × its planned units).
 * A stop comes only at the end of a unit (the rows of a unit are written together), so the rows written are whole
 * units and a resumed run starts at the next unit: nothing written is run again or lost. At least K failed units are
 * always allowed, so a run stopped by the first rule resumes after the fix; one stopped by the fraction has spent
 * its budget, and its resume refuses at once (`assertWithin`): fail the run and start it again.
 */
import { ImepError } from '../core/index.js';
import { failureCodeLines, failureSummary, type FailureRowLike, type FailureSummary } from '../evidence/index.js';
import type { FailureBudget, PlannedEpisode } from '../protocol/index.js';
import type { RowTarget } from './row-sink.js';

interface Cell {
  readonly label: string;
  readonly planned: number;
  ended: number;
  failed: number;
}

interface Trip {
  readonly cell: Cell;
  readonly rule: 'firstFailed' | 'maxFraction';
}

/** What a row of the run must carry for the budget. */
type BudgetRow = FailureRowLike & { readonly seq: number; readonly scopeId?: unknown };

const cellKey = (wave: unknown, condition: unknown): string => `${String(wave)}\u001f${String(condition)}`;

export class FailureBudgetWatch {
  private readonly cells = new Map<string, Cell>();
  /** The last seq of each unit → its cell; a unit's key is its first seq. */
  private readonly unitOf = new Map<number, { unit: number; cell: Cell; last: boolean }>();
  private readonly failedUnits = new Set<number>();
  private readonly rows: BudgetRow[] = [];

  /**
   * @param episodes the planned episodes this run (or shard) owns, in seq order
   * @param durable rows already written (resume), observed without stopping
   * @param next what to do after a stop, in words (e.g. "fix the cause and `imep campaign resume UNIT`, or …")
   */
  constructor(
    private readonly budget: FailureBudget,
    episodes: readonly PlannedEpisode[],
    durable: readonly BudgetRow[],
    private readonly next: string,
  ) {
    let prev: PlannedEpisode | undefined;
    const plannedUnits = new Map<string, number>();
    const first = new Set<number>();
    for (const e of episodes) {
      const key = cellKey(e.wave, e.condition);
      if (prev === undefined || prev.scopeId !== e.scopeId || cellKey(prev.wave, prev.condition) !== key) {
        first.add(e.seq);
        plannedUnits.set(key, (plannedUnits.get(key) ?? 0) + 1);
      }
      prev = e;
    }
    for (const [key, planned] of plannedUnits) {
      const [wave, condition] = key.split('\u001f');
      this.cells.set(key, { label: `wave ${wave} × ${condition}`, planned, ended: 0, failed: 0 });
    }
    let unit = -1;
    episodes.forEach((e, i) => {
      const after = episodes[i + 1];
      if (first.has(e.seq)) unit = e.seq;
      const last = after === undefined || first.has(after.seq);
      this.unitOf.set(e.seq, { unit, cell: this.cells.get(cellKey(e.wave, e.condition)) as Cell, last });
    });
    for (const r of durable) this.observe(r);
  }

  /** Failed units a wave × condition may have (beyond it the run stops). */
  private allowance(cell: Cell): number {
    return Math.max(this.budget.firstFailed, this.budget.maxFraction * cell.planned);
  }

  /** Takes one written row; the budget rule it trips at the end of its unit, if any. */
  private observe(row: BudgetRow): Trip | null {
    this.rows.push(row);
    const at = this.unitOf.get(row.seq);
    if (at === undefined) return null;
    if (row.status === 'failed') this.failedUnits.add(at.unit);
    if (!at.last || row.status === 'removed') return null;
    const cell = at.cell;
    cell.ended += 1;
    if (this.failedUnits.has(at.unit)) cell.failed += 1;
    const k = Math.min(this.budget.firstFailed, cell.planned);
    if (cell.ended === k && cell.failed === k) return { cell, rule: 'firstFailed' };
    if (cell.failed > this.allowance(cell)) return { cell, rule: 'maxFraction' };
    return null;
  }

  /** The Failures summary of every row seen (durable ones included). */
  summary(): FailureSummary {
    return failureSummary(this.rows);
  }

  /** Resume: refuses a run whose durable rows already spent a wave × condition's budget. */
  assertWithin(): void {
    for (const cell of this.cells.values())
      if (cell.failed > this.allowance(cell)) throw this.stopError({ cell, rule: 'maxFraction' }, true);
  }

  private stopError(trip: Trip, before: boolean): ImepError {
    const b = this.budget;
    const { cell } = trip;
    const why =
      trip.rule === 'firstFailed'
        ? `the first ${cell.ended} units of ${cell.label} all failed`
        : `${cell.failed} of the ${cell.planned} planned units of ${cell.label} failed, more than the ${formatAllowance(this.allowance(cell))} the budget allows`;
    const s = this.summary();
    const codes = failureCodeLines(s).join('; ');
    return new ImepError(
      'E_FAILURE_BUDGET',
      `the formal run ${before ? 'cannot go on' : 'stopped'} before the seal: ${why} (budget: firstFailed ${b.firstFailed}, maxFraction ${b.maxFraction}); ${s.failed} of ${s.rows} rows written failed — ${codes}`,
      {
        field: 'executionFailures.budget',
        hint: `the unit is NOT sealed and its ${s.rows} rows are kept; ${this.next}`,
      },
    );
  }

  /** The run's durable target, watched: an append that exceeds the budget is written, then throws the stop. */
  wrap(target: RowTarget): RowTarget {
    return {
      appendTrace: (stream, entry) => target.appendTrace(stream, entry),
      appendTiming: (timing) => target.appendTiming(timing),
      appendRow: async (row) => {
        await target.appendRow(row);
        const trip = this.observe(row as BudgetRow);
        if (trip !== null) throw this.stopError(trip, false);
      },
    };
  }
}

function formatAllowance(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2).replace(/0+$/, '');
}
