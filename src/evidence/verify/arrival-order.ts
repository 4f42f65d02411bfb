/**
 * verify's check of a hosted unit's arrival-order key (arrival-order.ts): precommit.json (signed before any data)
 * commits to the SHA-256 of arrival-order.json, so the key a verifier replays the arrival order with is the one
 * drawn at precommit — not one swapped in before the seal (which the seal's manifest alone would accept).
 */
import { ARRIVAL_ORDER_FILE, ArrivalOrderCommitmentSchema } from '../records/arrival-order-record.js';
import type { VerifyIssue } from './verify-types.js';

/** Issues of arrival-order.json against the commitment in precommit.json's bytes (none when it commits none). */
export function arrivalOrderIssues(precommitBytes: Buffer | null, hashes: ReadonlyMap<string, string>): VerifyIssue[] {
  if (precommitBytes === null) return [];
  let commitment: unknown;
  try {
    commitment = (JSON.parse(precommitBytes.toString('utf8')) as { arrivalOrder?: unknown } | null)?.arrivalOrder;
  } catch {
    return []; // precommit.json's own defect is reported by the seal manifest and the signature chain
  }
  if (commitment === undefined) return [];
  const parsed = ArrivalOrderCommitmentSchema.safeParse(commitment);
  if (!parsed.success) return [];
  const actual = hashes.get(ARRIVAL_ORDER_FILE);
  if (actual === undefined) {
    return [
      {
        path: ARRIVAL_ORDER_FILE,
        kind: 'missing',
        detail: 'precommit.json commits to an arrival-order key, but the file is gone',
      },
    ];
  }
  if (actual !== parsed.data.sha256) {
    return [
      {
        path: ARRIVAL_ORDER_FILE,
        kind: 'modified',
        detail: `its SHA-256 ${actual} is not the ${parsed.data.sha256} precommit.json committed to: the key was changed after precommit`,
      },
    ];
  }
  return [];
}
