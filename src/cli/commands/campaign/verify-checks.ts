/**
 * The checks of `imep campaign verify` after the unit is re-hashed (verify.ts runs them in this order): the
 * `--trusted-keys` folder, a tampered unit, a rollback of what this machine saw, a stage short of
 * `--expected-stage`, untrusted or unsigned signatures, and the record of what was seen. Each refuses with
 * the exit code its ImepError code maps to (exit-codes.ts).
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ImepError, cliName } from '../../../core/index.js';
import {
  describeIssue,
  readSeen,
  rememberSeen,
  rollbackError,
  rollbackOf,
  seenFile,
  type SeenState,
  type VerifyFailed,
  type VerifyOk,
} from '../../../evidence/index.js';
import { describeUntrusted, keysDir } from '../../../signing/index.js';
import { stageShortfall } from './verify-output.js';
import { out } from './options.js';

/** `--trusted-keys` must name a folder. */
export async function refuseMissingKeysDir(trustedKeys: string | undefined): Promise<void> {
  if (trustedKeys === undefined) return;
  const isDir = await stat(trustedKeys).then(
    (st) => st.isDirectory(),
    () => false,
  );
  if (!isDir)
    throw new ImepError('E_USAGE', 'not a folder of trusted public keys', {
      field: '--trusted-keys',
      file: trustedKeys,
    });
}

/** A unit that failed the re-hash: its first issue (and how many more), exit 3. */
export function tamperedError(dir: string, r: VerifyFailed): ImepError {
  const more = r.issues.length > 1 ? ` (+${r.issues.length - 1} more)` : '';
  const hint =
    r.first.kind === 'root-mismatch'
      ? "check that the root cited is this unit's; a unit whose closeout was removed answers only to its seal root (restore its closeout from an intact copy)"
      : 'restore the unit from an intact copy';
  return new ImepError('E_UNIT_TAMPERED', `${describeIssue(r.first)}${more}`, { file: join(dir, r.first.path), hint });
}

/** A rollback of what this machine saw (exit 7), unless `--accept-rollback`. */
export async function refuseRollback(seenNow: SeenState | null, acceptRollback: boolean | undefined): Promise<void> {
  if (seenNow === null || acceptRollback) return;
  const rolled = rollbackOf(await readSeen(seenNow), seenNow);
  if (rolled !== null) throw rollbackError(rolled, seenNow);
}

/** A unit short of `--expected-stage` (exit 3). */
export function refuseShortStage(dir: string, r: VerifyOk, expectedStage: VerifyOk['stage'] | undefined): void {
  const short = expectedStage === undefined ? null : stageShortfall(r, expectedStage);
  if (short === null) return;
  throw new ImepError('E_UNIT_TAMPERED', short, {
    file: join(dir, r.stage === 'adjudicated' || expectedStage === 'closed' ? 'closeout.json' : 'adjudication'),
    hint: 'restore the unit from an intact copy',
  });
}

/** Signatures by untrusted keys, or none without a matching `--expected-root` or `--allow-unsigned` (exit 5). */
export function refuseUnvouched(
  dir: string,
  r: VerifyOk,
  allowUnsigned: boolean | undefined,
  trustedKeys?: string,
): void {
  if (r.trust.status === 'untrusted')
    throw new ImepError(
      'E_UNTRUSTED',
      describeUntrusted(cliName(), dir, r.trust.untrusted, trustedKeys === undefined ? keysDir() : undefined),
      {
        file: dir,
      },
    );
  if (r.trust.status === 'unsigned' && !allowUnsigned && r.rootMatched === undefined) {
    throw new ImepError(
      'E_UNTRUSTED',
      'intact, but it carries no signatures: nothing vouches for who produced it, and a signed unit stripped of its signatures and rebuilt looks exactly like this',
      {
        file: dir,
        hint: 'vouch for it with --expected-root <the root its producer published>, or accept it with --allow-unsigned',
      },
    );
  }
}

/** Records what this machine saw (once every check passed); warns when that accepted a rollback. */
export async function rememberVerified(
  dir: string,
  seenNow: SeenState | null,
  acceptRollback: boolean | undefined,
): Promise<void> {
  if (seenNow === null) return;
  const accepted = await rememberSeen(seenNow, {
    event: 'verify',
    dir,
    ...(acceptRollback ? { acceptRollback: true } : {}),
  });
  if (accepted !== null) out(`warning: rollback accepted and recorded in ${seenFile(seenNow)}`);
}
