import { describe, expect, it } from 'vitest';
import { ImepError } from '../../../src/core/errors.js';
import { sha256Hex } from '../../../src/core/hash.js';
import { LITE_ENV_IDS, makeLiteEnv, makeLiteEnvSync } from '../../../src/sims/lite/registry.js';
import { frameOf } from '../../../src/sims/lite/scripted.js';
import type { StepResult } from '../../../src/runtime/environment.js';

function actionFor(id: string): Float32Array {
  return id.startsWith('ChainDrawers') ? Float32Array.of(1, 0) : Float32Array.of(0.01, 0.02);
}

function caught(f: () => unknown): ImepError {
  try {
    f();
  } catch (e) {
    if (e instanceof ImepError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe('lite registry', () => {
  it('lists the five lite environments', () => {
    expect([...LITE_ENV_IDS]).toEqual([
      'ShellGameTouch-lite',
      'RememberColor3-lite',
      'RememberColor5-lite',
      'RememberColor9-lite',
      'ChainDrawers-lite',
    ]);
  });

  it('rejects an unknown id with E_SIM_UNAVAILABLE listing the known ids', () => {
    const e = caught(() => makeLiteEnv('ShellGamePush-lite'));
    expect(e.code).toBe('E_SIM_UNAVAILABLE');
    expect(e.message).toContain('ShellGamePush-lite');
    for (const id of LITE_ENV_IDS) expect(e.hint).toContain(id);
  });

  it('rejects bad kwargs with E_USAGE naming the kwarg', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['ShellGameTouch-lite', { resolution: 96 }, 'kwargs.resolution'],
      ['ShellGameTouch-lite', { blackoutFromStep: -1 }, 'kwargs.blackoutFromStep'],
      ['ShellGameTouch-lite', { strict: 'yes' }, 'kwargs.strict'],
      ['RememberColor3-lite', { reshowCueOnRetry: 1 }, 'kwargs.reshowCueOnRetry'],
      ['RememberColor9-lite', { K: 3 }, 'kwargs.K'],
      ['ChainDrawers-lite', { K: 1 }, 'kwargs.K'],
    ];
    for (const [id, kwargs, field] of cases) {
      const e = caught(() => makeLiteEnvSync(id, kwargs));
      expect(e.code).toBe('E_USAGE');
      expect(e.field).toBe(field);
      expect(e.message).toContain(field);
    }
  });

  it.each(LITE_ENV_IDS)(
    '%s: method-visible and evaluator-only fields are disjoint and exactly what results carry',
    (id) => {
      for (const resolution of [64, 128]) {
        const env = makeLiteEnvSync(id, { resolution });
        const { spec } = env;
        expect(spec.id).toBe(id);
        expect([...spec.methodVisible]).toEqual(['rgb', 'toolPosition', 'instruction']);
        expect(spec.methodVisible.filter((f) => spec.evaluatorOnly.includes(f))).toEqual([]);
        for (const f of [
          'success',
          'reward',
          'terminated',
          'truncated',
          'seed',
          'task',
          'attempt',
          'firstVisit',
          'decisionCorrect',
        ]) {
          expect(spec.evaluatorOnly).toContain(f);
        }
        expect(Object.keys(spec.observation).sort()).toEqual([...spec.methodVisible, ...spec.evaluatorOnly].sort());
        expect(spec.observation['rgb']).toEqual({ shape: [resolution, resolution, 3], dtype: 'uint8' });
        const results: StepResult[] = [env.resetSync({ seed: 5 })];
        while (!(results[results.length - 1] as StepResult).done) results.push(env.stepSync(actionFor(id)));
        for (const r of results) {
          expect(Object.keys(r.obs).sort()).toEqual([...spec.methodVisible].sort());
          expect(Object.keys(r.evaluator).sort()).toEqual([...spec.evaluatorOnly].sort());
          const f = frameOf(r.obs);
          expect([f.height, f.width, f.data.length]).toEqual([resolution, resolution, resolution * resolution * 3]);
          expect(r.obs['toolPosition']).toBeInstanceOf(Float32Array);
          expect(typeof r.obs['instruction']).toBe('string');
          expect(r.evaluator['task']).toBe(id);
          expect(r.evaluator['seed']).toBe(5);
        }
        expect(results.length - 1).toBeLessThanOrEqual(spec.maxSteps);
        expect(results.map((r) => r.step)).toEqual(results.map((_, i) => i));
      }
    },
  );

  it('wraps the synchronous core as the async SimEnvironment (errors become rejections)', async () => {
    const env = makeLiteEnv('RememberColor3-lite', { strict: true });
    const r = await env.reset({ seed: 8, options: { attempt: 1 } });
    expect(r.firstFrameHash).toBe(sha256Hex(frameOf(r.obs).data));
    const s = await env.step({ dtype: 'float32', shape: [2], data: Float32Array.of(0, 0.06) });
    expect(s.step).toBe(1);
    await expect(env.step({ dtype: 'float32', shape: [3], data: Float32Array.of(0, 0, 0) })).rejects.toThrow(
      /bad action/,
    );
    await expect(env.reset({ seed: 1, initStateId: 2 })).rejects.toThrow(/init states/);
    await env.close();
    await expect(env.reset({ seed: 8 })).rejects.toThrow(/closed/);
  });

  it('renders 128×128 as the same scene as 64×64 (same seed → same fact, finer pixels)', () => {
    const lo = makeLiteEnvSync('ShellGameTouch-lite');
    const hi = makeLiteEnvSync('ShellGameTouch-lite', { resolution: 128 });
    for (let seed = 0; seed < 10; seed++) {
      const a = lo.resetSync({ seed }),
        b = hi.resetSync({ seed });
      expect(b.evaluator['ballCup']).toBe(a.evaluator['ballCup']);
      expect(Array.from(b.obs['toolPosition'] as Float32Array)).toEqual(
        Array.from(a.obs['toolPosition'] as Float32Array),
      );
      expect(b.firstFrameHash).not.toBe(a.firstFrameHash);
    }
  });
});
