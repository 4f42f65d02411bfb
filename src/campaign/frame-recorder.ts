/**
 * The frame recorder: a subscriber of the episode loop that, for the protocol's registered `frames`
 * (schema-frames.ts), keeps the image field of each recorded episode at the registered elapsed steps (a
 * method-visible field from the observation, an evaluator-only render from the evaluator's part) —
 * downsampled and PNG-encoded at once (the simulator may reuse its frame buffer) — and the episode's memory
 * reads on a timeline (the step each read fed, whether it was a decision query, whether it selected a
 * substituted record and whether that changed what the policy read). At the episode's end it hands one
 * line to the row sink's `frames` trace stream, written just before the episode's row, so the seal hashes
 * it with the rest of the unit and a resumed run rewrites it exactly (the simulators are deterministic).
 * Recorded: the listed conditions, the first `units` seeds of each task. Off when the protocol has no `frames`.
 */
import { downsampleRgb, encodePngRgb } from '../core/index.js';
import type { NdArray, StepResult } from '../runtime/index.js';
import type { TraceEntry } from '../interventions/index.js';
import type { PlannedEpisode, Frames } from '../protocol/index.js';
import type { DeepReadonly, FramesLine as FramesLineRecord } from '../evidence/index.js';
import type { RowSink } from './row-sink.js';
import type { EpisodeEnd, RunnerSubscriber } from './types.js';

export const FRAMES_STREAM = 'frames';

/**
 * The reset option that asks an adapter for its evaluator-only render in this episode, at the registered elapsed
 * steps only (sim-bridge/PROTOCOL.md "reset options"): `{ frame: [steps…] }`.
 */
export function renderOption(frames: Frames): Readonly<Record<string, unknown>> {
  return { frame: [...frames.steps] };
}

/** Whether the protocol's frames come from an evaluator-only render (asked for per recorded episode). */
export function renderOnRequest(protocol: {
  frames?: Frames | undefined;
  allowlists: { evaluatorOnly: readonly string[] };
}): boolean {
  return protocol.frames !== undefined && protocol.allowlists.evaluatorOnly.includes(protocol.frames.field);
}

export interface FrameRead {
  readonly step: number;
  readonly bank: string;
  readonly query: number;
  readonly decision: boolean;
  readonly substituted: boolean;
  readonly changed: boolean;
}

/** One line of traces/frames.jsonl (its schema: src/evidence/records/frames-line.ts). */
export type FramesLine = DeepReadonly<FramesLineRecord>;

interface Recording {
  step: number;
  frames: FramesLine['frames'][number][];
  reads: FrameRead[];
}

/** The seeds of each task that are recorded: the first `units` in ascending order. */
export function recordedSeeds(frames: Frames, episodes: readonly PlannedEpisode[]): Map<string, Set<number>> {
  const byTask = new Map<string, Set<number>>();
  for (const e of episodes) {
    let s = byTask.get(e.task);
    if (s === undefined) byTask.set(e.task, (s = new Set()));
    s.add(e.seed);
  }
  return new Map(
    [...byTask].map(([t, seeds]) => [t, new Set([...seeds].sort((x, y) => x - y).slice(0, frames.units))]),
  );
}

export class FrameRecorder implements RunnerSubscriber {
  private readonly slots = new Map<number, Recording>();
  private readonly steps: ReadonlySet<number>;
  private readonly option: Readonly<Record<string, unknown>>;
  private readonly conditions: ReadonlySet<string>;

  constructor(
    private readonly frames: Frames,
    private readonly seeds: ReadonlyMap<string, ReadonlySet<number>>,
    private readonly sink: Pick<RowSink, 'trace'>,
    /** The field is an evaluator-only render: ask the reset of each recorded episode for it (`{ frame: true }`). */
    private readonly requestRender = false,
  ) {
    this.steps = new Set(frames.steps);
    this.option = renderOption(frames);
    this.conditions = new Set(frames.conditions);
  }

  /**
   * An evaluator-only render costs a real simulator a camera pass per step (MIKASA state mode: ~0.19 s against
   * ~0.002 s), so it is asked for only in the episodes recorded here, at the registered steps; the others carry a
   * blank frame. Rendering never touches the physics, so the rows are those of a run without frames.
   */
  resetOptions(ep: PlannedEpisode): Readonly<Record<string, unknown>> | undefined {
    return this.requestRender && this.wanted(ep) ? this.option : undefined;
  }

  private wanted(ep: PlannedEpisode): boolean {
    return this.conditions.has(ep.condition) && this.seeds.get(ep.task)?.has(ep.seed) === true;
  }

  private capture(rec: Recording, result: StepResult): void {
    if (!this.steps.has(result.step)) return;
    // a method-visible image, or an evaluator-only render (a state-observation policy never gets its pixels)
    const field = this.frames.field;
    const img = (result.obs[field] ?? result.evaluator[field]) as NdArray | undefined;
    if (
      img === undefined ||
      img.dtype !== 'uint8' ||
      img.shape.length !== 3 ||
      img.shape[2] !== 3 ||
      !(img.data instanceof Uint8Array)
    )
      return;
    const [h, w] = img.shape as [number, number, number];
    const small = downsampleRgb(w, h, img.data, this.frames.downsample);
    rec.frames.push({
      step: result.step,
      width: small.width,
      height: small.height,
      png: encodePngRgb(small.width, small.height, small.rgb).toString('base64'),
    });
  }

  onEpisodeStart(slot: number, ep: PlannedEpisode, first: StepResult): void {
    if (!this.wanted(ep)) {
      this.slots.delete(slot);
      return;
    }
    const rec: Recording = { step: first.step, frames: [], reads: [] };
    this.slots.set(slot, rec);
    this.capture(rec, first);
  }

  onRead(slot: number, _ep: PlannedEpisode, e: TraceEntry): void {
    const rec = this.slots.get(slot);
    if (rec === undefined) return;
    rec.reads.push({
      step: rec.step,
      bank: e.bank,
      query: e.queryIndex,
      decision: e.decisionStep,
      substituted: e.selected.some((s) => s.unmodifiedSubstituted),
      changed: e.readAfter !== e.readBefore,
    });
  }

  onStep(slot: number, _ep: PlannedEpisode, _before: StepResult, _out: unknown, after: StepResult): void {
    const rec = this.slots.get(slot);
    if (rec === undefined) return;
    rec.step = after.step;
    this.capture(rec, after);
  }

  onEpisodeEnd(slot: number, ep: PlannedEpisode, end: EpisodeEnd): void {
    const rec = this.slots.get(slot);
    if (rec === undefined) return;
    this.slots.delete(slot);
    const line: FramesLine = {
      seq: ep.seq,
      condition: ep.condition,
      task: ep.task,
      seed: ep.seed,
      attempt: ep.attempt,
      episodeId: ep.episodeId,
      status: end.status,
      steps: end.steps,
      frames: rec.frames,
      reads: rec.reads,
    };
    this.sink.trace(ep.seq, { stream: FRAMES_STREAM, entry: line });
  }
}
