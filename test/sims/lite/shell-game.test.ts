import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/core/hash.js';
import { ImepError } from '../../../src/core/errors.js';
import { COLORS, colorCentroid } from '../../../src/sims/lite/render.js';
import { CUP_X, ShellGameLite } from '../../../src/sims/lite/shell-game.js';
import {
  ShellGamePixelController,
  WaypointController,
  cupPosition,
  frameOf,
  runLiteEpisode,
  toolOf,
} from '../../../src/sims/lite/scripted.js';
import type { StepResult } from '../../../src/runtime/environment.js';
import { allZero, ev, obsDigest, randomRollout } from './helpers.js';

const zero = Float32Array.of(0, 0);

function has(r: StepResult, color: readonly [number, number, number]): boolean {
  const f = frameOf(r.obs);
  return colorCentroid(f.data, f.width, f.height, color) !== null;
}

function rollZero(env: ShellGameLite, seed: number, options: Record<string, unknown> = {}): StepResult[] {
  const out = [env.resetSync({ seed, options })];
  while (!(out[out.length - 1] as StepResult).done) out.push(env.stepSync(zero));
  return out;
}

describe('ShellGameTouch-lite', () => {
  it('is deterministic: same seed and actions give byte-identical streams; other seeds differ', () => {
    const a = randomRollout(new ShellGameLite(), { seed: 11 }, 5).map(obsDigest);
    const b = randomRollout(new ShellGameLite(), { seed: 11 }, 5).map(obsDigest);
    const c = randomRollout(new ShellGameLite(), { seed: 12 }, 5).map(obsDigest);
    expect(a.length).toBe(91);
    expect(b).toEqual(a);
    expect(c[0]).not.toBe(a[0]);
  });

  it('returns firstFrameHash = sha256 of the reset frame bytes, only on reset', () => {
    const env = new ShellGameLite();
    const r = env.resetSync({ seed: 3 });
    expect(r.firstFrameHash).toBe(sha256Hex(frameOf(r.obs).data));
    expect(r.step).toBe(0);
    expect(env.stepSync(zero).firstFrameHash).toBeUndefined();
  });

  it('draws the ball cup from the seed, roughly uniformly', () => {
    const env = new ShellGameLite();
    const counts = [0, 0, 0];
    for (let seed = 0; seed < 300; seed++) counts[ev(env.resetSync({ seed }), 'ballCup') as number]! += 1;
    for (const c of counts) expect(c).toBeGreaterThan(70);
  });

  it('shows the ball (and no cups) exactly at elapsed steps 0–4, then closed cups and no ball', () => {
    const env = new ShellGameLite();
    for (const seed of [0, 1, 2, 3, 4, 5]) {
      const rs = rollZero(env, seed);
      expect(rs.length).toBe(91);
      const cup = ev(rs[0] as StepResult, 'ballCup') as number;
      for (const r of rs) {
        expect(has(r, COLORS.ball)).toBe(r.step < 5);
        expect(has(r, COLORS.cup)).toBe(r.step >= 5);
      }
      const f = frameOf((rs[0] as StepResult).obs);
      const ball = colorCentroid(f.data, f.width, f.height, COLORS.ball);
      expect(ball?.x).toBeCloseTo(CUP_X[cup] as number, 1);
    }
  });

  it('closed-cup frames carry no cue: pixel-identical across ball cups once the tools coincide', () => {
    const env = new ShellGameLite();
    const corner = Float32Array.of(-1, -1);
    const frames = new Map<number, string>();
    for (let seed = 0; frames.size < 3 && seed < 50; seed++) {
      let r = env.resetSync({ seed });
      const cup = ev(r, 'ballCup') as number;
      for (let i = 0; i < 40; i++) r = env.stepSync(corner); // clamps the tool to (−0.95, −0.95)
      expect(Array.from(toolOf(r.obs))).toEqual([Math.fround(-0.95), Math.fround(-0.95)]);
      frames.set(cup, sha256Hex(frameOf(r.obs).data));
    }
    expect(frames.size).toBe(3);
    expect(new Set(frames.values()).size).toBe(1);
  });

  it('blanks every frame from blackoutFromStep to the end (85 of 90 step frames from step 6)', () => {
    const env = new ShellGameLite({ blackoutFromStep: 6 });
    const rs = rollZero(env, 7);
    expect(rs.filter(allZero).map((r) => r.step)).toEqual(Array.from({ length: 85 }, (_, i) => i + 6));
    expect(rs.filter((r) => ev(r, 'blackout') === true).length).toBe(85);
    // The reset frame is unaffected, so the first-frame hash matches the unblanked run.
    expect(rs[0]?.firstFrameHash).toBe(new ShellGameLite().resetSync({ seed: 7 }).firstFrameHash);
    // Reset options override the kwarg.
    const off = rollZero(env, 7, { blackoutFromStep: null });
    expect(off.some(allZero)).toBe(false);
    const fromZero = rollZero(new ShellGameLite(), 7, { blackoutFromStep: 0 });
    expect(fromZero.every(allZero)).toBe(true);
  });

  it('scores default success on any touch of the ball cup, with the first visit read out separately', () => {
    const env = new ShellGameLite();
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) {
      const cup = ev(env.resetSync({ seed }), 'ballCup') as number;
      const wrong = (cup + 1) % 3;
      const sweep = new WaypointController([cupPosition(wrong), cupPosition(cup)]);
      const last = runLiteEpisode(env, sweep, { seed }).last;
      expect(ev(last, 'success')).toBe(true);
      expect(ev(last, 'terminated')).toBe(true);
      expect(ev(last, 'reward')).toBe(1);
      expect(ev(last, 'firstVisit')).toBe(wrong);
      expect(ev(last, 'decisionCorrect')).toBe(false);
      expect(last.step).toBeLessThan(90);
      const direct = runLiteEpisode(env, new WaypointController([cupPosition(cup)]), { seed }).last;
      expect([ev(direct, 'success'), ev(direct, 'firstVisit'), ev(direct, 'decisionCorrect')]).toEqual([
        true,
        cup,
        true,
      ]);
    }
  });

  it('strict: the first cup touched ends the episode; success iff it is the ball cup', () => {
    const env = new ShellGameLite({ strict: true });
    for (const seed of [0, 1, 2, 3, 4, 5]) {
      const cup = ev(env.resetSync({ seed }), 'ballCup') as number;
      const wrong = (cup + 2) % 3;
      const r = runLiteEpisode(env, new WaypointController([cupPosition(wrong), cupPosition(cup)]), { seed }).last;
      expect([ev(r, 'success'), ev(r, 'terminated'), ev(r, 'firstVisit'), ev(r, 'lastTouch'), ev(r, 'reward')]).toEqual(
        [false, true, wrong, wrong, 0],
      );
      const ok = runLiteEpisode(env, new WaypointController([cupPosition(cup)]), {
        seed,
        options: { strict: true },
      }).last;
      expect([ev(ok, 'success'), ev(ok, 'firstVisit')]).toEqual([true, cup]);
      const lax = runLiteEpisode(env, new WaypointController([cupPosition(wrong), cupPosition(cup)]), {
        seed,
        options: { strict: false },
      }).last;
      expect(ev(lax, 'success')).toBe(true);
    }
  });

  it('truncates at the 90-step limit without a touch', () => {
    const rs = rollZero(new ShellGameLite(), 9);
    const last = rs[rs.length - 1] as StepResult;
    expect([last.step, last.done, ev(last, 'truncated'), ev(last, 'terminated'), ev(last, 'success')]).toEqual([
      90,
      true,
      true,
      false,
      false,
    ]);
    expect(ev(last, 'firstVisit')).toBeNull();
    expect(ev(last, 'decisionCorrect')).toBeNull();
  });

  it('solves from pixels with memory; without memory (or under blackout from 0) first choice is ≈1/3', () => {
    const env = new ShellGameLite({ strict: true });
    const n = 150;
    let centre = 0;
    const rate = (memory: boolean, options: Record<string, unknown>): number => {
      const c = new ShellGamePixelController(memory);
      let s = 0;
      for (let seed = 0; seed < n; seed++) if (ev(runLiteEpisode(env, c, { seed, options }).last, 'success')) s++;
      return s / n;
    };
    for (let seed = 0; seed < n; seed++) if (ev(env.resetSync({ seed }), 'ballCup') === 1) centre++;
    expect(rate(true, {})).toBe(1);
    expect(rate(true, { blackoutFromStep: 6 })).toBe(1); // the cue frames 0–4 stay visible
    // Without the cue, the pose-nearest cup from the jittered home is the centre cup: success = P(ball centre).
    expect(rate(false, {})).toBe(centre / n);
    expect(rate(true, { blackoutFromStep: 0 })).toBe(centre / n);
    expect(centre / n).toBeGreaterThan(0.25);
    expect(centre / n).toBeLessThan(0.42);
  });

  it('records attempt without changing the scene', () => {
    const env = new ShellGameLite();
    const a = randomRollout(env, { seed: 4, options: { attempt: 1 } }, 2);
    const b = randomRollout(env, { seed: 4, options: { attempt: 2 } }, 2);
    expect(b.map(obsDigest)).toEqual(a.map(obsDigest));
    expect(ev(b[0] as StepResult, 'attempt')).toBe(2);
    expect(ev(b[0] as StepResult, 'ballCup')).toBe(ev(a[0] as StepResult, 'ballCup'));
  });

  it('clips the step length to 0.06 and rejects bad actions and out-of-order calls', () => {
    const env = new ShellGameLite();
    expect(() => env.stepSync(zero)).toThrow(ImepError);
    const r0 = env.resetSync({ seed: 1 });
    const [x0, y0] = toolOf(r0.obs);
    const r1 = env.stepSync(Float32Array.of(3, 4));
    const [x1, y1] = toolOf(r1.obs);
    expect(x1 - x0).toBeCloseTo(0.036, 6);
    expect(y1 - y0).toBeCloseTo(0.048, 6);
    expect(() => env.stepSync(Float32Array.of(Number.NaN, 0))).toThrow(/bad action/);
    expect(() => env.stepSync(Float32Array.of(0, 0, 0))).toThrow(/bad action/);
    expect(() => env.stepSync({ dtype: 'int32', shape: [2], data: Int32Array.of(0, 0) })).toThrow(/dtype/);
    expect(() => env.resetSync({ seed: -1 })).toThrow(/seed/);
    expect(() => env.resetSync({ seed: 1, options: { strcit: true } })).toThrow(/options\.strcit/);
    rollZero(env, 1);
    expect(() => env.stepSync(zero)).toThrow(/done/);
  });
});
