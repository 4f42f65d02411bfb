/**
 * Reading a protocol file: YAML → schema → cross-field rules → a validated Protocol and its hash.
 *
 * Every refusal is a ProtocolError whose oneLine() reads
 *   `protocols/x.yaml:14:11: conditions[2].kind: unknown kind "Q" — use one of: A, N, O, …`
 * naming the file, the line:col, the YAML path, what is wrong and the fix. YAML syntax errors come
 * first, then duplicate keys (refused: a key may appear once per mapping), then schema problems, then
 * cross-field problems; within a stage the first problem in file order is thrown and that stage's problems
 * travel in `error.issues` — at most MAX_ISSUES of them (the first found, sorted in file order), with
 * `error.total` counting all. A file over MAX_PROTOCOL_BYTES is refused unread (issue-cap.ts).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { ImepError } from '../core/index.js';
import { IssueSink, MAX_ISSUES, MAX_PROTOCOL_BYTES } from './issue-cap.js';
import { crossCheckBounded } from './cross-check.js';
import { ProtocolError, zodIssues, type LocatedIssue, type ProtocolIssue } from './issues.js';
import { protocolHash } from './protocol-hash.js';
import { ProtocolObjectSchema, ProtocolSchema, type Protocol } from './schema.js';
import { findDuplicateKeys, locate, type PathSegment } from './yaml-locate.js';

export interface LoadedProtocol {
  /** The file as given (used in error messages). */
  readonly file: string;
  readonly protocol: Protocol;
  /** protocolHash(protocol): SHA-256 of its canonical JSON. */
  readonly hash: string;
}

/**
 * Where an issue about the envs a suite filled in is written: `suite.kwargs.<key>` for a kwarg, else
 * `suite.tasks[i]` (or `suite.benchmark` when the suite takes every task). Other paths are kept.
 */
function writtenPath(data: unknown, path: readonly PathSegment[]): readonly PathSegment[] {
  const raw = data as { envs?: unknown; suite?: { tasks?: unknown } } | null;
  if (path[0] !== 'envs' || raw === null || typeof raw !== 'object' || raw.envs !== undefined || !raw.suite)
    return path;
  if (path[2] === 'kwargs' && path.length > 3) return ['suite', 'kwargs', ...path.slice(3)];
  return Array.isArray(raw.suite.tasks) && typeof path[1] === 'number'
    ? ['suite', 'tasks', path[1]]
    : ['suite', 'benchmark'];
}

function place(doc: Document, lc: LineCounter, issues: readonly ProtocolIssue[]): LocatedIssue[] {
  const data: unknown = doc.toJS();
  return issues
    .map((issue) => ({ ...issue, path: writtenPath(data, issue.path) }))
    .map((issue, order) => ({
      issue: { ...issue, pos: locate(doc, lc, issue.path, { key: issue.key === true }).pos },
      order,
    }))
    .sort((a, b) => (a.issue.pos?.offset ?? 0) - (b.issue.pos?.offset ?? 0) || a.order - b.order)
    .map((x) => x.issue);
}

function fail(file: string, located: readonly LocatedIssue[], total: number = located.length): never {
  const first = located[0];
  if (!first) throw new ImepError('E_INTERNAL', 'fail() called without issues');
  throw new ProtocolError(file, first, located, total);
}

function failAll(file: string, doc: Document, lc: LineCounter, sink: IssueSink<ProtocolIssue>): never {
  fail(file, place(doc, lc, sink.items), sink.total);
}

/** Parses and validates protocol text; `file` names it in errors. */
export function parseProtocol(text: string, file: string): LoadedProtocol {
  assertProtocolSize(text.length, file, 'characters');
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: false, prettyErrors: false, logLevel: 'error' });
  if (doc.errors.length > 0) {
    const located = doc.errors.slice(0, MAX_ISSUES).map((e): LocatedIssue => {
      const at = lc.linePos(e.pos[0]);
      const message = (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, '');
      return {
        code: 'E_PROTOCOL_INVALID',
        path: [],
        message: `YAML syntax error: ${message}`,
        hint: 'fix the YAML syntax (indentation, brackets, quotes)',
        pos: { line: at.line, col: at.col, offset: e.pos[0] },
      };
    });
    fail(file, located, doc.errors.length);
  }
  const dups = findDuplicateKeys(doc, lc);
  if (dups.total > 0) {
    fail(
      file,
      dups.items.map((d) => ({
        code: 'E_PROTOCOL_INVALID',
        path: d.path,
        key: true,
        message: `duplicate key "${String(d.path[d.path.length - 1])}"${d.first ? ` (first at line ${d.first.line}:${d.first.col})` : ''}`,
        hint: 'a key may appear once per mapping: remove or merge the duplicate',
        pos: d.pos,
      })),
      dups.total,
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    // yaml throws ReferenceError for an undefined alias ("*nowhere") or an alias bomb
    const reason = e instanceof Error ? e.message : String(e);
    fail(file, [
      {
        code: 'E_PROTOCOL_INVALID',
        path: [],
        message: `YAML aliases cannot be resolved: ${reason}`,
        hint: 'define every anchor (&name) before its alias (*name) and do not nest aliases exponentially',
        pos: { line: 1, col: 1, offset: 0 },
      },
    ]);
  }
  const parsed = ProtocolSchema.safeParse(data);
  if (!parsed.success) failAll(file, doc, lc, zodIssues(ProtocolObjectSchema, parsed.error, data));
  const protocol = parsed.data;
  const issues = crossCheckBounded(protocol);
  if (issues.total > 0) failAll(file, doc, lc, issues);
  return { file, protocol, hash: protocolHash(protocol) };
}

/** E_PROTOCOL_INVALID when a protocol is over MAX_PROTOCOL_BYTES (checked before decoding and parsing). */
function assertProtocolSize(size: number, file: string, unit: 'bytes' | 'characters'): void {
  if (size <= MAX_PROTOCOL_BYTES) return;
  throw new ImepError(
    'E_PROTOCOL_INVALID',
    `the protocol file is ${size} ${unit}, over the ${MAX_PROTOCOL_BYTES}-byte limit for protocols`,
    {
      file,
      hint: 'a protocol registers a design in a few KB: list seeds as bands ({ start, end }) instead of one by one, and keep one entry per condition, wave and estimand',
    },
  );
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The protocol file's text, or E_PROTOCOL_INVALID "not a UTF-8 text file" naming the first bad byte (a binary or
 * Latin-1 file would otherwise reach the YAML parser and come back as a puzzling syntax error).
 */
export function protocolText(bytes: Uint8Array, file: string): string {
  assertProtocolSize(bytes.length, file, 'bytes');
  const nul = bytes.indexOf(0);
  let text: string | null;
  try {
    text = UTF8.decode(bytes); // a leading BOM is dropped
  } catch {
    text = null;
  }
  if (text === null || nul !== -1) {
    const at = nul !== -1 ? nul : firstInvalidUtf8(bytes);
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `not a UTF-8 text file (byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')} at offset ${at}${nul === at ? ': a NUL byte, binary data?' : ''})`,
      {
        file,
        hint: 'a protocol is a YAML text file in UTF-8: re-save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)',
      },
    );
  }
  return text;
}

/** The offset of the first byte of the first invalid UTF-8 sequence (a linear scan; called only when decoding failed). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const n = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) if (((bytes[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    try {
      UTF8.decode(bytes.subarray(i, i + n + 1)); // overlong forms and surrogates
    } catch {
      return i;
    }
    i += n + 1;
  }
  return bytes.length;
}

function readError(file: string, e: unknown): ImepError {
  const code = (e as { code?: unknown } | null)?.code;
  return new ImepError(
    'E_IO',
    code === 'ENOENT' ? 'protocol file not found' : `cannot read the protocol file (${String(code ?? e)})`,
    {
      file,
      hint: 'check the path (protocols live under protocols/)',
      cause: e,
    },
  );
}

/** Reads and validates the protocol file at `file`. */
export async function loadProtocol(file: string): Promise<LoadedProtocol> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw readError(file, e);
  }
  return parseProtocol(protocolText(bytes, file), file);
}

/** Synchronous loadProtocol (for tests and scripts). */
export function loadProtocolSync(file: string): LoadedProtocol {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw readError(file, e);
  }
  return parseProtocol(protocolText(bytes, file), file);
}
