/**
 * The read summary of one episode (EpisodeRow.reads), accumulated from its substitution-trace entries
 * (src/interventions/trace.ts) in read order:
 *
 * - total / empty / emptyPositions: reads, reads that returned no item, and their 1-based positions
 *   among the episode's reads (one read per policy step for the lite checkpoints).
 * - withHistory: reads where the bank selected ≥ 1 record (before the hook).
 * - substituted / substitutedUnchanged: reads on which the condition substituted content, split by
 *   whether the content digest changed. Per-read conditions (U at read, S_π, T_μ) substitute every read
 *   with history; installed ones (U install, S, T) substitute the reads that select an unmodified
 *   installed record, "changed" when one of those records' installed payload differs from its own
 *   (the installation record's before/after digests); O substitutes every read. A, C, N never do.
 * - decisionQueries / coveredDecisionQueries / covered: decision-step reads after the registered point
 *   and those selecting ≥ 1 unmodified substituted record (survivalCoverage on this episode's entries);
 *   covered is null for non-substituting conditions and for episodes entirely before the point.
 * - contentDigest: SHA-256 over "queryIndex:readAfter" of every read, in order.
 * - firstQuery: the per-scope query clock (queryIndex) and candidate count of the episode's first read,
 *   from its ReadContext (as recorded in the trace entry); null when the episode made no read.
 */
import { hash } from 'node:crypto';
import type { ReadSummary } from '../evidence/index.js';
import type { InstallationRecord, SubstitutionMode, TraceEntry } from '../interventions/index.js';
import { survivalCoverage } from '../interventions/index.js';

export interface ReadSummaryOptions {
  readonly mode: SubstitutionMode;
  /** True for O (the oracle substitutes every read). */
  readonly oracle: boolean;
  /** Whether any of this episode's reads can be after the registered point. */
  readonly afterPoint: boolean;
  /** Substituting condition (U, S_π, T_μ, S, T, O): covered is computed, else null. */
  readonly substituting: boolean;
}

const key = (slot: number, timestep: number, version: number): string => `${slot}/${timestep}/${version}`;

export class ReadSummaryBuilder {
  private readonly entries: TraceEntry[] = [];
  private installed: Map<string, boolean> | null = null;

  constructor(private readonly options: ReadSummaryOptions) {}

  /** The installation record of the registered point, when it ran at the start of this episode or before. */
  setInstallation(record: InstallationRecord): void {
    this.installed = new Map(record.records.map((r) => [key(r.slot, r.timestep, r.version), r.before !== r.after]));
  }

  add(entry: TraceEntry): void {
    this.entries.push(entry);
  }

  build(): ReadSummary {
    const { mode, oracle } = this.options;
    let empty = 0,
      withHistory = 0,
      substituted = 0,
      unchanged = 0;
    const emptyPositions: number[] = [];
    // The digest input, built as one string and hashed once (the same bytes as one update per read).
    let content = 'imep.read-content.v1';
    this.entries.forEach((e, i) => {
      if (e.returnedCount === 0) {
        empty++;
        emptyPositions.push(i + 1);
      }
      const history = e.selected.length > 0;
      if (history) withHistory++;
      content += `\n${e.queryIndex}:${e.readAfter}`;
      let applied = false,
        changed = false;
      if (oracle) {
        applied = true;
        changed = e.readAfter !== e.readBefore;
      } else if (mode === 'per-read' && e.afterPoint && history) {
        applied = true;
        changed = e.readAfter !== e.readBefore;
      } else if (mode === 'read-swap' && e.afterPoint) {
        if (e.selected.some((s) => s.unmodifiedSubstituted)) {
          applied = true;
          changed = e.readAfter !== e.readBefore;
        }
      } else if (mode === 'installed' && e.afterPoint) {
        const hits = e.selected.filter((s) => s.unmodifiedSubstituted);
        if (hits.length > 0) {
          applied = true;
          changed = hits.some((s) => this.installed?.get(key(s.slot, s.timestep, s.version)) === true);
        }
      }
      if (applied && changed) substituted++;
      else if (applied) unchanged++;
    });
    let decisionQueries = 0,
      coveredDecisionQueries = 0;
    let covered: boolean | null = null;
    if (this.options.afterPoint) {
      const cov = survivalCoverage(this.entries, { units: ['episode'], unitOf: () => 'episode' });
      const unit = cov.perUnit[0];
      decisionQueries = unit?.decisionQueries ?? 0;
      coveredDecisionQueries = unit?.coveredQueries ?? 0;
      if (this.options.substituting) covered = unit?.covered ?? false;
    }
    const first = this.entries[0];
    return {
      total: this.entries.length,
      empty,
      emptyPositions,
      withHistory,
      substituted,
      substitutedUnchanged: unchanged,
      decisionQueries,
      coveredDecisionQueries,
      covered,
      contentDigest: hash('sha256', content, 'hex'),
      firstQuery: first === undefined ? null : { clock: first.queryIndex, candidates: first.candidateCount },
    };
  }
}

/** The summary of an episode that made no read (removed, or failed before its first step). */
export function emptyReadSummary(): ReadSummary {
  return new ReadSummaryBuilder({ mode: 'none', oracle: false, afterPoint: false, substituting: false }).build();
}
