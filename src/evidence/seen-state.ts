/**
 * The state of a unit as the seen store records it (seen-store.ts): from a verification's result, or — right after
 * this machine wrote a stage (seal, adjudication, closeout) — from the unit's own seal.json and closeout.json (each
 * checked against its own SHA-256 and Merkle root; the full re-hash is `verify`'s).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { merkleRoot } from './manifest.js';
import { readRecord, selfHashOk } from './io/record-file.js';
import { CloseoutRecordSchema } from './records/post-seal-records.js';
import { SealRecordSchema } from './records/seal-record.js';
import { ADJUDICATION_RECORD_RE, UNIT_FILES } from './unit-layout.js';
import type { VerifyOk } from './verify/verify-types.js';
import type { SeenAdjudication, SeenState } from './seen-store.js';
import { countLines } from './verify/verify.js';
import { sha256Hex } from '../core/index.js';

/** The seen state of a verified unit; null when its seal lists no precommit.json (nothing to key it by). */
export function seenStateOfVerified(r: VerifyOk): SeenState | null {
  if (r.precommitSha256 === null) return null;
  return {
    unitId: r.unitId,
    precommitSha256: r.precommitSha256,
    stage: r.stage,
    root: r.root,
    sealRoot: r.sealRoot,
    adjudication: r.latestAdjudication,
    amendments: r.amendments,
  };
}

/** The seen state of a unit this machine just wrote a stage of; null when its seal or closeout does not read back. */
export async function seenStateOfUnit(dir: string): Promise<SeenState | null> {
  const seal = await readRecord(join(dir, UNIT_FILES.seal), SealRecordSchema);
  if (seal.kind !== 'ok' || !selfHashOk(seal.value) || merkleRoot(seal.value.files) !== seal.value.merkle.root)
    return null;
  const precommit = seal.value.files.find((f) => f.path === UNIT_FILES.precommit)?.sha256;
  if (precommit === undefined) return null;
  const adjudication = await latestAdjudication(dir);
  if (adjudication === undefined) return null;
  const amendments = await readFile(join(dir, UNIT_FILES.amendments)).then(countLines, () => 0);
  const base = {
    unitId: seal.value.unitId,
    precommitSha256: precommit,
    sealRoot: seal.value.merkle.root,
    adjudication,
    amendments,
  };
  const closeout = await readRecord(join(dir, UNIT_FILES.closeout), CloseoutRecordSchema);
  if (closeout.kind === 'ok') {
    if (!selfHashOk(closeout.value) || merkleRoot(closeout.value.files) !== closeout.value.merkle.root) return null;
    return { ...base, stage: 'closed', root: closeout.value.merkle.root };
  }
  return { ...base, stage: adjudication === null ? 'sealed' : 'adjudicated', root: seal.value.merkle.root };
}

/** The highest-numbered adjudication record and the SHA-256 of its bytes; null when none, undefined when unreadable. */
async function latestAdjudication(dir: string): Promise<SeenAdjudication | null | undefined> {
  const names = await readdir(join(dir, UNIT_FILES.adjudicationDir)).catch(() => [] as string[]);
  const n = Math.max(0, ...names.map((name) => Number(ADJUDICATION_RECORD_RE.exec(name)?.[1] ?? 0)));
  if (n === 0) return null;
  const bytes = await readFile(
    join(dir, UNIT_FILES.adjudicationDir, `adjudication-${String(n).padStart(3, '0')}.json`),
  ).catch(() => null);
  return bytes === null ? undefined : { n, sha256: sha256Hex(bytes) };
}
