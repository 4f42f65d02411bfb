import { join } from 'node:path';
import { z } from 'zod';

/**
 * The folder layout of an EVIDENCE UNIT (one folder per campaign), and the typed, versioned header.
 *
 * ```
 * <unit>/
 *   unit.json            header (EvidenceUnit below): version, id, stored status, spec block.
 *                        Rewritten atomically at each pre-seal transition; frozen once status is 'sealed'.
 *   protocol.json        the frozen protocol: its canonical JSON bytes exactly (sha256(bytes) = protocolHash)
 *   plan.json            the campaign plan (canonical JSON bytes exactly)
 *   precommit.json       the precommit record and its SHA-256 (precommit.ts)
 *   arrival-order.json   hosted policies only: the secret key of the order units reach the host in; precommit.json
 *                        binds its SHA-256 (arrival-order.ts). Sealed with the rest, so a verifier can replay the order
 *   rows/rows.jsonl      the durable formal rows, one canonical JSON line per row, seq 0,1,2,… —
 *                        deterministic: an interrupted+resumed run leaves it byte-identical to an
 *                        uninterrupted one
 *   rows/timings.jsonl   wall-clock timings per row, kept APART from rows because they are not deterministic
 *   rows/run.json        the formal run record (run id, who started / resumed it, when, completion)
 *   traces/<stream>.jsonl  formal-run traces (each line carries the row seq it belongs to)
 *   probe/<runId>/…      probe runs, stored apart from formal evidence (rows.jsonl, timings.jsonl, run.json)
 *   smoke/<runId>/…      smoke runs, likewise
 *   failed-runs/<runId>/ a failed formal run, RENAMED here rather than deleted (rows/, traces/, failure.json)
 *   amendments.jsonl     append-only, hash-chained amendment log (amend.ts); never changes protocol.json
 *   seal.json            the seal manifest: every file above (path, size, sha256) + Merkle root (seal.ts)
 *   adjudication/        post-seal records: adjudication-NNN.json, cross-check-NNN.json, NNN/<artifacts>
 *   closeout.json        the closeout manifest over seal.json, amendments.jsonl and adjudication/ (closeout.ts)
 *   attestations/        detached signatures for stock tools, one pair per stage's manifest file: <file>.minisig
 *                        (minisign) and <name>.intoto.json (in-toto DSSE); known to verify by name, bound by nothing
 *                        (attestation/write.ts)
 * ```
 * Beside the unit, never in it: `<unit>.lock` while a process writes the unit (unit-lock.ts: campaign run/resume,
 * cluster merge, fail-run) and `<unit>.shards/` (cluster shards, each with its own `shard-i-of-N.lock`).
 *
 * Every file the unit holds is either in seal.json's manifest, an append to amendments.jsonl after the
 * seal (bound by its hash chain, then by closeout), an adjudication record (self-hashed, then bound by
 * closeout), or closeout.json itself. Anything else is a stray file and fails verification. An empty
 * directory is a stray too unless the layout makes it (rows/, traces/, probe/, smoke/, failed-runs/,
 * adjudication/ and each run's rows/ and traces/; unit-directories.ts): a folder named like a record would
 * otherwise change the unit's derived state without verify seeing it. Each record claims only the paths of
 * its own scope (verify-claims.ts): no later record can re-claim a file the seal binds.
 *
 * The lifecycle state (lifecycle.ts) is derived: unit.json `status` holds the pre-seal states and
 * 'sealed'; after the seal, the state follows from which post-seal records exist (unit-state.ts).
 */

export const UNIT_FILES = {
  header: 'unit.json',
  protocol: 'protocol.json',
  plan: 'plan.json',
  precommit: 'precommit.json',
  rowsDir: 'rows',
  rows: 'rows/rows.jsonl',
  timings: 'rows/timings.jsonl',
  runRecord: 'rows/run.json',
  tracesDir: 'traces',
  probeDir: 'probe',
  smokeDir: 'smoke',
  failedRunsDir: 'failed-runs',
  amendments: 'amendments.jsonl',
  seal: 'seal.json',
  adjudicationDir: 'adjudication',
  closeout: 'closeout.json',
} as const;

export type UnitFileKey = keyof typeof UNIT_FILES;

/** Absolute paths of the layout for a unit directory. */
export function unitPaths(dir: string): { readonly [K in UnitFileKey]: string } {
  const out = {} as { [K in UnitFileKey]: string };
  for (const key of Object.keys(UNIT_FILES) as UnitFileKey[]) out[key] = join(dir, UNIT_FILES[key]);
  return out;
}

export const UNIT_SCHEMA_VERSION = 1;

/** Statuses stored in unit.json (post-seal states are derived, see lifecycle.ts). */
export const STORED_STATUSES = ['created', 'precommitted', 'running', 'run-complete', 'sealed'] as const;
export type StoredStatus = (typeof STORED_STATUSES)[number];

export const Sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase SHA-256 hex digest');

export const UnitIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'letters, digits, ".", "_" or "-" (starting with a letter or digit)');

export const OperatorSchema = z.object({
  id: z.string().min(1),
  source: z.enum(['env', 'os', 'explicit']),
});
export type Operator = z.infer<typeof OperatorSchema>;

/**
 * A durable formal or small-run row as the store sees it: a seq and the runner's own fields
 * (src/evidence/records/episode-row.ts, EpisodeRowSchema v1). The store reads nothing else but the execution
 * `status` ('ok' | 'failed' | 'removed' | 'unavailable' in rows v1), as a plain string, for `status`.
 */
export const DurableRowSchema = z.looseObject({
  seq: z.number().int().nonnegative(),
  status: z.string().min(1).optional(),
});

/** Record names inside adjudication/ (NNN = 001, 002, … in order of writing). */
export const ADJUDICATION_RECORD_RE = /^adjudication-(\d{3})\.json$/;
export const CROSS_CHECK_RECORD_RE = /^cross-check-(\d{3})\.json$/;
/** Artifacts of adjudication NNN live in adjudication/NNN/. */
export const ADJUDICATION_ARTIFACT_DIR_RE = /^(\d{3})$/;

export function recordNumber(n: number): string {
  return String(n).padStart(3, '0');
}
