/**
 * The two tables `imep export` writes, from a unit's sealed rows (src/evidence/records/episode-row.ts, rows v1)
 * and their timing lines:
 * - rows.parquet: rows/rows.jsonl exactly — one row per line, every field under its JSON name, nested objects as
 *   structs and arrays as lists (their types are fixed by EpisodeRowSchema), null where the row has null.
 *   A field the schema below does not name is refused, never dropped (parquet-schema.ts `shred`).
 * - episodes.parquet: one flat row per planned episode (condition, task, seed, attempt): outcome, steps, read
 *   counts, failure class, and the episode's wall-clock timings from rows/timings.jsonl (null when a row has no
 *   timing line) — the summary a data frame groups and filters without unnesting.
 * docs/campaigns.md (`imep export`) documents every column.
 */
import type { EpisodeRow, EpisodeTiming } from '../evidence/index.js';
import { leaf, listOf, structOf, type SchemaNode } from './parquet-schema.js';

/** rows.parquet: EpisodeRowSchema v1, field for field. */
export const ROW_FIELDS: readonly SchemaNode[] = [
  leaf('v', 'int64'),
  leaf('seq', 'int64'),
  leaf('wave', 'int64'),
  leaf('condition', 'string'),
  leaf('task', 'string'),
  leaf('seed', 'int64'),
  leaf('attempt', 'int64'),
  leaf('scopeId', 'string'),
  leaf('episodeId', 'string'),
  leaf('status', 'string'),
  structOf('failure', [leaf('code', 'string'), leaf('message', 'string')], true),
  leaf('success', 'boolean', true),
  leaf('firstVisit', 'int64', true),
  leaf('decisionCorrect', 'boolean', true),
  leaf('steps', 'int64'),
  leaf('firstFrameHash', 'string', true),
  leaf('actionDigest', 'string'),
  listOf('actionHashes', leaf('element', 'string')),
  structOf('reads', [
    leaf('total', 'int64'),
    leaf('empty', 'int64'),
    listOf('emptyPositions', leaf('element', 'int64')),
    leaf('withHistory', 'int64'),
    leaf('substituted', 'int64'),
    leaf('substitutedUnchanged', 'int64'),
    leaf('decisionQueries', 'int64'),
    leaf('coveredDecisionQueries', 'int64'),
    leaf('covered', 'boolean', true),
    leaf('contentDigest', 'string'),
    structOf('firstQuery', [leaf('clock', 'int64'), leaf('candidates', 'int64')], true),
  ]),
  leaf('tries', 'int64'),
];

/** episodes.parquet: flat columns, one row per row of rows.jsonl. */
export const EPISODE_FIELDS: readonly SchemaNode[] = [
  leaf('seq', 'int64'),
  leaf('wave', 'int64'),
  leaf('condition', 'string'),
  leaf('task', 'string'),
  leaf('seed', 'int64'),
  leaf('attempt', 'int64'),
  leaf('status', 'string'),
  leaf('failureCode', 'string', true),
  leaf('failureMessage', 'string', true),
  leaf('success', 'boolean', true),
  leaf('decisionCorrect', 'boolean', true),
  leaf('firstVisit', 'int64', true),
  leaf('steps', 'int64'),
  leaf('tries', 'int64'),
  leaf('readsTotal', 'int64'),
  leaf('readsEmpty', 'int64'),
  leaf('readsWithHistory', 'int64'),
  leaf('readsSubstituted', 'int64'),
  leaf('readsSubstitutedUnchanged', 'int64'),
  leaf('decisionQueries', 'int64'),
  leaf('coveredDecisionQueries', 'int64'),
  leaf('covered', 'boolean', true),
  leaf('firstQueryClock', 'int64', true),
  leaf('firstQueryCandidates', 'int64', true),
  leaf('simMs', 'double', true),
  leaf('policyMs', 'double', true),
  leaf('bankMs', 'double', true),
  leaf('totalMs', 'double', true),
  leaf('failedTries', 'int64', true),
  listOf('failedTryCodes', leaf('element', 'string'), true),
];

/** The flat summary of one row and its timing line (absent → the timing columns are null). */
export function episodeSummary(row: EpisodeRow, timing: EpisodeTiming | undefined): Record<string, unknown> {
  const r = row.reads;
  return {
    seq: row.seq,
    wave: row.wave,
    condition: row.condition,
    task: row.task,
    seed: row.seed,
    attempt: row.attempt,
    status: row.status,
    failureCode: row.failure?.code ?? null,
    failureMessage: row.failure?.message ?? null,
    success: row.success,
    decisionCorrect: row.decisionCorrect,
    firstVisit: row.firstVisit,
    steps: row.steps,
    tries: row.tries,
    readsTotal: r.total,
    readsEmpty: r.empty,
    readsWithHistory: r.withHistory,
    readsSubstituted: r.substituted,
    readsSubstitutedUnchanged: r.substitutedUnchanged,
    decisionQueries: r.decisionQueries,
    coveredDecisionQueries: r.coveredDecisionQueries,
    covered: r.covered,
    firstQueryClock: r.firstQuery?.clock ?? null,
    firstQueryCandidates: r.firstQuery?.candidates ?? null,
    simMs: timing?.simMs ?? null,
    policyMs: timing?.policyMs ?? null,
    bankMs: timing?.bankMs ?? null,
    totalMs: timing?.totalMs ?? null,
    failedTries: timing?.failedTries.length ?? null,
    failedTryCodes: timing?.failedTries.map((f) => f.code) ?? null,
  };
}
