/**
 * The one place that maps error codes to exit codes.
 * 2: the user's input was refused (usage, protocol, manifest, domain), or the unit's state refuses the step
 *    (a sealed unit cannot be sealed again or appended to: nothing was written, nothing is damaged), or the
 *    simulator stack the input names is not set up here (E_SIM_UNAVAILABLE: a package, a renderer, the
 *    interpreter IMEP_PYTHON names — a new unit refuses it before it writes anything).
 * 3: evidence integrity failed (tampering: the first bad file is named).
 * 4: an external resource failed (a simulator or bridge that dies or does not answer, cluster, file system).
 * 5: evidence intact, but not vouched for: signed by keys this verifier does not trust (`imep keys trust`),
 *    or not signed at all (a reviewer's `verify` refuses an unsigned unit unless --allow-unsigned or a matching
 *    --expected-root vouches for it).
 * 6: a formal run stopped UNSEALED because its execution failures exceeded the protocol's registered budget
 *    (`executionFailures.budget`): every row it wrote is kept; fix the cause and resume, or `imep campaign fail-run`.
 * 7: evidence intact, but rolled back: this machine saw the unit at a later stage or under another root
 *    (src/evidence/seen-store.ts; `--accept-rollback` records an intended one).
 * 130: a formal run stopped cleanly on SIGINT or SIGTERM (Ctrl-C): it printed how many rows are durable and the
 *    command that resumes it (src/campaign/run-stop.ts).
 * 1: anything else (a bug: please report it).
 */
import { ImepError, type ErrorCode, asTyped, terminalText } from '../core/index.js';

const EXIT_BY_CODE: Record<ErrorCode, number> = {
  E_USAGE: 2,
  E_PROTOCOL_INVALID: 2,
  E_PROTOCOL_FROZEN: 2,
  E_OUT_OF_ORDER: 2,
  E_SEED_OVERLAP: 2,
  E_ALLOWLIST_OVERLAP: 2,
  E_CHECKPOINT_MISSING: 2,
  E_CHECKPOINT_MISMATCH: 2,
  E_MANIFEST_INVALID: 2,
  E_STATS_DOMAIN: 2,
  E_BANK_INVALID: 2,
  E_INTERVENTION_INVALID: 2,
  E_DONOR_SHORT: 2,
  E_UNIT_TAMPERED: 3,
  E_UNIT_SEALED: 2,
  E_UNTRUSTED: 5,
  E_ROLLBACK: 7,
  E_SAME_OPERATOR: 2,
  E_BRIDGE_TIMEOUT: 4,
  E_BRIDGE_PROTOCOL: 4,
  E_BRIDGE_REMOTE: 4,
  E_SIM_UNAVAILABLE: 2,
  E_IO: 4,
  E_CLUSTER: 4,
  E_CONVENTION_MISMATCH: 2,
  E_FAILURE_BUDGET: 6,
  E_INTERRUPTED: 130,
  E_INTERNAL: 1,
};

export function exitCodeFor(error: unknown): number {
  return error instanceof ImepError ? EXIT_BY_CODE[error.code] : 1;
}

export function messageFor(error: unknown): string {
  if (error instanceof ImepError) return `imep: ${terminalText(asTyped(error.oneLine()))}`;
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return `imep: internal error (please report): ${terminalText(text)}`;
}
