/**
 * Survival coverage: the fraction of units whose EVERY decision query after the registered point selects
 * at least one unmodified substituted record. A decision query is identified by (episode, queryIndex) and
 * may span several banks' reads; it is covered when any of its reads selects such a record.
 *
 * Empty-input behaviour: a unit with no decision query after the point is NOT covered (there is no
 * evidence of delivery) and is counted in `noDecisionQuery`; units listed in `units` but absent from the
 * trace count the same way; with no units at all, `coverage` is null. Entries are consumed lazily, so a
 * streamed trace (readTrace) is never held in memory.
 */
import type { TraceEntry } from './trace.js';

export interface UnitCoverage {
  readonly unit: string;
  readonly decisionQueries: number;
  readonly coveredQueries: number;
  readonly covered: boolean;
}

export interface CoverageResult {
  readonly units: number;
  readonly covered: number;
  /** covered / units, or null when there are no units. */
  readonly coverage: number | null;
  /** Units with no decision query after the point (not covered). */
  readonly noDecisionQuery: number;
  /** Sorted by unit. */
  readonly perUnit: readonly UnitCoverage[];
}

export interface CoverageOptions {
  /** Every unit that should appear (units missing from the trace count as uncovered). */
  readonly units?: readonly string[];
  /** The unit a trace entry belongs to; default: its scope. */
  readonly unitOf?: (e: TraceEntry) => string;
}

export function survivalCoverage(entries: Iterable<TraceEntry>, options: CoverageOptions = {}): CoverageResult {
  const unitOf = options.unitOf ?? ((e: TraceEntry) => e.scope);
  const queries = new Map<string, Map<string, boolean>>();
  for (const u of options.units ?? []) if (!queries.has(u)) queries.set(u, new Map());
  for (const e of entries) {
    const unit = unitOf(e);
    let q = queries.get(unit);
    if (!q) queries.set(unit, (q = new Map()));
    if (!e.afterPoint || !e.decisionStep) continue;
    const key = `${e.episode}\u001f${e.queryIndex}`;
    const hit = e.selected.some((s) => s.unmodifiedSubstituted);
    q.set(key, (q.get(key) ?? false) || hit);
  }
  const perUnit: UnitCoverage[] = [];
  let covered = 0,
    noDecisionQuery = 0;
  for (const unit of [...queries.keys()].sort()) {
    const q = queries.get(unit) as Map<string, boolean>;
    let coveredQueries = 0;
    for (const v of q.values()) if (v) coveredQueries++;
    const isCovered = q.size > 0 && coveredQueries === q.size;
    if (q.size === 0) noDecisionQuery++;
    if (isCovered) covered++;
    perUnit.push({ unit, decisionQueries: q.size, coveredQueries, covered: isCovered });
  }
  const units = perUnit.length;
  return { units, covered, coverage: units === 0 ? null : covered / units, noDecisionQuery, perUnit };
}

/** The read-path gates that accompany coverage live in gates.ts. */
export {
  gateEmptyReadPositions,
  gateEmptyReadsInBlock,
  gateInstallationChanged,
  gateReadsInReference,
  gateSubstitutedReadsChanged,
} from './gates.js';
export type { GateName, GateResult } from './gates.js';
