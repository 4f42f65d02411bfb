/**
 * Issue #24, lite side channels, played against the shipped flagship protocol (protocols/shellgame-blackout.yaml):
 *
 * 1. Seed inversion: the seed band is public and so is the simulator, so a policy can tabulate the tool's start
 *    position of every seed of the band. With `toolStart: seeded` every seed starts at its own position, which the
 *    policy still sees during the blackout: start → seed → ball cup. With `toolStart: home` the visible stream after
 *    the cue is a function of the policy's own actions only (closed cups or a blank frame, the tool, a fixed
 *    instruction), so the fact's exact conditional distribution given the visible stream equals its prior.
 * 2. A memoryless sweep of all three cups: with `strict: false` it finds the ball every time; the flagship must be
 *    strict, so that a competent memoryless policy succeeds at about the chance rate 1/3.
 *
 * "Near chance" is an exact binomial statement: the count is at most the upper critical value of Binomial(n, 1/3)
 * at one-sided α = 0.001 (exactBinomialTailNumber), and at least the lower one where the policy guesses.
 */
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/core/hash.js';
import { Prng } from '../../../src/core/prng.js';
import { ImepError } from '../../../src/core/errors.js';
import { CUP_X, ShellGameLite } from '../../../src/sims/lite/shell-game.js';
import { WaypointController, cupPosition, runLiteEpisode, toolOf, towards } from '../../../src/sims/lite/scripted.js';
import type { StepResult } from '../../../src/runtime/environment.js';
import { loadProtocolSync } from '../../../src/protocol/load.js';
import { firstSeeds } from '../../../src/protocol/seeds.js';
import { exactBinomialTailNumber } from '../../../src/stats/binomial-exact.js';
import { ev, obsDigest } from './helpers.js';
import { registerBuiltinKinds } from '../../../src/kinds/index.js';

// this file reads protocols while it loads (before the setup file's beforeAll registers the kinds)
registerBuiltinKinds();

const FLAGSHIP = loadProtocolSync('protocols/shellgame-blackout.yaml').protocol;
const FLAGSHIP_KWARGS = (FLAGSHIP.envs[0]?.kwargs ?? {}) as Record<string, unknown>;
const BAND = firstSeeds(FLAGSHIP.seeds, FLAGSHIP.n);
const ALPHA = 0.001;

/** The largest k with P(X ≥ k) ≥ α under Binomial(n, p): a count above it is beyond chance at one-sided level α. */
function upperCritical(n: number, p: number): number {
  let k = Math.round(n * p);
  while (k < n && exactBinomialTailNumber(k + 1, n, p, 'upper') >= ALPHA) k++;
  return k;
}

/** The smallest k with P(X ≤ k) ≥ α under Binomial(n, p). */
function lowerCritical(n: number, p: number): number {
  let k = Math.round(n * p);
  while (k > 0 && exactBinomialTailNumber(k - 1, n, p, 'lower') >= ALPHA) k--;
  return k;
}

const posKey = (r: StepResult): string => toolOf(r.obs).join(',');

/**
 * The seed-inverting predictor: it knows the band and replays the public simulator to tabulate each seed's visible
 * reset state; in an episode it does nothing through the cue, reads its own pose once the cameras are blank, looks the
 * pose up, and names the cup most frequent among the matching seeds (seeded random tie-break). Returns how often the
 * named cup is the ball cup.
 */
function seedInversionHits(kwargs: Record<string, unknown>): number {
  const env = new ShellGameLite(kwargs);
  const table = new Map<string, number[]>();
  for (const seed of BAND) {
    const r = env.resetSync({ seed });
    const key = posKey(r);
    const cups = table.get(key) ?? [0, 0, 0];
    cups[ev(r, 'ballCup') as number]! += 1;
    table.set(key, cups);
  }
  const tieBreak = new Prng('seed-inversion-tie-break');
  const blackout = (kwargs['blackoutFromStep'] as number | undefined) ?? 6;
  let hits = 0;
  for (const seed of BAND) {
    let r = env.resetSync({ seed });
    while (r.step < blackout) r = env.stepSync(Float32Array.of(0, 0));
    const cups = table.get(posKey(r)) ?? [1, 1, 1];
    const best = Math.max(...cups);
    const modes = [0, 1, 2].filter((c) => cups[c] === best);
    const guess = modes[tieBreak.nextInt(modes.length)] ?? 0;
    if (guess === ev(r, 'ballCup')) hits++;
  }
  return hits;
}

/** I(fact; visible stream from the cue's end on) in bits, exactly, over the band, under a fixed action script. */
function factInformationBits(
  kwargs: Record<string, unknown>,
  actions: readonly Float32Array[],
): { bits: number; streams: number } {
  const env = new ShellGameLite(kwargs);
  const joint = new Map<string, number[]>();
  const prior = [0, 0, 0];
  for (const seed of BAND) {
    let r = env.resetSync({ seed });
    const cup = ev(r, 'ballCup') as number;
    const visible: string[] = [];
    for (const a of actions) {
      if (r.done) break;
      r = env.stepSync(a);
      if (r.step >= 5) visible.push(obsDigest(r));
    }
    const key = sha256Hex(visible.join('\n'));
    const counts = joint.get(key) ?? [0, 0, 0];
    counts[cup]! += 1;
    joint.set(key, counts);
    prior[cup]! += 1;
  }
  const n = BAND.length;
  let bits = 0;
  for (const counts of joint.values()) {
    const total = counts.reduce((s, c) => s + c, 0);
    counts.forEach((c, cup) => {
      if (c > 0) bits += (c / n) * Math.log2(c / total / ((prior[cup] ?? 0) / n));
    });
  }
  return { bits, streams: joint.size };
}

function priorEntropyBits(): number {
  const env = new ShellGameLite();
  const prior = [0, 0, 0];
  for (const seed of BAND) prior[ev(env.resetSync({ seed }), 'ballCup') as number]! += 1;
  return -prior.reduce((s, c) => s + (c > 0 ? (c / BAND.length) * Math.log2(c / BAND.length) : 0), 0);
}

describe('ShellGameTouch-lite side channels (issue #24), on the flagship protocol', () => {
  const n = BAND.length;

  it('the flagship band has 400 seeds and registers toolStart: home and strict: true', () => {
    expect(n).toBe(400);
    expect(FLAGSHIP_KWARGS['toolStart']).toBe('home');
    expect(FLAGSHIP_KWARGS['strict']).toBe(true);
  });

  it('seed inversion: with toolStart seeded every seed of the band starts apart and the cup is read off 400/400', () => {
    const old = { ...FLAGSHIP_KWARGS, toolStart: 'seeded' };
    expect(seedInversionHits(old)).toBe(n);
    const env = new ShellGameLite(old);
    expect(new Set(BAND.map((seed) => posKey(env.resetSync({ seed })))).size).toBe(n);
  });

  it('seed inversion on the flagship scores at chance (exact binomial, one-sided α = 0.001 each way)', () => {
    const hits = seedInversionHits(FLAGSHIP_KWARGS);
    expect(hits).toBeLessThanOrEqual(upperCritical(n, 1 / 3));
    expect(hits).toBeGreaterThanOrEqual(lowerCritical(n, 1 / 3));
  });

  it('the visible stream after the cue carries exactly 0 bits about the ball cup under toolStart home, all of it under seeded', () => {
    const stay = Array.from({ length: 90 }, () => Float32Array.of(0, 0));
    const rng = new Prng(24);
    const wander = Array.from({ length: 90 }, () =>
      Float32Array.of((rng.nextFloat() * 2 - 1) * 0.06, (rng.nextFloat() * 2 - 1) * 0.06),
    );
    for (const script of [stay, wander]) {
      const home = factInformationBits(FLAGSHIP_KWARGS, script);
      expect(home.streams).toBe(1); // one visible stream for all 400 seeds: P(cup | stream) = P(cup)
      expect(home.bits).toBe(0);
      const seeded = factInformationBits({ ...FLAGSHIP_KWARGS, toolStart: 'seeded' }, script);
      expect(seeded.streams).toBe(n);
      expect(seeded.bits).toBeCloseTo(priorEntropyBits(), 12);
    }
  });

  it('toolStart home leaves the scene stream alone: the same ball cup per seed as seeded, tool exactly at home', () => {
    const a = new ShellGameLite({ toolStart: 'home' });
    const b = new ShellGameLite({ toolStart: 'seeded' });
    for (const seed of BAND.slice(0, 50)) {
      const ra = a.resetSync({ seed });
      expect(ev(ra, 'ballCup')).toBe(ev(b.resetSync({ seed }), 'ballCup'));
      expect(toolOf(ra.obs)).toEqual([0, Math.fround(-0.7)]);
    }
  });

  it('refuses an unknown toolStart, naming the kwarg', () => {
    expect(() => new ShellGameLite({ toolStart: 'random' })).toThrow(ImepError);
    expect(() => new ShellGameLite({ toolStart: 'random' })).toThrow(/kwargs\.toolStart must be one of home \| seeded/);
  });

  it('a memoryless sweep of the three cups succeeds every time without strict, at chance on the flagship', () => {
    const above = (cup: number): [number, number] => cupPosition(cup);
    const sweep = new WaypointController([above(0), above(1), above(2)], 0.02);
    const successes = (kwargs: Record<string, unknown>): number => {
      const env = new ShellGameLite(kwargs);
      let s = 0;
      for (const seed of BAND) if (ev(runLiteEpisode(env, sweep, { seed }).last, 'success') === true) s++;
      return s;
    };
    expect(successes({ ...FLAGSHIP_KWARGS, strict: false })).toBe(n);
    const strict = successes(FLAGSHIP_KWARGS);
    expect(strict).toBeLessThanOrEqual(upperCritical(n, 1 / 3));
    expect(strict).toBeGreaterThanOrEqual(lowerCritical(n, 1 / 3));
  });

  it('a memoryless policy that heads for the cup nearest its own pose (no sweep) stays at chance on the flagship too', () => {
    const env = new ShellGameLite(FLAGSHIP_KWARGS);
    let s = 0;
    for (const seed of BAND) {
      const nearestToPose = {
        beginEpisode(): void {},
        act(obs: StepResult['obs']): Float32Array {
          const tool = toolOf(obs);
          let cup = 0;
          for (let c = 1; c < 3; c++)
            if (Math.abs((CUP_X[c] ?? 0) - tool[0]) < Math.abs((CUP_X[cup] ?? 0) - tool[0])) cup = c;
          return towards(tool, cupPosition(cup));
        },
      };
      if (ev(runLiteEpisode(env, nearestToPose, { seed }).last, 'success') === true) s++;
    }
    expect(s).toBeLessThanOrEqual(upperCritical(n, 1 / 3));
  });
});
