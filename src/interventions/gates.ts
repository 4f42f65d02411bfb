/**
 * Read-path gates: checks, before any outcome is read, that a condition reached the read path it targets.
 * Each returns `{ gate, passed, observed, expected, detail }`. A gate with nothing to check (no reads,
 * no units) fails: absence of evidence is not delivery.
 */
import type { InstallationRecord } from './install.js';
import type { TraceEntry } from './trace.js';

export type GateName =
  | 'reads-in-reference'
  | 'empty-reads-in-block'
  | 'substituted-reads-changed'
  | 'installation-changed'
  | 'empty-read-positions';

export interface GateResult {
  readonly gate: GateName;
  readonly passed: boolean;
  readonly observed: number;
  readonly expected: number;
  readonly detail: string;
}

function sample(xs: readonly string[], n = 5): string {
  return xs.length <= n ? xs.join(', ') : `${xs.slice(0, n).join(', ')} … (+${xs.length - n})`;
}

/** A: every unit made at least one non-empty read after the point. observed = units with such reads. */
export function gateReadsInReference(
  entries: Iterable<TraceEntry>,
  units: readonly string[],
  unitOf: (e: TraceEntry) => string = (e) => e.scope,
): GateResult {
  const reads = new Map<string, number>(units.map((u) => [u, 0]));
  for (const e of entries) {
    const u = unitOf(e);
    if (!reads.has(u)) reads.set(u, 0);
    if (e.afterPoint && e.selected.length > 0) reads.set(u, (reads.get(u) as number) + 1);
  }
  const missing = [...reads]
    .filter(([, n]) => n === 0)
    .map(([u]) => u)
    .sort();
  const expected = reads.size;
  const observed = expected - missing.length;
  return {
    gate: 'reads-in-reference',
    passed: expected > 0 && missing.length === 0,
    observed,
    expected,
    detail:
      missing.length === 0
        ? `${observed}/${expected} units read memory after the point`
        : `units without a read: ${sample(missing)}`,
  };
}

/** N_block: every read after the point returned nothing. observed = empty returned reads. */
export function gateEmptyReadsInBlock(entries: Iterable<TraceEntry>): GateResult {
  let total = 0,
    empty = 0;
  const leaks: string[] = [];
  for (const e of entries) {
    if (!e.afterPoint) continue;
    total++;
    if (e.returnedCount === 0) empty++;
    else leaks.push(`${e.scope}@${e.queryIndex}`);
  }
  return {
    gate: 'empty-reads-in-block',
    passed: total > 0 && empty === total,
    observed: empty,
    expected: total,
    detail:
      leaks.length === 0 ? `${empty}/${total} reads returned nothing` : `reads that returned items: ${sample(leaks)}`,
  };
}

/**
 * Per-read substitution (S_π, T_μ, U at read): every read with history (after the point, ≥1 selected
 * record) changed its content digest. The denominator is reads WITH history, not all reads.
 */
export function gateSubstitutedReadsChanged(entries: Iterable<TraceEntry>): GateResult {
  let withHistory = 0,
    changed = 0;
  const same: string[] = [];
  for (const e of entries) {
    if (!e.afterPoint || e.selected.length === 0) continue;
    withHistory++;
    if (e.readAfter !== e.readBefore) changed++;
    else same.push(`${e.scope}@${e.queryIndex}`);
  }
  return {
    gate: 'substituted-reads-changed',
    passed: withHistory > 0 && changed === withHistory,
    observed: changed,
    expected: withHistory,
    detail:
      same.length === 0
        ? `${changed}/${withHistory} reads with history changed content`
        : `unchanged reads: ${sample(same)}`,
  };
}

/** Installed conditions (U/S/T): every installed record's payload digest changed. */
export function gateInstallationChanged(records: Iterable<InstallationRecord>): GateResult {
  let total = 0,
    changed = 0;
  const same: string[] = [];
  for (const r of records) {
    for (const d of r.records) {
      total++;
      if (d.before !== d.after) changed++;
      else same.push(`${r.scope}#${d.slot}`);
    }
  }
  return {
    gate: 'installation-changed',
    passed: total > 0 && changed === total,
    observed: changed,
    expected: total,
    detail:
      same.length === 0
        ? `${changed}/${total} installed records changed content`
        : `unchanged records: ${sample(same)}`,
  };
}

export interface EmptyPositionOptions {
  /** When given, every condition's empty-read count must equal it; otherwise positions must agree. */
  readonly predicted?: number;
  /** Position key of a read; default scope|bank|queryIndex. */
  readonly positionOf?: (e: TraceEntry) => string;
}

/**
 * Empty reads (the bank selected nothing) sit at identical positions in every condition — or, with
 * `predicted`, their count equals the prediction in every condition. observed = agreeing conditions.
 */
export function gateEmptyReadPositions(
  byCondition: ReadonlyMap<string, Iterable<TraceEntry>>,
  options: EmptyPositionOptions = {},
): GateResult {
  const keyOf = options.positionOf ?? ((e: TraceEntry) => `${e.scope}|${e.bank}|${e.queryIndex}`);
  const sets = new Map<string, Set<string>>();
  for (const [cond, entries] of byCondition) {
    const s = new Set<string>();
    for (const e of entries) if (e.selected.length === 0) s.add(keyOf(e));
    sets.set(cond, s);
  }
  const conds = [...sets.keys()];
  const counts = conds.map((c) => `${c}=${(sets.get(c) as Set<string>).size}`).join(' ');
  let agreeing: string[];
  if (options.predicted !== undefined) {
    agreeing = conds.filter((c) => (sets.get(c) as Set<string>).size === options.predicted);
  } else {
    const ref = sets.get(conds[0] ?? '') ?? new Set<string>();
    agreeing = conds.filter((c) => {
      const s = sets.get(c) as Set<string>;
      return s.size === ref.size && [...s].every((k) => ref.has(k));
    });
  }
  const rule =
    options.predicted !== undefined
      ? `predicted ${options.predicted}`
      : `positions identical to ${conds[0] ?? '(none)'}`;
  return {
    gate: 'empty-read-positions',
    passed: conds.length > 0 && agreeing.length === conds.length,
    observed: agreeing.length,
    expected: conds.length,
    detail: `${rule}; empty reads: ${counts}`,
  };
}
