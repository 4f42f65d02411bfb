import { describe, expect, it } from 'vitest';
import { ImepError } from '../../../src/core/errors.js';
import { CHAIN_OBJECTS, ChainDrawersLite, executorSucceeds } from '../../../src/sims/lite/chain-drawers.js';
import { ChainDrawersReader, runLiteEpisode } from '../../../src/sims/lite/scripted.js';
import type { StepResult } from '../../../src/runtime/environment.js';
import { ev, obsDigest } from './helpers.js';

function oneHot(k: number, i: number): Float32Array {
  const a = new Float32Array(k);
  a[i] = 1;
  return a;
}

describe('ChainDrawers-lite', () => {
  it.each([2, 3, 4])('K=%i: the query observation is pixel-identical whatever the hidden fact', (k) => {
    const env = new ChainDrawersLite({ K: k });
    for (const seed of [0, 1, 2]) {
      for (const object of CHAIN_OBJECTS.map((o) => o.name)) {
        const digests = new Set<string>();
        const facts = new Set<unknown>();
        for (let drawer = 0; drawer < k; drawer++) {
          for (const executorSeed of [5, 6]) {
            const r = env.resetSync({ seed, options: { role: 'query', object, drawer, executorSeed } });
            digests.add(obsDigest(r));
            digests.add(r.firstFrameHash ?? '');
            facts.add(ev(r, 'correctDrawer'));
          }
        }
        expect(facts.size).toBe(k); // the hidden fact varies …
        expect(digests.size).toBe(2); // … one obs digest and one first-frame hash for all of them
      }
    }
  });

  it('write and distractor episodes reveal object→drawer in pixels and end after 3 steps', () => {
    const env = new ChainDrawersLite({ K: 3 });
    const seen = new Set<string>();
    for (let drawer = 0; drawer < 3; drawer++) {
      const { first, last } = runLiteEpisode(env, new ChainDrawersReader(3, true), {
        seed: 1,
        options: { role: 'write', object: 'mug', drawer },
      });
      seen.add(obsDigest(first));
      expect([last.step, last.done, ev(last, 'terminated'), ev(last, 'success'), ev(last, 'decision')]).toEqual([
        3,
        true,
        true,
        false,
        null,
      ]);
      expect(first.obs['instruction']).toBe(`the mug goes in drawer ${drawer + 1}`);
    }
    expect(seen.size).toBe(3);
    const d = env.resetSync({ seed: 1, options: { role: 'distractor', object: 'milk', drawer: 0 } });
    expect([ev(d, 'role'), ev(d, 'object'), ev(d, 'correctDrawer')]).toEqual(['distractor', 'milk', 0]);
  });

  it('executes a decision with seeded stochastic success ≈ executionSuccess, identical per (executorSeed, choice)', () => {
    for (const p of [0.8, 0.5]) {
      const env = new ChainDrawersLite({ K: 2, executionSuccess: p });
      let executed = 0,
        differ = 0;
      const n = 2000;
      for (let s = 0; s < n; s++) {
        const r = env.resetSync({ seed: 9, options: { role: 'query', object: 0, drawer: 1, executorSeed: s } });
        expect(ev(r, 'executed')).toBeNull();
        const out = env.stepSync(oneHot(2, 1));
        const again = env.resetSync({ seed: 77, options: { role: 'query', object: 3, drawer: 0, executorSeed: s } });
        const out2 = env.stepSync(Float32Array.of(1)); // same choice as an index, other scene and fact
        expect(ev(out2, 'executed')).toBe(ev(out, 'executed'));
        expect(ev(out, 'executed')).toBe(executorSucceeds(s, 1, p));
        expect(ev(out, 'success')).toBe(ev(out, 'executed')); // correct choice: success = executed
        expect(ev(out2, 'success')).toBe(false); // wrong choice never succeeds
        expect([out.done, ev(out, 'decision'), ev(out, 'firstVisit'), ev(out, 'decisionCorrect')]).toEqual([
          true,
          1,
          1,
          true,
        ]);
        expect(again.done).toBe(false);
        if (ev(out, 'executed')) executed++;
        if (executorSucceeds(s, 0, p) !== executorSucceeds(s, 1, p)) differ++;
      }
      expect(Math.abs(executed / n - p)).toBeLessThan(0.035);
      expect(differ).toBeGreaterThan(n * 0.1); // the choice enters the executor's stream
    }
    const always = new ChainDrawersLite({ executionSuccess: 1 });
    always.resetSync({ seed: 1, options: { drawer: 0 } });
    expect(ev(always.stepSync(oneHot(2, 0)), 'success')).toBe(true);
    const never = new ChainDrawersLite({ executionSuccess: 0 });
    never.resetSync({ seed: 1, options: { drawer: 0 } });
    expect(ev(never.stepSync(oneHot(2, 0)), 'success')).toBe(false);
  });

  it('reads decisions from logits (argmax, ties → lowest) or an index, and rejects bad ones', () => {
    const env = new ChainDrawersLite({ K: 3 });
    const decide = (a: Float32Array): unknown => {
      env.resetSync({ seed: 2 });
      return ev(env.stepSync(a), 'decision');
    };
    expect(decide(Float32Array.of(0.1, 2.5, -1))).toBe(1);
    expect(decide(Float32Array.of(1, 1, 1))).toBe(0);
    expect(decide(Float32Array.of(2))).toBe(2);
    env.resetSync({ seed: 2 });
    expect(() => env.stepSync(Float32Array.of(3))).toThrow(/not a drawer index/);
    expect(() => env.stepSync(Float32Array.of(0.5))).toThrow(ImepError);
    expect(() => env.stepSync(Float32Array.of(0, 1))).toThrow(/bad action/);
  });

  it('a scripted reader with memory decides every chain correctly (success at the execution ceiling); without, ≈1/K', () => {
    for (const k of [2, 3]) {
      const env = new ChainDrawersLite({ K: k });
      const n = 150;
      const run = (reader: ChainDrawersReader): { acc: number; sr: number; executed: number } => {
        let acc = 0,
          sr = 0,
          executed = 0;
        for (let seed = 0; seed < n; seed++) {
          reader.clear();
          const object = seed % CHAIN_OBJECTS.length;
          const first = seed % k;
          const final = (seed * 7 + 1) % k;
          runLiteEpisode(env, reader, { seed, options: { role: 'write', object, drawer: first } });
          runLiteEpisode(env, reader, {
            seed,
            options: { role: 'distractor', object: (object + 1) % 6, drawer: final },
          });
          runLiteEpisode(env, reader, { seed, options: { role: 'write', object, drawer: final } }); // latest write wins
          runLiteEpisode(env, reader, {
            seed,
            options: { role: 'distractor', object: (object + 2) % 6, drawer: first },
          });
          const q = runLiteEpisode(env, reader, { seed, options: { role: 'query', object, drawer: final } }).last;
          if (ev(q, 'decisionCorrect')) acc++;
          if (ev(q, 'success')) sr++;
          if (ev(q, 'executed')) executed++;
        }
        return { acc: acc / n, sr: sr / n, executed: executed / n };
      };
      const full = run(new ChainDrawersReader(k, true));
      expect(full.acc).toBe(1);
      expect(full.sr).toBe(full.executed);
      expect(full.sr).toBeGreaterThan(0.7);
      const none = run(new ChainDrawersReader(k, false));
      expect(Math.abs(none.acc - 1 / k)).toBeLessThan(0.1);
      expect(none.sr).toBeLessThan(full.sr);
    }
  });

  it('draws the default fact from the seed and validates options', () => {
    const env = new ChainDrawersLite({ K: 4 });
    const facts = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const r = env.resetSync({ seed });
      expect(ev(r, 'role')).toBe('query');
      expect(ev(r, 'executorSeed')).toBe(seed);
      facts.add(`${String(ev(r, 'object'))}/${String(ev(r, 'correctDrawer'))}`);
    }
    expect(facts.size).toBeGreaterThan(10);
    expect(() => env.resetSync({ seed: 1, options: { role: 'read' } })).toThrow(/options\.role/);
    expect(() => env.resetSync({ seed: 1, options: { object: 'spoon' } })).toThrow(/options\.object/);
    expect(() => env.resetSync({ seed: 1, options: { drawer: 4 } })).toThrow(/options\.drawer/);
    expect(() => new ChainDrawersLite({ K: 5 })).toThrow(/kwargs\.K/);
    expect(() => new ChainDrawersLite({ executionSuccess: 1.5 })).toThrow(/kwargs\.executionSuccess/);
    const q = env.resetSync({ seed: 1, options: { role: 'query', object: 'bowl', drawer: 2 } }) as StepResult;
    expect(q.obs['instruction']).toBe('put the bowl in its drawer');
  });
});
