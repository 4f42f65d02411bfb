/**
 * Content digests of float leaves: SHA-256 over (name, dtype, shape, raw bytes) of each leaf, truncated.
 * Leaves are hashed in sorted-name order unless an explicit order is given (payloads use PAYLOAD_FIELDS).
 */
import { sha256Hex, bytesOf } from '../core/index.js';
import { PAYLOAD_FIELDS, type Payload, type RetrievedItem } from '../banks/index.js';
import type { FloatTensor } from '../core/index.js';

/** Hex characters kept from each SHA-256 digest (64 bits). */
export const DIGEST_CHARS = 16;

const encoder = new TextEncoder();

/**
 * UTF-8 bytes of each leaf header seen so far (name, dtype and shape repeat from step to step), bounded:
 * the map starts over when it reaches HEAD_CACHE_LIMIT distinct headers.
 */
const heads = new Map<string, Uint8Array>();
const HEAD_CACHE_LIMIT = 4096;

/** The last header returned, with what it was made of (most calls repeat the previous leaf's header). */
let lastName = '';
let lastDtype = '';
let lastShape: number[] = [];
let lastHead: Uint8Array | null = null;

function headBytes(name: string, t: FloatTensor): Uint8Array {
  const shape = t.shape;
  if (lastHead !== null && name === lastName && t.dtype === lastDtype && shape.length === lastShape.length) {
    let same = true;
    for (let i = 0; i < shape.length; i++) {
      if (shape[i] !== lastShape[i]) {
        same = false;
        break;
      }
    }
    if (same) return lastHead;
  }
  const key = `${name}\u001f${t.dtype}\u001f${shape.join('x')}\u001e`;
  let head = heads.get(key);
  if (head === undefined) {
    if (heads.size >= HEAD_CACHE_LIMIT) heads.clear();
    head = encoder.encode(key);
    heads.set(key, head);
  }
  lastName = name;
  lastDtype = t.dtype;
  lastShape = shape.slice();
  lastHead = head;
  return head;
}

/** Reused concatenation buffer (the digest input never outlives the call). */
let scratch = new Uint8Array(4096);

/** Writes the digest input of `leaves` (header and bytes of each leaf, in `order`) to `scratch`; its length. */
function fillInput(leaves: Readonly<Record<string, FloatTensor>>, order: readonly string[]): number {
  let off = 0;
  for (let i = 0; i < order.length; i++) {
    const name = order[i] as string;
    const t = leaves[name];
    if (t === undefined) throw new RangeError(`leavesDigest: no leaf named ${name}`);
    const head = headBytes(name, t);
    const bytes = bytesOf(t.data);
    const end = off + head.length + bytes.length;
    if (scratch.length < end) {
      const grown = new Uint8Array(Math.max(end, 2 * scratch.length));
      grown.set(scratch.subarray(0, off));
      scratch = grown;
    }
    scratch.set(head, off);
    scratch.set(bytes, off + head.length);
    off = end;
  }
  return off;
}

export function leavesDigest(
  leaves: Readonly<Record<string, FloatTensor>>,
  order: readonly string[] = Object.keys(leaves).sort(),
  chars: number = DIGEST_CHARS,
): string {
  return sha256Hex(scratch.subarray(0, fillInput(leaves, order))).slice(0, chars);
}

/** Digest of a record payload, fields in canonical PAYLOAD_FIELDS order. */
export function payloadDigest(payload: Payload, chars: number = DIGEST_CHARS): string {
  return leavesDigest(payload, PAYLOAD_FIELDS, chars);
}

export function itemDigest(item: RetrievedItem, chars: number = DIGEST_CHARS): string {
  return leavesDigest(item.leaves, undefined, chars);
}

/** The last digest input and digest computed by `selectedItemDigest` for one identity object. */
interface CachedDigest {
  input: Uint8Array;
  chars: number;
  digest: string;
}

const byIdentity = new WeakMap<object, CachedDigest>();

/**
 * `itemDigest(item, chars)`, remembered per identity object: a bank hands out the same frozen identity
 * for a record read after read (EpisodeBank: per entry and index), each time with a fresh copy of the
 * same leaves. The digest input is still built and compared byte for byte with the remembered one, so
 * the result is always the digest of the bytes given (a changed payload under the same identity is
 * hashed again); only the SHA-256 of an unchanged input is skipped. For the items a bank selected (the
 * reader's items under a substituting hook change from read to read, so they are not remembered).
 */
export function selectedItemDigest(item: RetrievedItem, chars: number = DIGEST_CHARS): string {
  const leaves = item.leaves;
  const n = fillInput(leaves, Object.keys(leaves).sort());
  const key: object = item.identity;
  const cached = byIdentity.get(key);
  if (cached !== undefined && cached.chars === chars && cached.input.length === n) {
    const input = cached.input;
    let same = true;
    for (let i = 0; i < n; i++) {
      if (input[i] !== scratch[i]) {
        same = false;
        break;
      }
    }
    if (same) return cached.digest;
  }
  const input = scratch.slice(0, n);
  const digest = sha256Hex(input).slice(0, chars);
  if (cached === undefined) byIdentity.set(key, { input, chars, digest });
  else {
    cached.input = input;
    cached.chars = chars;
    cached.digest = digest;
  }
  return digest;
}

/** Digest of a whole read: the item digests in read order (content only, no identities). */
export function readDigest(itemDigests: readonly string[], chars: number = DIGEST_CHARS): string {
  return sha256Hex(`read\u001f${itemDigests.length}\u001f${itemDigests.join('\u001f')}`).slice(0, chars);
}
