/**
 * Given-back frames (releaseObservation): a lite env draws later frames into frames its caller gave back, and only
 * into those. The pixel stream is unchanged (each frame hashed when it is received equals the stream of an env
 * nobody gives anything back to), frames not given back never overlap a later frame, and a frame can be given back
 * only once and only to the env that returned it.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Prng } from '../../../src/core/prng.js';
import { makeLiteEnvSync } from '../../../src/sims/lite/registry.js';
import { frameOf } from '../../../src/sims/lite/scripted.js';
import type { StepResult } from '../../../src/runtime/environment.js';

const CASES: readonly [string, Record<string, unknown>][] = [
  ['ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }],
  ['ShellGameTouch-lite', {}],
  ['RememberColor3-lite', {}],
  ['ChainDrawers-lite', {}],
];

/** sha256 of each frame as received, over three seeded random-action episodes; `give` decides what is given back. */
function receivedHashes(
  id: string,
  kwargs: Record<string, unknown>,
  give: (r: StepResult, i: number) => boolean,
): { hashes: string[]; frames: Uint8Array[] } {
  const env = makeLiteEnvSync(id, kwargs);
  const hashes: string[] = [];
  const frames: Uint8Array[] = [];
  let i = 0;
  const take = (r: StepResult): void => {
    const f = frameOf(r.obs).data;
    hashes.push(createHash('sha256').update(f).digest('hex'));
    frames.push(f);
    if (give(r, i++)) env.releaseObservation(r);
  };
  for (let seed = 0; seed < 3; seed++) {
    const rng = new Prng(200 + seed);
    let r = env.resetSync({ seed });
    take(r);
    while (!r.done) {
      const a = new Float32Array(env.spec.action.shape[0] ?? 2);
      for (let k = 0; k < a.length; k++) a[k] = (rng.nextFloat() * 2 - 1) * 0.08;
      r = env.stepSync(a);
      take(r);
    }
  }
  return { hashes, frames };
}

const overlaps = (x: Uint8Array, y: Uint8Array): boolean =>
  x.buffer === y.buffer && x.byteOffset < y.byteOffset + y.byteLength && y.byteOffset < x.byteOffset + x.byteLength;

describe('lite env releaseObservation', () => {
  it.each(CASES)(
    '%s %j: same pixels whether frames are given back or not, and given-back frames are reused',
    (id, kwargs) => {
      const plain = receivedHashes(id, kwargs, () => false);
      const all = receivedHashes(id, kwargs, () => true);
      expect(all.hashes).toEqual(plain.hashes);
      // every frame after the first was drawn into the one given back just before it
      expect(new Set(all.frames).size).toBe(1);
    },
  );

  it('never draws into a frame that was not given back', () => {
    // give back every other frame: the kept ones still hold what they held when received, and no later frame overlaps them
    const { hashes, frames } = receivedHashes('ShellGameTouch-lite', {}, (_r, i) => i % 2 === 1);
    for (let i = 0; i < frames.length; i += 2) {
      expect(
        createHash('sha256')
          .update(frames[i] as Uint8Array)
          .digest('hex'),
      ).toBe(hashes[i]);
      for (let j = i + 1; j < frames.length; j++)
        expect(overlaps(frames[i] as Uint8Array, frames[j] as Uint8Array)).toBe(false);
    }
  });

  it('refuses a frame given back twice or to another env', () => {
    const a = makeLiteEnvSync('ShellGameTouch-lite', {});
    const b = makeLiteEnvSync('ShellGameTouch-lite', {});
    const r = a.resetSync({ seed: 1 });
    expect(() => b.releaseObservation(r)).toThrow(/did not return, or gave back twice/);
    a.releaseObservation(r);
    expect(() => a.releaseObservation(r)).toThrow(/did not return, or gave back twice/);
  });
});

describe('lite env drawNextInto', () => {
  it('draws a non-final step into the caller view, never a reset or the final step; the pixels are unchanged', () => {
    const plain = receivedHashes('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }, () => false);
    const env = makeLiteEnvSync('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true });
    const view = new Uint8Array(64 * 64 * 3);
    const hashes: string[] = [];
    let inView = 0;
    for (let seed = 0; seed < 3; seed++) {
      const rng = new Prng(200 + seed);
      expect(env.drawNextInto(view)).toBe(true);
      let r = env.resetSync({ seed });
      expect(frameOf(r.obs).data).not.toBe(view); // a reset cancels it and never draws into it
      hashes.push(createHash('sha256').update(frameOf(r.obs).data).digest('hex'));
      while (!r.done) {
        const a = new Float32Array(2);
        for (let k = 0; k < 2; k++) a[k] = (rng.nextFloat() * 2 - 1) * 0.08;
        expect(env.drawNextInto(view)).toBe(true);
        r = env.stepSync(a);
        const f = frameOf(r.obs).data;
        if (r.done) expect(f).not.toBe(view);
        else {
          expect(f).toBe(view);
          inView += 1;
          // the caller's memory: the env does not take it back
          expect(() => env.releaseObservation(r)).toThrow(/did not return/);
        }
        hashes.push(createHash('sha256').update(f).digest('hex'));
      }
    }
    expect(hashes).toEqual(plain.hashes);
    expect(inView).toBeGreaterThan(0);
  });

  it('applies to one step only (also one that throws) and refuses a view of the wrong size; declares its frame field', () => {
    const env = makeLiteEnvSync('ShellGameTouch-lite', {});
    expect(env.frameField).toBe('rgb'); // the frame field the env declares
    expect(env.drawNextInto(new Uint8Array(10))).toBe(false);
    expect(env.drawNextInto(new Uint8Array(64 * 64 * 3 + 1))).toBe(false);
    env.resetSync({ seed: 1 });
    const view = new Uint8Array(64 * 64 * 3);
    env.drawNextInto(view);
    expect(() => env.stepSync(Float32Array.of(Number.NaN, 0))).toThrow(/bad action/);
    expect(frameOf(env.stepSync(Float32Array.of(0, 0)).obs).data).not.toBe(view);
    env.drawNextInto(view);
    expect(frameOf(env.stepSync(Float32Array.of(0, 0)).obs).data).toBe(view);
    expect(frameOf(env.stepSync(Float32Array.of(0, 0)).obs).data).not.toBe(view);
  });
});
