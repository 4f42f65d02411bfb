/**
 * Canonical JSON (RFC 8785-like), the byte form that protocol and plan hashes are taken over.
 *
 * - Objects: keys sorted by UTF-16 code units (JavaScript's default string order, as RFC 8785);
 *   object members whose value is `undefined` are omitted (as JSON.stringify does).
 * - No insignificant whitespace.
 * - Numbers: the shortest string that round-trips (ECMAScript Number::toString, which RFC 8785
 *   adopts). `-0` is normalised to `0` (its canonical form is "0", as in RFC 8785). NaN and ±Infinity
 *   are refused: JSON has no form for them.
 * - Strings: JSON escapes for `"`, `\\` and control characters (lower-case \u00xx, \b \f \n \r \t),
 *   every other character as itself; lone surrogates are refused (they have no UTF-8 encoding).
 * - Only null, booleans, finite numbers, strings, arrays and plain objects; anything else (undefined
 *   in an array, bigint, functions, symbols, Dates, Maps, class instances) is refused.
 *
 * Refusals throw ImepError naming the JSON path (`$.a[2].b`), with code E_INTERNAL by default (a value
 * that reached hashing unvalidated is a bug) or the caller's code (protocols: E_PROTOCOL_INVALID).
 *
 * This is the one canonical form in IMEP: protocol and plan hashes, evidence-unit records, seal
 * manifests and chain manifests all use it.
 */
import { ImepError, type ErrorCode } from './errors.js';
import { sha256Hex } from './hash.js';

export interface CanonicalOptions {
  /** The error code of a refusal (default E_INTERNAL). */
  readonly code?: ErrorCode;
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

let refusalCode: ErrorCode = 'E_INTERNAL';

function refuse(path: string, message: string): never {
  throw new ImepError(refusalCode, `cannot write canonical JSON: ${message}`, {
    field: path,
    hint: 'only null, booleans, finite numbers, well-formed strings, arrays and plain objects have a canonical form',
  });
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return true;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return true;
    }
  }
  return false;
}

/**
 * The path of the value being written, kept as segments (array indices and object keys) and spelled out
 * only when a refusal names it: `$`, then `[i]` per index, `.key` per identifier-like key, else `["key"]`.
 */
type PathSegments = (string | number)[];

function pathOf(segs: PathSegments): string {
  let path = '$';
  for (const seg of segs) {
    if (typeof seg === 'number') path += `[${seg}]`;
    else path += /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(seg) ? `.${seg}` : `[${JSON.stringify(seg)}]`;
  }
  return path;
}

/** The canonical form of a number: shortest round-trip, -0 → 0; NaN/Infinity refused. */
export function canonicalNumber(n: number, path = '$'): string {
  return numberAt(n, path);
}

/** canonicalNumber with the path given as segments (spelled out only for a refusal). */
function numberAt(n: number, path: string | PathSegments): string {
  if (!Number.isFinite(n)) refuse(typeof path === 'string' ? path : pathOf(path), `${String(n)} is not a JSON number`);
  return Object.is(n, -0) ? '0' : String(n);
}

/** The canonical form of a string (JSON.stringify's escaping, which matches RFC 8785 for well-formed text). */
function stringAt(s: string, segs: PathSegments): string {
  if (hasLoneSurrogate(s)) refuse(pathOf(segs), 'string contains a lone surrogate');
  return JSON.stringify(s);
}

function write(value: unknown, segs: PathSegments, stack: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return numberAt(value, segs);
    case 'string':
      return stringAt(value, segs);
    case 'object':
      break;
    default:
      return refuse(pathOf(segs), `a ${typeof value} has no JSON form`);
  }
  if (stack.has(value)) refuse(pathOf(segs), 'the value is cyclic');
  stack.add(value);
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      segs.push(i);
      if (item === undefined) refuse(pathOf(segs), 'undefined inside an array');
      if (i > 0) out += ',';
      out += write(item, segs, stack);
      segs.pop();
    }
    out += ']';
  } else {
    if (!isPlainObject(value))
      refuse(pathOf(segs), `a ${value.constructor?.name ?? 'non-plain'} object has no canonical form`);
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    out = '{';
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const v = record[key];
      if (v === undefined) continue;
      segs.push(key);
      const name = stringAt(key, segs);
      if (!first) out += ',';
      first = false;
      out += `${name}:${write(v, segs, stack)}`;
      segs.pop();
    }
    out += '}';
  }
  stack.delete(value);
  return out;
}

/** The canonical JSON text of `value`. */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  const previous = refusalCode;
  refusalCode = options.code ?? 'E_INTERNAL';
  try {
    return write(value, [], new Set());
  } finally {
    refusalCode = previous;
  }
}

/** The canonical JSON of `value` as UTF-8 bytes. */
export function canonicalBytes(value: unknown, options: CanonicalOptions = {}): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value, options));
}

/** SHA-256 (hex) of the canonical JSON of `value`. */
export function canonicalHash(value: unknown, options: CanonicalOptions = {}): string {
  return sha256Hex(canonicalJson(value, options));
}

/** The value as plain JSON data (validated the same way; undefined members dropped). */
export function toJsonValue(value: unknown, options: CanonicalOptions = {}): JsonValue {
  return JSON.parse(canonicalJson(value, options)) as JsonValue;
}

/**
 * The human-readable on-disk form: keys sorted, two-space indent, one trailing newline. Hashes are
 * always taken over the compact form (`canonicalJson`), never over this text.
 */
export function canonicalPrettyJson(value: unknown, options: CanonicalOptions = {}): string {
  return `${prettyWrite(toJsonValue(value, options), '')}\n`;
}

function prettyWrite(value: JsonValue, indent: string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => inner + prettyWrite(v, inner)).join(',\n')}\n${indent}]`;
  }
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return '{}';
  return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${prettyWrite(value[k] as JsonValue, inner)}`).join(',\n')}\n${indent}}`;
}
