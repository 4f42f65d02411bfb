/**
 * The frame recorder: a subscriber of the episode loop that, for the protocol's registered `frames`
 * (schema-frames.ts), keeps the image field of each recorded episode at the registered elapsed steps (a
 * method-visible field from the observation, an evaluator-only render from the evaluator's part) —
 * downsampled and PNG-encoded at once (the simulator may reuse its frame buffer) — and the episode's memory
 * reads on a timeline (the step each read fed, whether it was a decision query, whether it selected a
 * substituted record and whether that changed what the policy read) — and what the policy did: its action at every
 * step and, where the environment declares a `tool_xy` position field, the tool's path. At the episode's end it hands one
 * line to the row sink's `frames` trace stream, written just before the episode's row, so the seal hashes
 * it with the rest of the unit and a resumed run rewrites it exactly (the simulators are deterministic).
 * Recorded: the listed conditions, the first `units` seeds of each task. Off when the protocol has no `frames`.
 */
import { downsampleRgb, encodePngRgb } from '../core/index.js';
import type { EnvSpec, NdArray, PolicyOutput, StepResult } from '../runtime/index.js';
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
  actions: { step: number; action: number[] }[];
  points: { step: number; x: number; y: number }[];
}

/** 1e-4 rounding: the report draws and prints the values; full precision would only swell the trace. */
function r4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

/** The executed action of a policy output: the vector, or the first row of an [H, A] chunk. */
export function firstActionRow(action: NdArray): number[] {
  const dims = action.shape.length >= 2 ? (action.shape[action.shape.length - 1] ?? 0) : action.data.length;
  const out: number[] = [];
  for (let i = 0; i < dims && i < action.data.length; i++) out.push(r4(Number(action.data[i])));
  return out;
}

/** The method-visible field an env's conventions declare as the tool's (x, y) on its top-down table, if any. */
export function toolTrackField(spec: Pick<EnvSpec, 'methodVisible' | 'conventions'>): string | undefined {
  const f = spec.conventions?.observation?.find((o) => o.format === 'tool_xy' && o.field !== undefined)?.field;
  return f !== undefined && spec.methodVisible.includes(f) ? f : undefined;
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
    /** The observation field holding the tool's (x, y) (toolTrackField), recorded per step as the episode's track. */
    private readonly trackField?: string,
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
    const rec: Recording = { step: first.step, frames: [], reads: [], actions: [], points: [] };
    this.slots.set(slot, rec);
    this.capture(rec, first);
    this.track(rec, first);
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

  private track(rec: Recording, result: StepResult): void {
    if (this.trackField === undefined) return;
    const v = result.obs[this.trackField] as ArrayLike<number> | NdArray | undefined;
    const data = v !== undefined && typeof v === 'object' && 'data' in v ? v.data : v;
    if (data === undefined || typeof data !== 'object' || (data as ArrayLike<number>).length < 2) return;
    const xy = data as ArrayLike<number>;
    rec.points.push({ step: result.step, x: r4(Number(xy[0])), y: r4(Number(xy[1])) });
  }

  onStep(slot: number, _ep: PlannedEpisode, before: StepResult, out: PolicyOutput | null, after: StepResult): void {
    const rec = this.slots.get(slot);
    if (rec === undefined) return;
    if (out !== null) rec.actions.push({ step: before.step, action: firstActionRow(out.action) });
    rec.step = after.step;
    this.capture(rec, after);
    this.track(rec, after);
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
      actions: rec.actions,
      ...(this.trackField === undefined
        ? {}
        : { track: { field: this.trackField, format: 'tool_xy' as const, points: rec.points } }),
    };
    this.sink.trace(ep.seq, { stream: FRAMES_STREAM, entry: line });
  }
}
