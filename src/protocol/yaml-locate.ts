/**
 * YAML source positions for protocol errors: the YAML path of a value as users write it
 * (`conditions[2].kind`), the line:col of the node a path names (or of its nearest existing
 * ancestor), and the duplicate-key scan (the parser runs with uniqueKeys off so that a duplicate is
 * reported with its path and both positions, instead of as a bare parse error).
 */
import { IssueSink } from './issue-cap.js';
import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

export type PathSegment = string | number;

export interface SourcePos {
  readonly line: number;
  readonly col: number;
  /** Byte offset of the node's start, used to order issues as they appear in the file. */
  readonly offset: number;
}

/** `conditions[2].kind`; the root is `(root)`; keys that are not identifiers are quoted: `kwargs["a b"]`. */
export function formatYamlPath(path: readonly PathSegment[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const whole of path) {
    // a key the user wrote can be any length; a path in a message names it by its first characters
    const seg = typeof whole === 'string' && whole.length > 64 ? `${whole.slice(0, 61)}…` : whole;
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

function scalarKey(node: unknown): string | undefined {
  if (isScalar(node)) return String(node.value);
  return undefined;
}

function resolve(doc: Document, node: unknown): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

function posOf(node: unknown, lc: LineCounter): SourcePos | undefined {
  const range = (node as { range?: readonly number[] } | null)?.range;
  const start = range?.[0];
  if (start === undefined) return undefined;
  const { line, col } = lc.linePos(start);
  return { line, col, offset: start };
}

export interface Located {
  readonly pos: SourcePos | undefined;
  /** How many leading segments of the path exist in the document. */
  readonly depth: number;
}

/**
 * The position of the node at `path`, or of its deepest existing ancestor. With `key: true` the last
 * segment names a map key and the key's own position is returned (for unknown / duplicate keys).
 */
export function locate(
  doc: Document,
  lc: LineCounter,
  path: readonly PathSegment[],
  options: { key?: boolean } = {},
): Located {
  let node: unknown = doc.contents;
  let best: SourcePos | undefined = posOf(node, lc) ?? { line: 1, col: 1, offset: 0 };
  let depth = 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    node = resolve(doc, node);
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && scalarKey(p.key) === String(seg));
      if (!pair) break;
      if (options.key === true && i === path.length - 1) {
        next = pair.key;
      } else {
        next = pair.value ?? pair.key;
      }
    } else if (isSeq(node) && typeof seg === 'number') {
      next = node.items[seg];
    }
    if (next === undefined || next === null) break;
    node = next;
    depth = i + 1;
    best = posOf(node, lc) ?? best;
  }
  return { pos: best, depth };
}

export interface DuplicateKey {
  readonly path: readonly PathSegment[];
  readonly pos: SourcePos | undefined;
  readonly first: SourcePos | undefined;
}

/** Every key that occurs twice in one mapping, in document order (the first MAX_ISSUES kept, all counted). */
export function findDuplicateKeys(doc: Document, lc: LineCounter): IssueSink<DuplicateKey> {
  const out = new IssueSink<DuplicateKey>();
  const seen = new Set<Node>();
  const walk = (node: unknown, path: PathSegment[]): void => {
    if (isMap(node)) {
      if (seen.has(node)) return;
      seen.add(node);
      const keys = new Map<string, unknown>();
      for (const pair of node.items) {
        const k = scalarKey(pair.key);
        if (k === undefined) continue;
        const first = keys.get(k);
        if (first !== undefined) {
          if (out.full) out.count(1);
          else out.push({ path: [...path, k], pos: posOf(pair.key, lc), first: posOf(first, lc) });
        } else keys.set(k, pair.key);
        walk(pair.value, [...path, k]);
      }
    } else if (isSeq(node)) {
      if (seen.has(node)) return;
      seen.add(node);
      node.items.forEach((item, i) => walk(item, [...path, i]));
    }
  };
  walk(doc.contents, []);
  return out;
}

/** The value at `path` in plain data (undefined when absent). */
export function valueAt(data: unknown, path: readonly PathSegment[]): unknown {
  let cur: unknown = data;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}
