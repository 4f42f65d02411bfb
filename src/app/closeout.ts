/**
 * `closeoutUnit`: cross-checked → closed — the final seal after adjudication. It refuses a unit whose
 * last cross-check did not agree, then runs the store's closeout (src/evidence/transitions/closeout-write.ts): verify the
 * unit, write closeout.json — a manifest over seal.json, amendments.jsonl and every file in
 * adjudication/, with its own Merkle root, the amendments with their classification, the current
 * adjudication and cross-check — and make everything read-only. After this nothing can be added (every
 * write API refuses with E_UNIT_SEALED); the closeout root is the fingerprint to cite.
 */
import { ImepError } from '../core/index.js';
import { readCrossChecks, closeout, assertAllowed, readUnitState } from '../evidence/index.js';
import type { CloseoutRecord, Operator } from '../evidence/index.js';

export interface CloseoutUnitOptions {
  readonly notes?: string;
  readonly operator?: Operator;
  readonly now?: () => Date;
}

export async function closeoutUnit(unitDir: string, opts: CloseoutUnitOptions = {}): Promise<CloseoutRecord> {
  const snap = await readUnitState(unitDir);
  assertAllowed(snap.header.id, snap.state, 'closeout', unitDir);
  const last = (await readCrossChecks(unitDir)).at(-1);
  if (last !== undefined && last.outcome !== 'agrees') {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${snap.header.id}: the last cross-check ${last.outcome === 'disagrees' ? 'disagrees with' : 'did not check'} the adjudication; it cannot be closed out`,
      {
        file: unitDir,
        hint: 'read the disagreements in adjudication/cross-check-NNN.json; a unit whose numbers do not reproduce is not closed',
      },
    );
  }
  return closeout(unitDir, {
    ...(opts.notes !== undefined ? { notes: opts.notes } : {}),
    ...(opts.operator ? { operator: opts.operator } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
}
