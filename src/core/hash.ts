import { hash } from 'node:crypto';

/**
 * SHA-256 hex digest of bytes or UTF-8 text. One-shot `crypto.hash` (node ≥ 20.12): the same digest as
 * `createHash('sha256').update(data).digest('hex')` without a Hash object (stream machinery, option
 * checks) per call — this runs several times per policy step (leaf and read digests).
 */
export function sha256Hex(data: Uint8Array | string): string {
  return hash('sha256', data, 'hex');
}

/** A truncated SHA-256 identifier (hex, `chars` long) of the parts joined with a unit separator. */
export function truncatedId(parts: readonly (string | number)[], chars = 16): string {
  return sha256Hex(parts.map(String).join('\u001f')).slice(0, chars);
}
