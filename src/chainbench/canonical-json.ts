/**
 * Canonical JSON for chain manifests and decision files (a local, minimal implementation).
 *
 * NOTE for the lead: `src/protocol/canonical-json.ts` did not exist when this folder was written
 * (src/campaign has its own copy). This file follows the same rules — object keys sorted by UTF-16
 * code units, no insignificant whitespace, numbers in ECMAScript shortest round-trip form, −0 written
 * as 0, strings escaped as JSON.stringify does, `undefined` properties omitted — so the hashes agree;
 * replace it with the protocol module's when that lands.
 *
 * Anything JSON cannot hold exactly (NaN, ±Infinity, bigint, functions, class instances such as typed
 * arrays, an `undefined` array element, a cycle) throws E_INTERNAL naming the JSON path.
 */
import { ImepError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

function fail(path: string, what: string): never {
  throw new ImepError('E_INTERNAL', `cannot write ${what} as canonical JSON`, { field: path || '(root)' });
}

function normalise(value: unknown, path: string, seen: Set<object>): JsonValue {
  if (value === null) return null;
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      if (!Number.isFinite(value)) fail(path, String(value));
      return Object.is(value, -0) ? 0 : value;
    case 'object': {
      if (seen.has(value)) fail(path, 'a cyclic structure');
      seen.add(value);
      try {
        if (Array.isArray(value)) {
          return value.map((v: unknown, i) => {
            if (v === undefined) fail(`${path}[${i}]`, 'undefined');
            return normalise(v, `${path}[${i}]`, seen);
          });
        }
        const proto: unknown = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) fail(path, `a ${value.constructor?.name ?? 'non-plain'} object`);
        const out: { [key: string]: JsonValue } = {};
        for (const key of Object.keys(value).sort()) {
          const v: unknown = (value as Record<string, unknown>)[key];
          if (v === undefined) continue;
          out[key] = normalise(v, path === '' ? key : `${path}.${key}`, seen);
        }
        return out;
      } finally {
        seen.delete(value);
      }
    }
    default:
      return fail(path, typeof value);
  }
}

/** The value as plain, key-sorted JSON data. */
export function toJsonValue(value: unknown): JsonValue {
  return normalise(value, '', new Set());
}

/** Canonical compact JSON text (keys sorted, no whitespace). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(toJsonValue(value));
}

/** Keys sorted, two-space indent, one trailing newline: the on-disk form of manifests and decision files. */
export function canonicalPrettyJson(value: unknown): string {
  return `${JSON.stringify(toJsonValue(value), null, 2)}\n`;
}

/** SHA-256 (hex) of the canonical compact JSON. */
export function canonicalSha256(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
