/**
 * The hot-path checks (`fastStepRequestBody`, `fastStepResult`) must accept exactly what the zod schemas
 * accept and return the same output; whatever they do not accept goes to the schema, so a disagreement
 * can only be "fast path accepts what the schema rejects" or "outputs differ" — both checked here over
 * a grid of valid and malformed bodies.
 */
import { describe, expect, it } from 'vitest';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import {
  fastStepRequestBody,
  fastStepResult,
  requestBodySchemas,
  stepResultSchema,
} from '../../src/bridges/op-schemas.js';

const action = ndarray('float32', [2], Float32Array.of(0.25, -1));
const frame = ndarray('uint8', [2, 2, 3], new Uint8Array(12).fill(7));
const HASH = 'ab'.repeat(32);

const requestBodies: Record<string, unknown>[] = [
  { handle: 'h1', action },
  { handle: 'h1:replay/x', action, extra: 1 },
  { handle: '', action },
  { handle: 3, action },
  { handle: 'h1' },
  { handle: 'h1', action: { dtype: 'float32', shape: [2], data: Float32Array.of(1, 2) } },
  { handle: 'h1', action: { dtype: 'float32', shape: [3], data: Float32Array.of(1, 2) } },
  { handle: 'h1', action: Float32Array.of(1, 2) },
  { handle: 'h1', action: null },
];

const results: Record<string, unknown>[] = [
  { obs: { rgb: frame }, evaluator: { reward: 0.5 }, done: false, step: 3 },
  { obs: {}, evaluator: {}, done: true, step: 0, firstFrameHash: HASH },
  { obs: {}, evaluator: {}, done: true, step: 0, firstFrameHash: null },
  { obs: {}, evaluator: {}, done: true, step: 0, firstFrameHash: undefined },
  { obs: {}, evaluator: {}, done: true, step: 0, firstFrameHash: HASH.toUpperCase() },
  { obs: {}, evaluator: {}, done: true, step: 0, firstFrameHash: 'abc' },
  { obs: {}, evaluator: {}, done: true, step: 0, firstFrameHash: 5 },
  { obs: {}, evaluator: {}, done: false, step: 1, junk: 'dropped' },
  { obs: [], evaluator: {}, done: false, step: 1 },
  { obs: {}, evaluator: null, done: false, step: 1 },
  { obs: {}, evaluator: {}, done: 0, step: 1 },
  { obs: {}, evaluator: {}, done: false, step: -1 },
  { obs: {}, evaluator: {}, done: false, step: 1.5 },
  { obs: {}, evaluator: {}, done: false, step: 2 ** 53 },
  { obs: {}, evaluator: {}, done: false },
  { obs: new (class X {})(), evaluator: {}, done: false, step: 1 },
];

describe('hot-path checks agree with the schemas', () => {
  it('step request bodies', () => {
    let fast = 0;
    for (const body of requestBodies) {
      const schema = requestBodySchemas.step.safeParse(body);
      const f = fastStepRequestBody(body);
      if (f !== undefined) {
        fast += 1;
        expect(schema.success).toBe(true);
        expect(f).toEqual(schema.data);
        expect(Object.keys(f)).toEqual(Object.keys(schema.data as object));
      }
    }
    expect(fast).toBe(3); // the first two, and the plain {dtype, shape, data} action
  });

  it('step results', () => {
    let fast = 0;
    for (const body of results) {
      const schema = stepResultSchema.safeParse(body);
      const f = fastStepResult(body);
      if (f !== undefined) {
        fast += 1;
        expect(schema.success).toBe(true);
        expect(f).toEqual(schema.data);
        expect(Object.keys(f)).toEqual(Object.keys(schema.data as object));
      } else {
        // what the fast path leaves to the schema, the schema rejects (so its message is the one reported)
        expect(schema.success).toBe(false);
      }
    }
    expect(fast).toBe(5);
  });
});
