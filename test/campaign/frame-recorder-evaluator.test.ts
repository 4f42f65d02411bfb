/**
 * The frame recorder (src/campaign/frame-recorder.ts) records `frames.field` from the observation when it is
 * method-visible, and from the evaluator's part when it is an evaluator-only render (a real adapter's `frame` for a
 * state-observation policy): fake steps, one uint8 [H, W, 3] image each, no simulator needed.
 */
import { describe, expect, it } from 'vitest';
import { FrameRecorder, renderOnRequest } from '../../src/campaign/frame-recorder.js';
import type { NdArray, StepResult } from '../../src/runtime/index.js';
import type { Frames, PlannedEpisode } from '../../src/protocol/index.js';

const ep: PlannedEpisode = {
  seq: 0,
  wave: 1,
  condition: 'A',
  task: 'RememberColor3-VLA',
  seed: 7,
  attempt: 1,
  scopeId: 's',
  episodeId: 'e',
};

const image = (value: number): NdArray => ({
  dtype: 'uint8',
  shape: [2, 2, 3],
  data: new Uint8Array(12).fill(value),
});

const step = (n: number, part: 'obs' | 'evaluator'): StepResult => ({
  obs: part === 'obs' ? { frame: image(n) } : { joints: 0 },
  evaluator: part === 'evaluator' ? { frame: image(n), success: false } : { success: false },
  done: false,
  step: n,
});

function record(part: 'obs' | 'evaluator'): { step: number; width: number; height: number }[] {
  const frames: Frames = { steps: [0, 2], conditions: ['A'], units: 1, field: 'frame', downsample: 1 };
  const lines: unknown[] = [];
  const rec = new FrameRecorder(frames, new Map([[ep.task, new Set([7])]]), {
    trace: (_seq, t) => void lines.push(t.entry),
  });
  rec.onEpisodeStart(0, ep, step(0, part));
  for (const n of [1, 2, 3]) rec.onStep(0, ep, step(n - 1, part), null, step(n, part));
  rec.onEpisodeEnd(0, ep, { status: 'ok', failure: null, last: step(3, part), steps: 3, clock: {} as never });
  expect(lines).toHaveLength(1);
  return (lines[0] as { frames: { step: number; width: number; height: number }[] }).frames.map(
    ({ step: s, width, height }) => ({ step: s, width, height }),
  );
}

describe('frame recorder fields', () => {
  const want = [
    { step: 0, width: 2, height: 2 },
    { step: 2, width: 2, height: 2 },
  ];
  it('records a method-visible image from the observation', () => expect(record('obs')).toEqual(want));
  it('records an evaluator-only render from the evaluator part (the policy never gets it)', () =>
    expect(record('evaluator')).toEqual(want));
});

describe('the render is asked for only in recorded episodes', () => {
  const frames: Frames = { steps: [0], conditions: ['A'], units: 1, field: 'frame', downsample: 1 };
  const seeds = new Map([[ep.task, new Set([7])]]);
  const sink = { trace: () => undefined };

  it('an evaluator-only field: { frame: [registered steps] } on the recorded (condition, seed), nothing on the others', () => {
    const rec = new FrameRecorder({ ...frames, steps: [0, 4, 9] }, seeds, sink, true);
    expect(rec.resetOptions(ep)).toEqual({ frame: [0, 4, 9] });
    expect(rec.resetOptions({ ...ep, seed: 8 })).toBeUndefined();
    expect(rec.resetOptions({ ...ep, condition: 'N_blk' })).toBeUndefined();
    expect(rec.resetOptions({ ...ep, task: 'other' })).toBeUndefined();
  });

  it('a method-visible image is never asked for (the simulator renders it for the policy anyway)', () => {
    expect(new FrameRecorder(frames, seeds, sink).resetOptions(ep)).toBeUndefined();
    expect(renderOnRequest({ frames, allowlists: { evaluatorOnly: ['success', 'frame'] } })).toBe(true);
    expect(renderOnRequest({ frames: { ...frames, field: 'rgb' }, allowlists: { evaluatorOnly: ['success'] } })).toBe(
      false,
    );
    expect(renderOnRequest({ allowlists: { evaluatorOnly: ['frame'] } })).toBe(false);
  });
});
