/**
 * Protocol problems as one-line errors: `FILE:LINE:COL: YAML.PATH: what is wrong — how to fix it`.
 *
 * A `ProtocolIssue` is a problem at a path of the protocol data (from zod or from cross-check.ts);
 * the loader places it in the YAML source and throws a `ProtocolError` (an ImepError, so the CLI
 * prints `oneLine()` and maps the code to an exit code) for the first issue in file order, carrying
 * all of them in `issues`.
 */
import { z } from 'zod';
import { didYouMean, escapeLineBreaks, ImepError, type ErrorCode } from '../core/index.js';

export { didYouMean };
import { IssueSink, listSome } from './issue-cap.js';
import { kindFieldInfo, type WordedIssueParams } from './kind-field.js';
import { formatYamlPath, valueAt, type PathSegment, type SourcePos } from './yaml-locate.js';

export interface ProtocolIssue {
  readonly code: ErrorCode;
  readonly path: readonly PathSegment[];
  readonly message: string;
  readonly hint?: string;
  /** The last path segment names a map key (the error points at the key, not its value). */
  readonly key?: boolean;
}

export interface LocatedIssue extends ProtocolIssue {
  readonly pos: SourcePos | undefined;
}

export class ProtocolError extends ImepError {
  readonly line: number | undefined;
  readonly col: number | undefined;
  /** The problems kept (at most MAX_ISSUES, issue-cap.ts), the first one first. */
  readonly issues: readonly LocatedIssue[];
  /** How many problems the failing stage found (≥ issues.length: the rest were counted, not kept). */
  readonly total: number;

  constructor(
    file: string | undefined,
    issue: LocatedIssue,
    all: readonly LocatedIssue[] = [issue],
    total: number = all.length,
  ) {
    super(issue.code, issue.message, {
      ...(file === undefined ? {} : { file }),
      field: formatYamlPath(issue.path),
      ...(issue.hint === undefined ? {} : { hint: issue.hint }),
    });
    this.name = 'ProtocolError';
    this.line = issue.pos?.line;
    this.col = issue.pos?.col;
    this.issues = all;
    this.total = Math.max(total, all.length);
  }

  /** `FILE:LINE:COL: PATH: message — hint (and N more problems)`. */
  override oneLine(): string {
    const at = this.line === undefined ? '' : `:${this.line}:${this.col ?? 1}`;
    const where = this.file === undefined ? (at ? `line ${this.line}` : '') : `${this.file}${at}`;
    const more = this.total > 1 ? ` (and ${this.total - 1} more problem${this.total > 2 ? 's' : ''})` : '';
    const hint = this.hint ? ` — ${this.hint}` : '';
    return escapeLineBreaks(`${where ? `${where}: ` : ''}${this.field ?? '(root)'}: ${this.message}${hint}${more}`);
  }
}

// ---------------------------------------------------------------------------------------------
// zod schema navigation (for descriptions and allowed keys)

function inner(schema: z.ZodType): { schema: z.ZodType; description: string | undefined } {
  let s: z.ZodType = schema;
  let description = s.description ?? kindFieldInfo(s)?.describe();
  for (;;) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) {
      s = s.unwrap() as z.ZodType;
      description ??= s.description ?? kindFieldInfo(s)?.describe();
    } else {
      return { schema: s, description };
    }
  }
}

function literalValues(schema: z.ZodType): unknown[] {
  const s = inner(schema).schema;
  return s instanceof z.ZodLiteral ? [...s.values] : [];
}

function pickOption(u: z.ZodDiscriminatedUnion, data: unknown): z.ZodType | undefined {
  const disc = u._zod.def.discriminator;
  const value = data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[disc] : undefined;
  for (const option of u.options as readonly z.ZodType[]) {
    const o = inner(option).schema;
    if (o instanceof z.ZodObject) {
      const d = o.shape[disc] as z.ZodType | undefined;
      if (d && literalValues(d).includes(value)) return o;
    }
  }
  return undefined;
}

/** The schema (and its description) at `path`, following the data through discriminated unions. */
export function schemaAt(
  root: z.ZodType,
  path: readonly PathSegment[],
  data: unknown,
): { schema: z.ZodType; description: string | undefined } | undefined {
  let cur = inner(root);
  for (let i = 0; i <= path.length; i++) {
    const here = valueAt(data, path.slice(0, i));
    const kindField = kindFieldInfo(cur.schema);
    if (kindField !== undefined) {
      // a registered kind's block (kind-field.ts): the object schema of the kind the data names
      const o = kindField.objectOf(here);
      if (!o) return i === path.length ? cur : undefined;
      cur = { schema: o, description: cur.description };
    }
    if (cur.schema instanceof z.ZodDiscriminatedUnion) {
      const o = pickOption(cur.schema, here);
      if (!o) return i === path.length ? cur : undefined;
      const d = cur.description;
      cur = inner(o);
      cur = { schema: cur.schema, description: d ?? cur.description };
    }
    if (i === path.length) return cur;
    const seg = path[i];
    let next: z.ZodType | undefined;
    if (cur.schema instanceof z.ZodObject && typeof seg === 'string')
      next = cur.schema.shape[seg] as z.ZodType | undefined;
    else if (cur.schema instanceof z.ZodArray && typeof seg === 'number') next = cur.schema.element as z.ZodType;
    else if (cur.schema instanceof z.ZodRecord) next = cur.schema.valueType as z.ZodType;
    if (!next) return undefined;
    cur = inner(next);
  }
  return cur;
}

function allowedKeys(root: z.ZodType, path: readonly PathSegment[], data: unknown): string[] {
  const at = schemaAt(root, path, data);
  return at && at.schema instanceof z.ZodObject ? Object.keys(at.schema.shape) : [];
}

// ---------------------------------------------------------------------------------------------
// wording

/** A short rendering of a value for a message. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  const s = JSON.stringify(value);
  return s.length > 48 ? `${s.slice(0, 45)}…` : s;
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a map',
  array: 'a list',
  null: 'null',
};

function bound(n: number | bigint, inclusive: boolean | undefined, up: boolean): string {
  return `${up ? (inclusive === false ? '<' : '≤') : inclusive === false ? '>' : '≥'} ${String(n)}`;
}

/** " (see docs/protocol.md#<top-level key>)" — the page documents every top-level key under its own heading. */
function docsSection(path: readonly PathSegment[]): string {
  const top = path[0];
  return typeof top === 'string' ? ` (see docs/protocol.md#${top.toLowerCase()})` : ' (see docs/protocol.md)';
}

/** A hint that says what the field at `path` is: `replicates: bootstrap replicates (e.g. 10000)`. */
function about(path: readonly PathSegment[], desc: string): string {
  const name = [...path].reverse().find((p): p is string => typeof p === 'string');
  return name === undefined ? `the file must hold ${desc}` : `${name}: ${desc}`;
}

/** The protocol issues of one zod error, in zod's order (one per unknown key), at most MAX_ISSUES kept, all counted. */
export function zodIssues(root: z.ZodType, error: z.ZodError, data: unknown): IssueSink<ProtocolIssue> {
  const out = new IssueSink<ProtocolIssue>();
  for (const issue of error.issues) {
    if (out.full) {
      out.count(issue.code === 'unrecognized_keys' ? issue.keys.length : 1);
      continue;
    }
    const path = issue.path.filter((p): p is PathSegment => typeof p === 'string' || typeof p === 'number');
    const value = valueAt(data, path);
    const desc = schemaAt(root, path, data)?.description;
    const code: ErrorCode = 'E_PROTOCOL_INVALID';
    switch (issue.code) {
      case 'unrecognized_keys': {
        const allowed = allowedKeys(root, path, data);
        for (const [n, k] of issue.keys.entries()) {
          if (out.full) {
            out.count(issue.keys.length - n);
            break;
          }
          out.push({
            code,
            path: [...path, k],
            key: true,
            message: `unknown field ${show(k)}`,
            hint: `${didYouMean(k, allowed)}allowed here: ${allowed.join(', ')}`,
          });
        }
        break;
      }
      case 'invalid_type': {
        const expected = EXPECTED[issue.expected] ?? issue.expected;
        if (value === undefined) {
          const key = path[path.length - 1];
          out.push({
            code,
            path,
            message: `missing required field "${String(key)}"`,
            hint: `add ${String(key)}: ${desc ?? expected}`,
          });
        } else {
          out.push({
            code,
            path,
            message: `expected ${expected}, got ${show(value)}`,
            ...(desc ? { hint: about(path, desc) } : {}),
          });
        }
        break;
      }
      case 'invalid_value':
        if (value === undefined) {
          // a required field that takes fixed values is missing: name it, not "nothing is not allowed here"
          const key = String(path[path.length - 1] ?? 'a value');
          const values = issue.values.map((v) => String(v));
          out.push({
            code,
            path,
            message: `\`${key}\` is required here`,
            hint: `add it: ${key}: ${values.length === 1 ? values[0] : `one of ${listSome(values)}`}${docsSection(path)}`,
          });
          break;
        }
        out.push({
          code,
          path,
          message: `${show(value)} is not allowed here`,
          hint: `use one of: ${listSome(issue.values.map((v) => String(v)))}`,
        });
        break;
      case 'invalid_union': {
        if (issue.discriminator !== undefined) {
          const options = ('options' in issue ? (issue.options ?? []) : []).map((o) => String(o));
          const what = issue.discriminator;
          const msg = value === undefined ? `missing required field "${what}"` : `unknown ${what} ${show(value)}`;
          const near = typeof value === 'string' ? didYouMean(value, options) : '';
          out.push({ code, path, message: msg, hint: `${near}use one of: ${options.join(', ')}` });
        } else {
          out.push({
            code,
            path,
            message: `${show(value)} matches none of the allowed forms`,
            ...(desc ? { hint: about(path, desc) } : {}),
          });
        }
        break;
      }
      case 'too_small':
      case 'too_big': {
        const up = issue.code === 'too_big';
        const limit = up ? issue.maximum : issue.minimum;
        let message: string;
        if (issue.origin === 'array')
          message = up
            ? `has more than ${String(limit)} items`
            : `needs at least ${String(limit)} item${Number(limit) === 1 ? '' : 's'}`;
        else if (issue.origin === 'string')
          message = up ? `is longer than ${String(limit)} characters` : 'must not be empty';
        else message = `must be ${bound(limit, issue.inclusive, up)}, got ${show(value)}`;
        out.push({ code, path, message, ...(desc ? { hint: about(path, desc) } : {}) });
        break;
      }
      case 'custom': {
        // a kind field's own words (kind-field.ts): an unknown or missing kind name
        const worded = (issue.params as Partial<WordedIssueParams> | undefined)?.worded;
        if (worded !== undefined) {
          out.push({ code, path, message: worded.message, ...(worded.hint ? { hint: worded.hint } : {}) });
          break;
        }
      }
      // falls through
      default:
        out.push({
          code,
          path,
          message: `${issue.message}, got ${show(value)}`,
          ...(desc ? { hint: about(path, desc) } : {}),
        });
    }
  }
  return out;
}
