import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { ImepError, sha256Hex, canonicalJson, canonicalPrettyJson } from '../../core/index.js';
import { ioError, writeJsonAtomic } from './atomic-write.js';

/**
 * Reading and writing the unit's JSON record files. Records are stored in the pretty canonical form
 * (src/core/canonical-json.ts); a reader re-renders what it parsed and requires identical bytes, so a record
 * is either exactly what imep wrote or reported as not. Self-hashed records carry `sha256` =
 * SHA-256 of the canonical compact JSON of the record without its `sha256` field.
 */

export type RecordRead<T> =
  | { readonly kind: 'missing' }
  | { readonly kind: 'bad'; readonly reason: string }
  | { readonly kind: 'ok'; readonly value: T; readonly bytes: Buffer };

export async function readRecord<S extends z.ZodType>(path: string, schema: S): Promise<RecordRead<z.infer<S>>> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return { kind: 'missing' };
    if ((e as { code?: string }).code === 'EISDIR') return { kind: 'bad', reason: 'is a directory' };
    throw ioError(path, 'read', e);
  }
  return parseRecordBytes(bytes, schema);
}

/**
 * Parses a record's bytes (JSON, the canonical pretty form imep writes, the schema) — also from a buffer already
 * in memory (verified-read.ts), so the bytes parsed are the bytes hashed.
 */
export function parseRecordBytes<S extends z.ZodType>(bytes: Buffer, schema: S): RecordRead<z.infer<S>> {
  const text = bytes.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'bad', reason: 'is not valid JSON' };
  }
  let rerendered: string;
  try {
    rerendered = canonicalPrettyJson(parsed);
  } catch {
    return { kind: 'bad', reason: 'holds values canonical JSON cannot' };
  }
  if (rerendered !== text) return { kind: 'bad', reason: 'is not in the canonical form imep writes (edited by hand?)' };
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    return {
      kind: 'bad',
      reason: `does not match its schema at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    };
  }
  return { kind: 'ok', value: result.data, bytes };
}

/** Reads a record that must exist and be intact, else throws E_UNIT_TAMPERED (or E_IO for a missing file). */
export async function readRequiredRecord<S extends z.ZodType>(
  path: string,
  schema: S,
  missingHint: string,
): Promise<z.infer<S>> {
  const r = await readRecord(path, schema);
  if (r.kind === 'missing') throw new ImepError('E_IO', 'file not found', { file: path, hint: missingHint });
  if (r.kind === 'bad') {
    throw new ImepError('E_UNIT_TAMPERED', `the record ${r.reason}`, {
      file: path,
      hint: 'run `imep campaign verify` to see what changed',
    });
  }
  return r.value;
}

/** SHA-256 of a record's canonical compact JSON, excluding its own `sha256` field. */
export function selfHash(record: object): string {
  const copy: Record<string, unknown> = { ...record };
  delete copy['sha256'];
  return sha256Hex(canonicalJson(copy));
}

/** Adds the self hash. */
export function withSelfHash<T extends object>(record: T): T & { sha256: string } {
  return { ...record, sha256: selfHash(record) };
}

export function selfHashOk(record: { sha256: string }): boolean {
  return selfHash(record) === record.sha256;
}

export async function writeRecord(path: string, value: unknown): Promise<void> {
  await writeJsonAtomic(path, value);
}
