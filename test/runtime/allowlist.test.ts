import { describe, expect, it } from 'vitest';
import {
  AllowlistedEnvironment,
  assertDisjointAllowlists,
  droppedFields,
  splitBySpec,
  splitObservation,
} from '../../src/runtime/allowlist.js';
import type { StepResult } from '../../src/runtime/environment.js';
import { isImepError } from '../../src/core/errors.js';
import { FakeEnv } from '../fixtures/bridge/fake-env.js';

const result: StepResult = {
  obs: { rgb: 1, toolPosition: 2, success: true, leaked: 'x' },
  evaluator: { seed: 4 },
  done: false,
  step: 3,
};

describe('allowlists', () => {
  it('refuses overlapping allowlists, naming every overlapping field', () => {
    let error: unknown;
    try {
      assertDisjointAllowlists({
        methodVisible: ['rgb', 'success', 'seed'],
        evaluatorOnly: ['seed', 'success', 'reward'],
      });
    } catch (e) {
      error = e;
    }
    expect(isImepError(error) && error.code).toBe('E_ALLOWLIST_OVERLAP');
    expect((error as Error).message).toMatch(/fields "seed", "success" are on both/);
    expect(() => assertDisjointAllowlists({ methodVisible: ['rgb'], evaluatorOnly: ['seed'] })).not.toThrow();
  });

  it('drops every non-method-visible field from obs; evaluator-only ones move to evaluator', () => {
    const r = splitObservation(result, { methodVisible: ['rgb'], evaluatorOnly: ['success', 'seed'] });
    expect(r.obs).toEqual({ rgb: 1 });
    expect(r.evaluator).toEqual({ seed: 4, success: true });
    expect(r.step).toBe(3);
    expect(droppedFields(result, { methodVisible: ['rgb'], evaluatorOnly: [] })).toEqual([
      'toolPosition',
      'success',
      'leaked',
    ]);
  });

  it('splits by spec on the server: exactly the listed fields, nothing else', () => {
    const r = splitBySpec(result, {
      methodVisible: ['rgb', 'toolPosition', 'absent'],
      evaluatorOnly: ['seed', 'success'],
    });
    expect(r.obs).toEqual({ rgb: 1, toolPosition: 2 });
    expect(r.evaluator).toEqual({ seed: 4, success: true });
  });

  it('wraps an environment; refuses a method-visible allowlist naming an evaluator-only field of the env', async () => {
    const env = new AllowlistedEnvironment(new FakeEnv(), { methodVisible: ['toolPosition'], evaluatorOnly: [] });
    expect(env.spec.methodVisible).toEqual(['toolPosition']);
    const r = await env.reset({ seed: 1 });
    expect(Object.keys(r.obs)).toEqual(['toolPosition']);
    expect(r.evaluator['secret']).toBe(42);
    expect(
      () => new AllowlistedEnvironment(new FakeEnv(), { methodVisible: ['rgb', 'secret'], evaluatorOnly: [] }),
    ).toThrow(/"secret"/);
  });
});

describe('allowlists: values under a visible name', () => {
  it('a visible ndarray passes with dtype, shape and data only; a key riding on it is dropped', () => {
    const data = new Uint8Array(12);
    const framed = { dtype: 'uint8', shape: [2, 2, 3], data, ballCup: 2 };
    const plain = { dtype: 'float32', shape: [2], data: Float32Array.of(0.1, 0.2) };
    const result: StepResult = {
      obs: { rgb: framed as never, toolPosition: plain as never, instruction: 'touch the cup' },
      evaluator: { ballCup: 2 },
      done: false,
      step: 1,
    };
    const out = splitObservation(result, {
      methodVisible: ['rgb', 'toolPosition', 'instruction'],
      evaluatorOnly: ['ballCup'],
    });
    expect(out.obs['rgb']).toEqual({ dtype: 'uint8', shape: [2, 2, 3], data });
    expect((out.obs['rgb'] as unknown as { data: Uint8Array }).data).toBe(data); // not copied
    expect(out.obs['toolPosition']).toBe(plain); // already clean: the same object
    expect(out.obs['instruction']).toBe('touch the cup');
    expect(JSON.stringify(Object.keys(out.obs['rgb'] as object))).toBe('["dtype","shape","data"]');
  });
});
