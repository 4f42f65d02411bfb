import { ImepError, type ErrorCode } from '../core/errors.js';

/**
 * The one place that maps error codes to exit codes.
 * 2: the user's input was refused (usage, protocol, manifest, domain).
 * 3: evidence integrity failed (tampering, sealed unit written to).
 * 4: an external resource failed (simulator, bridge, cluster, file system).
 * 1: anything else (a bug: please report it).
 */
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
  E_UNIT_SEALED: 3,
  E_SAME_OPERATOR: 2,
  E_BRIDGE_TIMEOUT: 4,
  E_BRIDGE_PROTOCOL: 4,
  E_BRIDGE_REMOTE: 4,
  E_SIM_UNAVAILABLE: 4,
  E_IO: 4,
  E_CLUSTER: 4,
  E_INTERNAL: 1,
};

export function exitCodeFor(error: unknown): number {
  return error instanceof ImepError ? EXIT_BY_CODE[error.code] : 1;
}

export function messageFor(error: unknown): string {
  if (error instanceof ImepError) return `imep: ${error.oneLine()}`;
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return `imep: internal error (please report): ${text}`;
}
