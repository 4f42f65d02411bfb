/**
 * Content digests of float leaves: SHA-256 over (name, dtype, shape, raw bytes) of each leaf, truncated.
 * Leaves are hashed in sorted-name order unless an explicit order is given (payloads use PAYLOAD_FIELDS).
 */
import { sha256Hex } from '../core/hash.js';
import { PAYLOAD_FIELDS, type Payload, type RetrievedItem } from '../banks/record.js';
import { tensorBytes, type FloatTensor } from '../core/tensor.js';

/** Hex characters kept from each SHA-256 digest (64 bits). */
export const DIGEST_CHARS = 16;

const encoder = new TextEncoder();

export function leavesDigest(
  leaves: Readonly<Record<string, FloatTensor>>,
  order: readonly string[] = Object.keys(leaves).sort(),
  chars: number = DIGEST_CHARS,
): string {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (const name of order) {
    const t = leaves[name];
    if (t === undefined) throw new RangeError(`leavesDigest: no leaf named ${name}`);
    const head = encoder.encode(`${name}\u001f${t.dtype}\u001f${t.shape.join('x')}\u001e`);
    const bytes = tensorBytes(t);
    parts.push(head, bytes);
    total += head.length + bytes.length;
  }
  const buf = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    buf.set(p, off);
    off += p.length;
  }
  return sha256Hex(buf).slice(0, chars);
}

/** Digest of a record payload, fields in canonical PAYLOAD_FIELDS order. */
export function payloadDigest(payload: Payload, chars: number = DIGEST_CHARS): string {
  return leavesDigest(payload, PAYLOAD_FIELDS, chars);
}

export function itemDigest(item: RetrievedItem, chars: number = DIGEST_CHARS): string {
  return leavesDigest(item.leaves, undefined, chars);
}

/** Digest of a whole read: the item digests in read order (content only, no identities). */
export function readDigest(itemDigests: readonly string[], chars: number = DIGEST_CHARS): string {
  return sha256Hex(`read\u001f${itemDigests.length}\u001f${itemDigests.join('\u001f')}`).slice(0, chars);
}
