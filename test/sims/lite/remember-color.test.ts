import { describe, expect, it } from 'vitest';
import { COLORS, colorCentroid, type Rgb } from '../../../src/sims/lite/render.js';
import {
  REMEMBER_COLOR_PALETTE,
  RememberColorLite,
  type RememberColorK,
} from '../../../src/sims/lite/remember-color.js';
import {
  RememberColorPixelController,
  WaypointController,
  frameOf,
  runLiteEpisode,
} from '../../../src/sims/lite/scripted.js';
import type { StepResult } from '../../../src/runtime/environment.js';
import { ev, obsDigest, randomRollout } from './helpers.js';

const KS: readonly RememberColorK[] = [3, 5, 9];
const zero = Float32Array.of(0, 0);

function present(r: StepResult, k: number): number[] {
  const f = frameOf(r.obs);
  const out: number[] = [];
  for (let i = 0; i < k; i++)
    if (colorCentroid(f.data, f.width, f.height, REMEMBER_COLOR_PALETTE[i] as Rgb)) out.push(i);
  return out;
}

function rollZero(env: RememberColorLite, seed: number, options: Record<string, unknown> = {}): StepResult[] {
  const out = [env.resetSync({ seed, options })];
  while (!(out[out.length - 1] as StepResult).done) out.push(env.stepSync(zero));
  return out;
}

function where(r: StepResult, color: number): [number, number] {
  const f = frameOf(r.obs);
  const c = colorCentroid(f.data, f.width, f.height, REMEMBER_COLOR_PALETTE[color] as Rgb);
  if (c === null) throw new Error(`colour ${color} not on screen`);
  return [c.x, c.y];
}

describe('RememberColor{3,5,9}-lite', () => {
  it('uses a well-separated palette, distinct from the table and tool', () => {
    const dist = (a: Rgb, b: Rgb): number => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    let pairwise = Infinity,
      scene = Infinity;
    REMEMBER_COLOR_PALETTE.forEach((a, i) => {
      REMEMBER_COLOR_PALETTE.forEach((b, j) => {
        if (j > i) pairwise = Math.min(pairwise, dist(a, b));
      });
      scene = Math.min(scene, dist(a, COLORS.table), dist(a, COLORS.tool));
    });
    expect(pairwise).toBeGreaterThanOrEqual(127);
    expect(scene).toBeGreaterThan(100);
  });

  it.each(KS)('K=%i is deterministic per seed and differs across seeds', (k) => {
    const a = randomRollout(new RememberColorLite(k), { seed: 21 }, 8).map(obsDigest);
    const b = randomRollout(new RememberColorLite(k), { seed: 21 }, 8).map(obsDigest);
    const c = randomRollout(new RememberColorLite(k), { seed: 22 }, 8).map(obsDigest);
    expect(b).toEqual(a);
    expect(c[0]).not.toBe(a[0]);
  });

  it.each(KS)('K=%i shows the cue at steps 0–4, nothing at 5–9 and all K candidates from step 10 to 60', (k) => {
    const env = new RememberColorLite(k);
    const targets = new Set<number>();
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) {
      const rs = rollZero(env, seed);
      expect(rs.length).toBe(61);
      const target = ev(rs[0] as StepResult, 'targetColorIndex') as number;
      targets.add(target);
      for (const r of rs) {
        const colours = present(r, k);
        if (r.step < 5) expect(colours).toEqual([target]);
        else if (r.step < 10) expect(colours).toEqual([]);
        else expect(colours).toEqual(Array.from({ length: k }, (_, i) => i));
      }
    }
    expect(targets.size).toBeGreaterThan(1);
  });

  it.each(KS)(
    'K=%i keeps target and layout across attempts; reshowCueOnRetry=false hides the cue from attempt 2',
    (k) => {
      const hide = new RememberColorLite(k, { reshowCueOnRetry: false });
      const show = new RememberColorLite(k);
      for (const seed of [3, 4, 5]) {
        const a1 = rollZero(hide, seed, { attempt: 1 });
        const a2 = rollZero(hide, seed, { attempt: 2 });
        const s2 = rollZero(show, seed, { attempt: 2 });
        const target = ev(a1[0] as StepResult, 'targetColorIndex');
        expect(ev(a2[0] as StepResult, 'targetColorIndex')).toBe(target);
        expect([
          ev(a1[0] as StepResult, 'cueShown'),
          ev(a2[0] as StepResult, 'cueShown'),
          ev(s2[0] as StepResult, 'cueShown'),
        ]).toEqual([true, false, true]);
        for (let step = 0; step < 10; step++) expect(present(a2[step] as StepResult, k)).toEqual([]);
        expect(present(a1[0] as StepResult, k)).toEqual([target]);
        expect(present(s2[0] as StepResult, k)).toEqual([target]);
        // Same candidate frames (same layout, same tool) in every attempt and either setting.
        expect(obsDigest(a2[10] as StepResult)).toBe(obsDigest(a1[10] as StepResult));
        expect(obsDigest(s2[10] as StepResult)).toBe(obsDigest(a1[10] as StepResult));
        // The option can also be set per reset.
        expect(ev(show.resetSync({ seed, options: { attempt: 3, reshowCueOnRetry: false } }), 'cueShown')).toBe(false);
      }
    },
  );

  it('layout seeded (the first version) places candidates by seed: the colour at a slot changes across seeds', () => {
    const env = new RememberColorLite(5, { layout: 'seeded' });
    const red = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const p = where(rollZero(env, seed)[10] as StepResult, 0);
      red.add(`${Math.round(p[0] * 5)},${Math.round(p[1] * 5)}`);
    }
    expect(red.size).toBeGreaterThanOrEqual(4);
  });

  it('layout fixed (the default, issue #32): one candidate frame for every seed, each seed keeps its target', () => {
    const fixed = new RememberColorLite(5);
    const seeded = new RememberColorLite(5, { layout: 'seeded' });
    const frames = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const rs = rollZero(fixed, seed);
      frames.add(obsDigest(rs[10] as StepResult));
      expect(ev(rs[0] as StepResult, 'targetColorIndex')).toBe(ev(seeded.resetSync({ seed }), 'targetColorIndex'));
    }
    expect(frames.size).toBe(1);
    expect(() => new RememberColorLite(5, { layout: 'random' })).toThrow(
      /kwargs\.layout must be one of fixed \| seeded/,
    );
  });

  it('scores touches from step 10: default any-touch success, strict first-touch, first visit read out', () => {
    const env = new RememberColorLite(5);
    for (const seed of [0, 1, 2, 3]) {
      const rs = rollZero(env, seed);
      const target = ev(rs[0] as StepResult, 'targetColorIndex') as number;
      const wrong = (target + 1) % 5;
      const path = [where(rs[10] as StepResult, wrong), where(rs[10] as StepResult, target)] as const;
      const lax = runLiteEpisode(env, new WaypointController(path), { seed }).last;
      expect([ev(lax, 'success'), ev(lax, 'firstVisit'), ev(lax, 'decisionCorrect'), ev(lax, 'reward')]).toEqual([
        true,
        wrong,
        false,
        1,
      ]);
      const strict = runLiteEpisode(env, new WaypointController(path), { seed, options: { strict: true } }).last;
      expect([ev(strict, 'success'), ev(strict, 'terminated'), ev(strict, 'firstVisit'), ev(strict, 'reward')]).toEqual(
        [false, true, wrong, 0],
      );
      expect(strict.step).toBeGreaterThanOrEqual(10);
    }
  });

  it.each(KS)('K=%i: the pixel controller succeeds with memory and falls to ≈1/K without', (k) => {
    const env = new RememberColorLite(k, { strict: true });
    const n = 120;
    const rate = (c: RememberColorPixelController): number => {
      let s = 0;
      for (let seed = 0; seed < n; seed++) if (ev(runLiteEpisode(env, c, { seed }).last, 'success')) s++;
      return s / n;
    };
    expect(rate(new RememberColorPixelController(k, 'episode'))).toBe(1);
    const blind = rate(new RememberColorPixelController(k, 'none'));
    expect(blind).toBeGreaterThan(1 / k - 0.12);
    expect(blind).toBeLessThan(1 / k + 0.12);
  });

  it('with the cue hidden on retry, only cross-episode memory solves attempt 2', () => {
    const k = 5;
    const env = new RememberColorLite(k, { strict: true, reshowCueOnRetry: false });
    const n = 120;
    const attempt2 = (c: RememberColorPixelController): number => {
      let s = 0;
      for (let seed = 0; seed < n; seed++) {
        c.clear();
        runLiteEpisode(env, c, { seed, options: { attempt: 1 } });
        if (ev(runLiteEpisode(env, c, { seed, options: { attempt: 2 } }).last, 'success')) s++;
      }
      return s / n;
    };
    expect(attempt2(new RememberColorPixelController(k, 'cross-episode'))).toBe(1);
    const episodic = attempt2(new RememberColorPixelController(k, 'episode'));
    expect(episodic).toBe(attempt2(new RememberColorPixelController(k, 'none')));
    expect(episodic).toBeLessThan(0.35);
  });
});
