import { z } from 'zod';

/**
 * One durable row per planned episode (`rows/rows.jsonl`), version 1: the contract between the runner
 * (producer), the evidence-unit store, the adjudicator, the cross-check and the report (consumers).
 *
 * Rows are DETERMINISTIC: the same protocol, code and checkpoint give byte-identical rows whether the
 * run was interrupted and resumed, sharded, or run in one process. Anything that varies between runs
 * (wall-clock timings, host names, provider notes) goes to `rows/timings.jsonl` or `run.json`, never here.
 *
 * Outcome fields are `null` when not observable or not resolved; an unresolved row stays in every
 * denominator and enters the identification bounds (src/stats/identification-bounds.ts).
 */

const hex = z.string().regex(/^[0-9a-f]+$/);

export const EXECUTION_STATUSES = [
  /** The episode ran to its end (success or failure observed). */
  'ok',
  /** The episode failed to execute (simulator/bridge/policy error); outcome unresolved. */
  'failed',
  /** The unit was removed from this condition by a fail-closed rule (e.g. donor holds fewer records). */
  'removed',
  /** The condition was marked unavailable (failed conformance within its repair budget). */
  'unavailable',
] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export const ReadSummarySchema = z.object({
  /** Bank reads made in this episode (all banks). */
  total: z.number().int().nonnegative(),
  /** Reads that returned no item. */
  empty: z.number().int().nonnegative(),
  /** Query indices (per-episode, 1-based) of the empty reads, for the empty-read-position gate. */
  emptyPositions: z.array(z.number().int().positive()),
  /** Reads that carried history (≥ 1 item before the hook). */
  withHistory: z.number().int().nonnegative(),
  /** Reads whose items the intervention replaced (content digest changed). */
  substituted: z.number().int().nonnegative(),
  /** Reads where a substitution was applied but the content digest did not change. */
  substitutedUnchanged: z.number().int().nonnegative(),
  /** Decision-step queries, and how many of them selected ≥ 1 unmodified substituted record. */
  decisionQueries: z.number().int().nonnegative(),
  coveredDecisionQueries: z.number().int().nonnegative(),
  /** Survival coverage of this unit (every decision query covered); null for non-substituting conditions. */
  covered: z.boolean().nullable(),
  /** Digest over the sequence of (query index, content digest after the hook). */
  contentDigest: hex,
  /**
   * The episode's FIRST memory query (its first read, of whichever bank is read first), null when the
   * episode made no read: `clock` is the per-scope query clock at that read (ReadContext.queryIndex) and
   * `candidates` how many records were candidates before top-k (ReadContext.candidateCount). The clock
   * gate (clearing keeps the scope clock) and the candidate gate (installation keeps the first-query
   * candidate count) compare these with the reference condition's (adjudication/gates.ts).
   */
  firstQuery: z
    .object({
      clock: z.number().int().nonnegative(),
      candidates: z.number().int().nonnegative(),
    })
    .nullable(),
});
export type ReadSummary = z.infer<typeof ReadSummarySchema>;

export const EpisodeRowSchema = z.object({
  v: z.literal(1),
  /** Position in the frozen plan (rows are appended in seq order). */
  seq: z.number().int().nonnegative(),
  wave: z.number().int().positive(),
  /** Condition id from the protocol (e.g. "A", "S_pi", "N_blk"). */
  condition: z.string().min(1),
  task: z.string().min(1),
  seed: z.number().int().nonnegative(),
  attempt: z.number().int().positive(),
  scopeId: hex,
  episodeId: hex,
  status: z.enum(EXECUTION_STATUSES),
  /** For status 'failed' | 'removed' | 'unavailable': a code and one line. */
  failure: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** Task success (evaluator-only, never shown to the policy). */
  success: z.boolean().nullable(),
  /** Index of the first object visited (decision readout), null when not observable. */
  firstVisit: z.number().int().nonnegative().nullable(),
  /** Whether the decision (first visit / committed choice) was correct, null when not observable. */
  decisionCorrect: z.boolean().nullable(),
  steps: z.number().int().nonnegative(),
  firstFrameHash: hex.nullable(),
  /**
   * One streaming SHA-256 over the episode's actions, in step order (not a hash chain):
   * hex(SHA-256("imep.action-digest.v1" ‖ f32(action 1) ‖ … ‖ f32(action T))), where f32(a) is the bytes
   * of a's values as a Float32Array (a non-float32 action is converted to float32 first), in the host's
   * byte order — little-endian on x86-64 and arm64. An episode with no action has
   * hex(SHA-256("imep.action-digest.v1")). See src/campaign/action-digest.ts.
   */
  actionDigest: hex,
  /** Per-step action hashes: hex(SHA-256(f32(action t)))[0:12], for query↔action alignment audits. */
  actionHashes: z.array(z.string().regex(/^[0-9a-f]{12}$/)),
  reads: ReadSummarySchema,
  /** Attempts made under a registered retry policy (1 when none); every attempt is logged in timings. */
  tries: z.number().int().positive(),
});
export type EpisodeRow = z.infer<typeof EpisodeRowSchema>;

/** The non-deterministic side line for one row (`rows/timings.jsonl`). */
export const EpisodeTimingSchema = z.object({
  seq: z.number().int().nonnegative(),
  /**
   * Milliseconds spent in the simulator, the policy runtime, the bank + intervention hook, and in total. A bridged
   * step counts its own round trip, which overlaps the other slots' steps of the batch (src/runtime/send-steps.ts), so
   * the rows' sums can exceed the run's wall time.
   */
  simMs: z.number().nonnegative(),
  policyMs: z.number().nonnegative(),
  bankMs: z.number().nonnegative(),
  totalMs: z.number().nonnegative(),
  /** Every failed try under a retry policy, with its error (never silently retried). */
  failedTries: z.array(z.object({ code: z.string(), message: z.string() })),
});
export type EpisodeTiming = z.infer<typeof EpisodeTimingSchema>;
