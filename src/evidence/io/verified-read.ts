/**
 * Reading a verified unit without a second look at the disk. `verifyUnit` hashes every file; a consumer
 * that then opened the file again could be served other bytes (a swap between the verification and the
 * read — hard links, atomic renames). So every consumer of a verified unit reads each input ONCE into
 * memory with `readVerified`, which compares the SHA-256 of exactly those bytes with the entry the
 * verification vouched for (the seal's manifest entry, or the record's that binds the file) and hands back
 * that same buffer to be parsed. A mismatch throws E_UNIT_TAMPERED naming the file: nothing is computed on
 * bytes that were not the verified ones.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { ImepError, sha256Hex } from '../../core/index.js';
import type { CloseoutRecord } from '../records/post-seal-records.js';
import { parseRecordBytes } from './record-file.js';
import type { SealRecord } from '../records/seal-record.js';
import type { VerifyOk } from '../verify/verify-types.js';

/** A unit as one verification saw it: the seal and closeout parsed from the very bytes it hashed. */
export interface VerifiedUnit {
  readonly dir: string;
  readonly result: VerifyOk;
  readonly seal: SealRecord;
  readonly sealBytes: Buffer;
  readonly closeout: CloseoutRecord | null;
  readonly closeoutBytes: Buffer | null;
  /** Unit-relative path → SHA-256 of the bytes the verification hashed (and found bound by a manifest or record). */
  readonly hashes: ReadonlyMap<string, string>;
}

/**
 * Test seam: called once a unit has verified and before any consumer reads from it (tests swap a file
 * here to show that the consumer refuses the swapped bytes). Never set outside tests.
 */
export const verifiedReadTestHooks: {
  afterVerify?: (dir: string) => Promise<void> | void;
  /** Called inside verification once every file is hashed and before its later checks (tests swap a file here). */
  afterHashing?: (dir: string) => Promise<void> | void;
} = {};

const TAMPERED_HINT =
  'a file changed after it was verified: restore the unit from an intact copy; `imep campaign verify` lists every difference';

/**
 * Reads `path` (unit-relative) once and returns its bytes if their SHA-256 is `expectedSha256`; throws
 * E_UNIT_TAMPERED naming the file otherwise (or when no verified entry vouches for it).
 */
export async function readVerified(unitDir: string, path: string, expectedSha256: string | undefined): Promise<Buffer> {
  const file = join(unitDir, path);
  if (expectedSha256 === undefined) {
    throw new ImepError('E_UNIT_TAMPERED', `${path} is not among the files the verification vouched for`, {
      file,
      hint: TAMPERED_HINT,
    });
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw new ImepError('E_UNIT_TAMPERED', `${path} cannot be read after it was verified`, {
      file,
      hint: TAMPERED_HINT,
      cause: e,
    });
  }
  const found = sha256Hex(bytes);
  if (found !== expectedSha256) {
    throw new ImepError(
      'E_UNIT_TAMPERED',
      `${path} changed after verification: its bytes hash to ${found.slice(0, 12)}…, the verified entry says ${expectedSha256.slice(0, 12)}…`,
      {
        file,
        hint: TAMPERED_HINT,
      },
    );
  }
  return bytes;
}

/** The sealed manifest's SHA-256 for a unit-relative path (undefined when the seal does not list it). */
export function sealedSha256(unit: VerifiedUnit, path: string): string | undefined {
  return unit.seal.files.find((f) => f.path === path)?.sha256;
}

/** Reads a file the seal lists, checked against the seal's entry. */
export function readSealed(unit: VerifiedUnit, path: string): Promise<Buffer> {
  return readVerified(unit.dir, path, sealedSha256(unit, path));
}

/** Reads a record once against `expectedSha256` and parses those bytes; E_UNIT_TAMPERED when either fails. */
export async function readVerifiedRecord<S extends z.ZodType>(
  unitDir: string,
  path: string,
  expectedSha256: string | undefined,
  schema: S,
): Promise<z.infer<S>> {
  const bytes = await readVerified(unitDir, path, expectedSha256);
  const r = parseRecordBytes(bytes, schema);
  if (r.kind !== 'ok') {
    throw new ImepError('E_UNIT_TAMPERED', `${path} ${r.kind === 'bad' ? r.reason : 'is missing'}`, {
      file: join(unitDir, path),
      hint: TAMPERED_HINT,
    });
  }
  return r.value;
}
