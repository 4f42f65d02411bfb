/**
 * The CLI's use of this machine's seen store (src/evidence/seen-store.ts): a command that writes a stage of a unit
 * refuses first when the unit is already a rollback of what this machine saw, and records the stage it leaves.
 */
import {
  readSeen,
  rememberSeen,
  rollbackError,
  rollbackOf,
  seenStateOfUnit,
  type SeenEvent,
} from '../evidence/index.js';

/** E_ROLLBACK when the unit as it stands rolls back what this machine saw (nothing written); else nothing. */
export async function refuseSeenRollback(dir: string): Promise<void> {
  const now = await seenStateOfUnit(dir);
  if (now === null) return;
  const rolled = rollbackOf(await readSeen(now), now);
  if (rolled !== null) throw rollbackError(rolled, now);
}

/** Records the stage the command left the unit at (nothing when it has no readable seal yet, e.g. a shard). */
export async function recordSeen(dir: string, event: Exclude<SeenEvent, 'accept-rollback' | 'verify'>): Promise<void> {
  const now = await seenStateOfUnit(dir);
  if (now !== null) await rememberSeen(now, { event, dir });
}
