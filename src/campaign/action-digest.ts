/**
 * The action record of an episode: one SHA-256 over the float32 bytes of every action, in order (a
 * streaming hash, so each step adds its bytes to the running state), plus a 12-hex truncated SHA-256 of
 * each step's action (for query↔action alignment audits).
 *
 *   actionDigest   = hex(SHA-256("imep.action-digest.v1" ‖ bytes(action 1) ‖ … ‖ bytes(action T)))
 *   actionHashes[t−1] = hex(SHA-256(bytes(action t)))[0:12]
 *
 * bytes(·) are float32 little-endian; every lite action has the same length, so the concatenation is
 * unambiguous. A float64 action is narrowed to float32 first (the policy contract is float32).
 */
import { createHash, hash, type Hash } from 'node:crypto';
import type { NdArray } from '../runtime/environment.js';
import { bytesOf } from '../core/typed-bytes.js';

const TAG = 'imep.action-digest.v1';

/** The digest of an episode with no action (a removed row, or one failed at reset). */
export const EMPTY_ACTION_DIGEST = createHash('sha256').update(TAG).digest('hex');

function float32Bytes(action: NdArray): Uint8Array {
  const d = action.data;
  // bytesOf: no ArrayBuffer materialised for a small (on-heap) action; the view is read before the next call.
  return bytesOf(d instanceof Float32Array ? d : Float32Array.from(d as ArrayLike<number>));
}

export class ActionDigest {
  private readonly hash: Hash = createHash('sha256').update(TAG);
  private final: string | null = null;
  readonly hashes: string[] = [];

  add(action: NdArray): void {
    if (this.final !== null) throw new Error('ActionDigest: add after digest');
    const bytes = float32Bytes(action);
    this.hash.update(bytes);
    this.hashes.push(hash('sha256', bytes, 'hex').slice(0, 12));
  }

  /** The digest over every action added (the digest is final once read). */
  get digest(): string {
    this.final ??= this.hash.digest('hex');
    return this.final;
  }
}
