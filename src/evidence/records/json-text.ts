/**
 * Reading a record's JSON text without a cast: `parseJsonText` types what JSON.parse returns as a JsonValue (checked,
 * not asserted), and `parseRecordText` parses it through the record's schema. Both throw one ImepError naming the
 * file (and the field) — E_INTERNAL by default, for text that was verified against its hash and so can only be
 * wrong if IMEP wrote it wrong. Consumers that read a file once as text (the cross-check, the report) use these.
 */
import type { z } from 'zod';
import { ImepError, type ErrorCode, type JsonValue } from '../../core/index.js';

function isJsonValue(v: unknown): v is JsonValue {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJsonValue);
  if (typeof v === 'object') return Object.values(v).every(isJsonValue);
  return false;
}

/** The JSON value `text` holds; `where` names the file in the error. */
export function parseJsonText(text: string, where: string, code: ErrorCode = 'E_INTERNAL'): JsonValue {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ImepError(code, `${where} is not valid JSON`, { file: where, cause: e });
  }
  if (!isJsonValue(value)) throw new ImepError(code, `${where} holds a value JSON cannot`, { file: where });
  return value;
}

/** The record `text` holds, parsed through its schema; the error names the file and the first field that fails. */
export function parseRecordText<S extends z.ZodType>(
  schema: S,
  text: string,
  where: string,
  code: ErrorCode = 'E_INTERNAL',
): z.infer<S> {
  const r = schema.safeParse(parseJsonText(text, where, code));
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const at = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
  throw new ImepError(code, `${where} does not match its schema at ${at}: ${issue?.message ?? 'invalid'}`, {
    file: where,
    ...(at === '(root)' ? {} : { field: at }),
  });
}
