/**
 * The CLI's use of this machine's seen store (src/evidence/seen-store.ts): a command that writes a stage of a unit
 * refuses first when the unit is already a rollback of what this machine saw, and records the stage it leaves.
 * Only what this machine itself wrote or fully verified is recorded (else a forged unit with the same precommit,
 * adjudicated or closed out here, would poison the store and the genuine unit would be refused as a rollback).
 */
import {
  readSeen,
  rememberSeen,
  rollbackError,
  rollbackOf,
  seenStateOfUnit,
  seenStateOfVerified,
  verifyUnit,
  type SeenEvent,
} from '../evidence/index.js';

/** E_ROLLBACK when the unit as it stands rolls back what this machine saw (nothing written); else nothing. */
export async function refuseSeenRollback(dir: string): Promise<void> {
  const now = await seenStateOfUnit(dir);
  if (now === null) return;
  const rolled = rollbackOf(await readSeen(now), now);
  if (rolled !== null) throw rollbackError(rolled, now);
}

/**
 * Records the stage the command left the unit at (nothing when it has no readable seal yet, e.g. a shard).
 * 'run' and 'seal': this machine wrote the seal, so the unit's state is its own. 'adjudicate', 'closeout' and
 * 'trust': this machine wrote at most a record after someone's seal, so the state is recorded only when this
 * machine already recorded that seal root (it wrote or fully verified it), or the unit now verifies intact with
 * every signer trusted; otherwise nothing is recorded.
 */
export async function recordSeen(dir: string, event: Exclude<SeenEvent, 'accept-rollback' | 'verify'>): Promise<void> {
  const now = await seenStateOfUnit(dir);
  if (now === null) return;
  if (event === 'run' || event === 'seal') {
    await rememberSeen(now, { event, dir });
    return;
  }
  const known = (await readSeen(now)).some((l) => l.sealRoot === now.sealRoot);
  if (known) {
    await rememberSeen(now, { event, dir });
    return;
  }
  const r = await verifyUnit(dir);
  if (!r.ok || r.trust.status !== 'trusted') return;
  const verified = seenStateOfVerified(r);
  if (verified !== null) await rememberSeen(verified, { event, dir });
}
