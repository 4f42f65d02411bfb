/**
 * Capabilities beside the contracts (src/runtime/capabilities.ts): each guard recognises exactly its interface, the
 * lite environment and the memory policy declare theirs, and the lockstep loop draws frames into the policy's rows
 * under the frame field the ENVIRONMENT declares (never a field name of its own), giving back only what it may.
 */
import { describe, expect, it } from 'vitest';
import {
  drawsFramesInto,
  lendsInputRows,
  runLockstep,
  stepsSynchronously,
  takesBackObservations,
  type BatchPolicy,
  type DrawsFramesInto,
  type EnvSpec,
  type EpisodeInfo,
  type LendsInputRows,
  type NdArray,
  type PolicyOutput,
  type ResetRequest,
  type SimEnvironment,
  type SlotObservation,
  type StepResult,
  type StepsSynchronously,
  type TakesBackObservations,
} from '../../src/runtime/index.js';
import { AllowlistedEnvironment } from '../../src/runtime/allowlist.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';

const FRAME = 4;

const spec: EnvSpec = {
  id: 'pixels-env',
  maxSteps: 10,
  action: { shape: [1], dtype: 'float32' },
  observation: { pixels: { shape: [FRAME], dtype: 'uint8' } },
  methodVisible: ['pixels'],
  evaluatorOnly: [],
};

/** An in-process environment whose frame field is `pixels`; it logs draws and give-backs. */
class PixelsEnv implements SimEnvironment, StepsSynchronously, TakesBackObservations, DrawsFramesInto {
  readonly spec = spec;
  readonly frameField = 'pixels';
  t = 0;
  target: Uint8Array | null = null;
  constructor(readonly log: string[]) {}
  async reset(_r: ResetRequest): Promise<StepResult> {
    this.t = 0;
    this.target = null;
    return this.result(new Uint8Array(FRAME));
  }
  async step(a: NdArray): Promise<StepResult> {
    return this.stepSync(a);
  }
  stepSync(_a: NdArray): StepResult {
    this.t += 1;
    const into = this.t < 3 ? this.target : null;
    this.target = null;
    const frame = into ?? new Uint8Array(FRAME);
    frame.fill(this.t);
    return this.result(frame);
  }
  drawNextInto(view: Uint8Array): boolean {
    this.log.push(`draw(${view.length})`);
    if (view.length !== FRAME) return false;
    this.target = view;
    return true;
  }
  releaseObservation(r: StepResult): void {
    this.log.push(`release(${(r.obs['pixels'] as NdArray).data[0]})`);
  }
  async close(): Promise<void> {}
  private result(frame: Uint8Array): StepResult {
    return {
      obs: { pixels: { dtype: 'uint8', shape: [FRAME], data: frame } },
      evaluator: {},
      done: this.t >= 3,
      step: this.t,
    };
  }
}

/** A policy lending rows of its next input; it logs the fields it is asked for. */
class RowsPolicy implements BatchPolicy, LendsInputRows {
  readonly maxBatch = 2;
  readonly asked: string[] = [];
  private readonly rows = [new Uint8Array(FRAME), new Uint8Array(FRAME)];
  async resetSlot(_slot: number, _info: EpisodeInfo): Promise<void> {}
  async inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    return requests.map(() => ({ action: { dtype: 'float32', shape: [1], data: Float32Array.of(0) }, readouts: {} }));
  }
  nextInputRow(field: string, _batch: number, row: number): Uint8Array | null {
    this.asked.push(field);
    return field === 'pixels' ? (this.rows[row] as Uint8Array) : null;
  }
}

describe('capability guards', () => {
  it('recognise exactly the interfaces an object offers', () => {
    const bare: SimEnvironment = {
      spec,
      reset: async () => ({ obs: {}, evaluator: {}, done: false, step: 0 }),
      step: async () => ({ obs: {}, evaluator: {}, done: true, step: 1 }),
      close: async () => undefined,
    };
    expect([stepsSynchronously(bare), takesBackObservations(bare), drawsFramesInto(bare)]).toEqual([
      false,
      false,
      false,
    ]);
    const env = new PixelsEnv([]);
    expect([stepsSynchronously(env), takesBackObservations(env), drawsFramesInto(env)]).toEqual([true, true, true]);
    // drawNextInto without a declared frame field is not the capability
    const undeclared = Object.assign(Object.create(bare) as SimEnvironment, { drawNextInto: () => true });
    expect(drawsFramesInto(undeclared)).toBe(false);
    const policy = new RowsPolicy();
    expect(lendsInputRows(policy)).toBe(true);
    const plain: BatchPolicy = { maxBatch: 1, resetSlot: async () => undefined, inferBatch: async () => [] };
    expect(lendsInputRows(plain)).toBe(false);
  });

  it('a lite environment offers all three, with the frame field rgb; an allowlist wrapper offers none', () => {
    const lite = makeLiteEnv('ShellGameTouch-lite', {});
    expect(stepsSynchronously(lite) && takesBackObservations(lite) && drawsFramesInto(lite)).toBe(true);
    expect(drawsFramesInto(lite) ? lite.frameField : null).toBe('rgb');
    const wrapped = new AllowlistedEnvironment(lite, { methodVisible: ['rgb'], evaluatorOnly: ['success'] });
    expect([stepsSynchronously(wrapped), takesBackObservations(wrapped), drawsFramesInto(wrapped)]).toEqual([
      false,
      false,
      false,
    ]);
  });
});

describe('the lockstep loop and the capabilities', () => {
  it('asks the policy for rows of the field the environment declares, and draws frames into them', async () => {
    const log: string[] = [];
    const policy = new RowsPolicy();
    const seen: Uint8Array[] = [];
    await runLockstep(
      policy,
      () => new PixelsEnv(log),
      [0, 1].map((i) => ({ info: { episode: `e${i}` }, reset: { seed: i } })),
      {
        recycleObservations: true,
        subscribers: [
          { onStep: (_s, _e, _b, _o, after) => seen.push((after.obs['pixels'] as NdArray).data as Uint8Array) },
        ],
      },
    );
    expect(policy.asked.length).toBeGreaterThan(0);
    expect(new Set(policy.asked)).toEqual(new Set(['pixels']));
    // steps 1 and 2 of both episodes were drawn into the policy's rows; step 3 (the last) never
    expect(seen.filter((f) => f === policy['rows'][0] || f === policy['rows'][1]).length).toBe(4);
    // frames in the policy's rows are never given back; the first and last results neither: nothing is
    expect(log.filter((l) => l.startsWith('release'))).toEqual([]);
  });

  it('with a policy that lends no rows, recycling gives back every result but the first and last', async () => {
    const log: string[] = [];
    const inner = new RowsPolicy();
    const policy: BatchPolicy = {
      maxBatch: inner.maxBatch,
      resetSlot: (s, i) => inner.resetSlot(s, i),
      inferBatch: (r) => inner.inferBatch(r),
    };
    await runLockstep(
      policy,
      () => new PixelsEnv(log),
      [0, 1].map((i) => ({ info: { episode: `e${i}` }, reset: { seed: i } })),
      { recycleObservations: true },
    );
    expect(log).toEqual(['release(1)', 'release(1)', 'release(2)', 'release(2)']);
  });

  it('without recycling, no capability beyond the synchronous step is used', async () => {
    const log: string[] = [];
    const policy = new RowsPolicy();
    await runLockstep(
      policy,
      () => new PixelsEnv(log),
      [0, 1].map((i) => ({ info: { episode: `e${i}` }, reset: { seed: i } })),
    );
    expect(policy.asked).toEqual([]);
    expect(log).toEqual([]);
  });
});
