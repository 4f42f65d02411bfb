import { chmod, readdir, readFile } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ImepError, sha256Hex } from '../../core/index.js';
import { ioError, removeStaleTemps } from '../io/atomic-write.js';
import { readAmendments } from './amend.js';
import { readRows, repairTornTail } from '../io/durable-append.js';
import { buildManifest, listEntries, listTree, ManifestEntrySchema, MERKLE_SCHEME, merkleRoot } from '../manifest.js';
import { STRAY_DIRECTORY_DETAIL, strayDirectories } from '../unit-directories.js';
import { currentOperator } from '../operator.js';
import { loadFrozenProtocol } from './precommit.js';
import { readRequiredRecord, selfHashOk, withSelfHash, writeRecord } from '../io/record-file.js';
import { writeUnitHeader } from '../records/unit-header.js';
import { OperatorSchema, Sha256HexSchema, UNIT_FILES, unitPaths, type Operator } from '../unit-layout.js';
import { requireAction } from '../unit-state.js';
import { attestedFile, writeStageAttestations } from '../attestation/index.js';
import { SealRecordSchema, type SealRecord } from '../records/seal-record.js';
import { SignatureBlockSchema, prepareSigner, prevLink, signRecord } from '../../signing/index.js';

/**
 * Seal: run-complete → sealed. Steps: the protocol is checked against the precommit; leftover temp
 * files are removed; unit.json is set to 'sealed'; a SHA-256 manifest of EVERY file in the unit
 * (except seal.json itself and the amendment log, which is bound by its prefix hash instead so that
 * post-seal amendments can extend it) and its Merkle root (manifest.ts) are written to seal.json
 * atomically — the commit point; then every file is made read-only (0444) and every directory 0555.
 *
 * The permissions are a courtesy against accidents only: root (and the owner, with chmod) can still
 * write. What protects a sealed unit is verification (verify.ts) against the recorded hashes, and
 * ultimately the Merkle root cited outside the unit. A unit with symlinks, special files, files in
 * adjudication/ or a directory holding no file outside the layout (unit-directories.ts) is refused.
 */

export interface SealOptions {
  readonly operator?: Operator;
  readonly now?: () => Date;
}

export interface SealResult {
  readonly record: SealRecord;
  readonly removedTempFiles: string[];
}

/** Paths never listed in the seal manifest. */
export const SEAL_EXCLUDED: readonly string[] = [UNIT_FILES.seal, UNIT_FILES.amendments, UNIT_FILES.closeout];

export async function seal(dir: string, opts: SealOptions = {}): Promise<SealResult> {
  const snap = await requireAction(dir, 'seal');
  const paths = unitPaths(dir);
  const frozen = await loadFrozenProtocol(dir);
  const rows = await readRows(paths.rows);
  if (rows.torn !== null)
    throw new ImepError('E_UNIT_TAMPERED', 'rows.jsonl ends in a torn line', { file: paths.rows });
  const removedTempFiles = await removeStaleTemps(dir);
  const { entries, directories } = await listTree(dir);
  const emptyDir = strayDirectories(
    directories,
    entries.map((e) => e.path),
  )[0];
  if (emptyDir !== undefined) {
    throw new ImepError('E_UNIT_TAMPERED', `cannot seal ${STRAY_DIRECTORY_DETAIL} (verify would report it as stray)`, {
      file: join(dir, emptyDir),
      hint: 'an empty folder is no evidence: remove it (rmdir) and seal again',
    });
  }
  for (const e of entries) {
    if (e.type !== 'file') {
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `cannot seal a ${e.type === 'symlink' ? 'symbolic link' : 'special file'}`,
        {
          file: join(dir, e.path),
          hint: 'an evidence unit holds regular files only; replace it with the file itself',
        },
      );
    }
    if (e.path.startsWith(`${UNIT_FILES.adjudicationDir}/`) || e.path === UNIT_FILES.closeout) {
      throw new ImepError('E_UNIT_TAMPERED', 'a post-seal record exists before the seal', {
        file: join(dir, e.path),
        hint: 'run `imep campaign verify`',
      });
    }
  }
  const operator = opts.operator ?? currentOperator();
  await prepareSigner(operator.id); // a missing or unwritable key store refuses before unit.json changes
  if (snap.header.status !== 'sealed') await writeUnitHeader(dir, { ...snap.header, status: 'sealed' });
  await repairTornTail(paths.amendments);
  const log = await readAmendments(dir);
  const amendmentBytes = await readFile(paths.amendments).catch(() => Buffer.alloc(0));
  // attestations of an earlier, interrupted seal sign a seal.json that is gone: never sealed, rewritten below
  const listed = (await listEntries(dir))
    .map((e) => e.path)
    .filter((p) => !SEAL_EXCLUDED.includes(p) && attestedFile(p) === null);
  const files = await buildManifest(dir, listed);
  const record: SealRecord = withSelfHash(
    await signRecord(
      {
        kind: 'imep.seal' as const,
        version: 1 as const,
        unitId: snap.header.id,
        sealedAt: (opts.now ?? (() => new Date()))().toISOString(),
        operator,
        protocolHash: frozen.protocolHash,
        precommitSha256: frozen.precommit.sha256,
        merkle: { scheme: MERKLE_SCHEME, root: merkleRoot(files) },
        files,
        amendments: {
          count: log.amendments.length,
          bytes: amendmentBytes.length,
          sha256: sha256Hex(amendmentBytes),
          headSha256: log.headSha256,
        },
      },
      { signer: operator.id, prev: await prevLink(dir, UNIT_FILES.precommit) },
    ),
  );
  await writeRecord(paths.seal, record);
  await writeStageAttestations(dir, {
    manifest: UNIT_FILES.seal,
    operatorId: operator.id,
    predicate: {
      unitId: record.unitId,
      stage: 'sealed',
      protocolHash: record.protocolHash,
      merkle: record.merkle,
      sealRoot: record.merkle.root,
      verdicts: [],
    },
  });
  await makeReadOnly(dir);
  return { record, removedTempFiles };
}

/** Reads seal.json and checks its self-hash and Merkle root (E_UNIT_TAMPERED otherwise). */
export async function readSeal(dir: string): Promise<SealRecord> {
  const file = unitPaths(dir).seal;
  const record = await readRequiredRecord(file, SealRecordSchema, 'the unit is not sealed: run `imep campaign seal`');
  if (!selfHashOk(record) || merkleRoot(record.files) !== record.merkle.root) {
    throw new ImepError('E_UNIT_TAMPERED', 'seal.json does not match its own SHA-256 or Merkle root', {
      file,
      hint: 'run `imep campaign verify`',
    });
  }
  return record;
}

/** chmod every file 0444 and every directory 0555 under (and including) `root`. */
export async function makeReadOnly(root: string): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    let names: Dirent[];
    try {
      names = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      throw ioError(dir, 'list', e);
    }
    for (const d of names) {
      const abs = join(dir, d.name);
      if (d.isDirectory()) await walk(abs);
      else if (d.isFile())
        await chmod(abs, 0o444).catch((e: unknown) => Promise.reject(ioError(abs, 'make read-only', e)));
    }
    await chmod(dir, 0o555).catch((e: unknown) => Promise.reject(ioError(dir, 'make read-only', e)));
  };
  await walk(root);
}
