import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ActionDigest, EMPTY_ACTION_DIGEST } from '../../src/campaign/action-digest.js';

const sha = (...parts: (string | Uint8Array)[]): string => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
};
const bytes = (xs: number[]): Uint8Array => new Uint8Array(Float32Array.from(xs).buffer);

describe('EpisodeRow.actionDigest (as documented in src/evidence/records/episode-row.ts)', () => {
  it('is ONE streaming SHA-256 of the tag and every action’s float32 bytes in step order — not a hash chain', () => {
    const actions = [
      [0.1, -2, 3.5],
      [1e-3, 0, -0],
      [7, 8, 9],
    ];
    const d = new ActionDigest();
    for (const a of actions) d.add({ dtype: 'float32', shape: [3], data: Float32Array.from(a) });
    expect(d.digest).toBe(sha('imep.action-digest.v1', ...actions.map(bytes)));
    // a chain (each step hashing the previous digest with the action) would give something else
    let chained = sha('imep.action-digest.v1');
    for (const a of actions) chained = sha(chained, bytes(a));
    expect(d.digest).not.toBe(chained);
    // per-step hashes: the first 12 hex of SHA-256 of that action's bytes
    expect(d.hashes).toEqual(actions.map((a) => sha(bytes(a)).slice(0, 12)));
  });

  it('converts a non-float32 action to float32 first; no action gives the digest of the tag alone', () => {
    const d = new ActionDigest();
    d.add({ dtype: 'float64', shape: [2], data: Float64Array.from([0.1, 0.2]) });
    expect(d.digest).toBe(sha('imep.action-digest.v1', bytes([0.1, 0.2])));
    expect(new ActionDigest().digest).toBe(EMPTY_ACTION_DIGEST);
    expect(EMPTY_ACTION_DIGEST).toBe(sha('imep.action-digest.v1'));
  });
});
