/**
 * The state of a unit as the seen store records it (seen-store.ts): from a verification's result, or — right after
 * this machine wrote a stage (seal, adjudication, closeout) — from the unit's own seal.json and closeout.json (each
 * checked against its own SHA-256 and Merkle root; the full re-hash is `verify`'s).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { merkleRoot } from './manifest.js';
import { readRecord, selfHashOk } from './io/record-file.js';
import { CloseoutRecordSchema } from './records/post-seal-records.js';
import { SealRecordSchema } from './transitions/seal.js';
import { ADJUDICATION_RECORD_RE, UNIT_FILES } from './unit-layout.js';
import type { VerifyOk } from './verify/verify-types.js';
import type { SeenState } from './seen-store.js';

/** The seen state of a verified unit; null when its seal lists no precommit.json (nothing to key it by). */
export function seenStateOfVerified(r: VerifyOk): SeenState | null {
  if (r.precommitSha256 === null) return null;
  return { unitId: r.unitId, precommitSha256: r.precommitSha256, stage: r.stage, root: r.root, sealRoot: r.sealRoot };
}

/** The seen state of a unit this machine just wrote a stage of; null when its seal or closeout does not read back. */
export async function seenStateOfUnit(dir: string): Promise<SeenState | null> {
  const seal = await readRecord(join(dir, UNIT_FILES.seal), SealRecordSchema);
  if (seal.kind !== 'ok' || !selfHashOk(seal.value) || merkleRoot(seal.value.files) !== seal.value.merkle.root)
    return null;
  const precommit = seal.value.files.find((f) => f.path === UNIT_FILES.precommit)?.sha256;
  if (precommit === undefined) return null;
  const base = { unitId: seal.value.unitId, precommitSha256: precommit, sealRoot: seal.value.merkle.root };
  const closeout = await readRecord(join(dir, UNIT_FILES.closeout), CloseoutRecordSchema);
  if (closeout.kind === 'ok') {
    if (!selfHashOk(closeout.value) || merkleRoot(closeout.value.files) !== closeout.value.merkle.root) return null;
    return { ...base, stage: 'closed', root: closeout.value.merkle.root };
  }
  const adjudications = await readdir(join(dir, UNIT_FILES.adjudicationDir)).catch(() => [] as string[]);
  const stage = adjudications.some((n) => ADJUDICATION_RECORD_RE.test(n)) ? 'adjudicated' : 'sealed';
  return { ...base, stage, root: seal.value.merkle.root };
}
