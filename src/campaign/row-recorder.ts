/**
 * The row recorder: a subscriber of the episode loop that turns what it hears into EpisodeRows
 * (src/evidence/records/episode-row.ts, validated with the zod schema), their timing lines and their trace
 * lines, and hands each finished unit's rows to the RowSink. Rows are built only when a unit ends,
 * so a retried unit's earlier tries leave no rows (every failed try is in the timing line instead).
 *
 * Row fields from the loop's events: outcome fields (success, firstVisit, decisionCorrect) from the
 * evaluator-only fields of the episode's last step; the action digest and per-step hashes from
 * onStep; the read summary from the substitution trace (onRead); the first-frame hash from the reset.
 * A failed episode has a null outcome; an attempt not run because an earlier attempt of its scope
 * failed is 'failed' with steps 0; a removed unit's rows are 'removed' with the removal's failure code.
 */
import type { ObsValue, StepResult, PolicyOutput } from '../runtime/index.js';
import type { PointOutcome, InstallationRecord, TraceEntry } from '../interventions/index.js';
import type { PlannedEpisode } from '../protocol/index.js';
import { EpisodeRowSchema, EpisodeTimingSchema, type EpisodeRow, type EpisodeTiming } from '../evidence/index.js';
import { ActionDigest } from './action-digest.js';
import { afterPoint, type ConditionPlan } from './condition-plan.js';
import { emptyReadSummary, ReadSummaryBuilder } from './read-summary.js';
import type { RowSink, TraceLine } from './row-sink.js';
import type { EpisodeEnd, FailureInfo, RunnerSubscriber, UnitJob, UnitOutcome } from './types.js';

interface EpisodeAcc {
  firstFrameHash: string | null;
  readonly actions: ActionDigest;
  readonly reads: ReadSummaryBuilder;
  readonly traces: TraceLine[];
  end: EpisodeEnd | null;
}

interface UnitAcc {
  readonly episodes: Map<number, EpisodeAcc>;
  installation: InstallationRecord | null;
}

type RanOutcome = Extract<UnitOutcome, { kind: 'ran' }>;

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

function bool(v: ObsValue | undefined): boolean | null {
  return typeof v === 'boolean' ? v : null;
}

function index(v: ObsValue | undefined): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

export class RowRecorder implements RunnerSubscriber {
  private readonly units = new Map<number, UnitAcc>();

  constructor(
    private readonly plan: ConditionPlan,
    private readonly sink: RowSink,
  ) {}

  private acc(slot: number, ep: PlannedEpisode): EpisodeAcc {
    let unit = this.units.get(slot);
    if (unit === undefined) this.units.set(slot, (unit = { episodes: new Map(), installation: null }));
    let e = unit.episodes.get(ep.seq);
    if (e === undefined) {
      e = {
        firstFrameHash: null,
        actions: new ActionDigest(),
        reads: new ReadSummaryBuilder({
          mode: this.plan.mode,
          oracle: this.plan.oracle,
          afterPoint: afterPoint(this.plan, ep.attempt),
          substituting: this.plan.substituting,
        }),
        traces: [],
        end: null,
      };
      if (unit.installation !== null) e.reads.setInstallation(unit.installation);
      unit.episodes.set(ep.seq, e);
    }
    return e;
  }

  onUnitStart(slot: number): void {
    this.units.set(slot, { episodes: new Map(), installation: null });
  }

  onPoint(slot: number, ep: PlannedEpisode, outcome: PointOutcome): void {
    const e = this.acc(slot, ep);
    if (outcome.kind === 'none') return;
    const record = outcome.kind === 'donor-short' ? outcome : outcome.record;
    e.traces.push({
      stream: 'interventions',
      entry: {
        seq: ep.seq,
        condition: ep.condition,
        scopeId: ep.scopeId,
        attempt: ep.attempt,
        point: outcome.kind,
        record,
      },
    });
    if (outcome.kind === 'installed') {
      const unit = this.units.get(slot);
      if (unit !== undefined) unit.installation = outcome.record;
      e.reads.setInstallation(outcome.record);
    }
  }

  onEpisodeStart(slot: number, ep: PlannedEpisode, first: StepResult): void {
    this.acc(slot, ep).firstFrameHash = first.firstFrameHash ?? null;
  }

  onRead(slot: number, ep: PlannedEpisode, entry: TraceEntry): void {
    this.acc(slot, ep).reads.add(entry);
  }

  onStep(slot: number, ep: PlannedEpisode, _before: StepResult, output: PolicyOutput): void {
    this.acc(slot, ep).actions.add(output.action);
  }

  onEpisodeEnd(slot: number, ep: PlannedEpisode, end: EpisodeEnd): void {
    this.acc(slot, ep).end = end;
  }

  onUnitEnd(slot: number, unit: UnitJob, outcome: UnitOutcome): void {
    const acc = this.units.get(slot);
    this.units.delete(slot);
    unit.episodes.forEach((ep, i) => {
      const e = acc?.episodes.get(ep.seq);
      const { row, timing } =
        outcome.kind === 'removed'
          ? this.removedRow(ep, outcome.failure)
          : outcome.skipped[i] === true || e === undefined || e.end === null
            ? this.notRunRow(ep, outcome)
            : this.ranRow(ep, outcome, outcome.statuses[i] === 'ok', e, e.end);
      this.sink.put({
        row: EpisodeRowSchema.parse(row),
        timing: EpisodeTimingSchema.parse(timing),
        traces: e?.traces ?? [],
      });
    });
  }

  /** An episode of a removed unit (a donor fell short): 'removed', with the removal's failure. */
  private removedRow(ep: PlannedEpisode, failure: FailureInfo): { row: EpisodeRow; timing: EpisodeTiming } {
    return {
      row: this.bare(ep, 'removed', failure, 1),
      timing: { seq: ep.seq, simMs: 0, policyMs: 0, bankMs: 0, totalMs: 0, failedTries: [] },
    };
  }

  /** An attempt not run (an earlier attempt of its scope failed on the last try): 'failed', naming that cause. */
  private notRunRow(ep: PlannedEpisode, outcome: RanOutcome): { row: EpisodeRow; timing: EpisodeTiming } {
    const cause = outcome.failedTries.at(-1);
    const failure: FailureInfo = {
      code: cause?.code ?? 'E_INTERNAL',
      message: `not run: attempt ${cause?.attempt ?? '?'} of this scope failed${cause ? ` (${cause.message})` : ''}`,
    };
    return {
      row: this.bare(ep, 'failed', failure, outcome.tries),
      timing: {
        seq: ep.seq,
        simMs: 0,
        policyMs: 0,
        bankMs: 0,
        totalMs: 0,
        failedTries: this.triesAt(outcome, ep.attempt),
      },
    };
  }

  /** An episode that ran: its outcome fields (when ok), digests, read summary and timing. */
  private ranRow(
    ep: PlannedEpisode,
    outcome: RanOutcome,
    statusOk: boolean,
    e: EpisodeAcc,
    end: EpisodeEnd,
  ): { row: EpisodeRow; timing: EpisodeTiming } {
    const ok = statusOk && end.status === 'ok';
    const ev = ok ? end.last?.evaluator : undefined;
    const row: EpisodeRow = {
      v: 1,
      seq: ep.seq,
      wave: ep.wave,
      condition: ep.condition,
      task: ep.task,
      seed: ep.seed,
      attempt: ep.attempt,
      scopeId: ep.scopeId,
      episodeId: ep.episodeId,
      status: ok ? 'ok' : 'failed',
      failure: ok ? null : (end.failure ?? { code: 'E_INTERNAL', message: 'failed' }),
      success: ev === undefined ? null : bool(ev['success'] as ObsValue | undefined),
      firstVisit: ev === undefined ? null : index(ev['firstVisit'] as ObsValue | undefined),
      decisionCorrect: ev === undefined ? null : bool(ev['decisionCorrect'] as ObsValue | undefined),
      steps: end.steps,
      firstFrameHash: e.firstFrameHash,
      actionDigest: e.actions.digest,
      actionHashes: e.actions.hashes,
      reads: e.reads.build(),
      tries: outcome.tries,
    };
    const c = end.clock;
    const timing: EpisodeTiming = {
      seq: ep.seq,
      simMs: round(c.simMs),
      policyMs: round(c.policyMs),
      bankMs: round(c.bankMs),
      totalMs: round(c.totalMs),
      failedTries: this.triesAt(outcome, ep.attempt),
    };
    return { row, timing };
  }

  private triesAt(outcome: UnitOutcome, attempt: number): { code: string; message: string }[] {
    if (outcome.kind !== 'ran') return [];
    return outcome.failedTries.filter((f) => f.attempt === attempt).map((f) => ({ code: f.code, message: f.message }));
  }

  private bare(ep: PlannedEpisode, status: 'failed' | 'removed', failure: FailureInfo, tries: number): EpisodeRow {
    return {
      v: 1,
      seq: ep.seq,
      wave: ep.wave,
      condition: ep.condition,
      task: ep.task,
      seed: ep.seed,
      attempt: ep.attempt,
      scopeId: ep.scopeId,
      episodeId: ep.episodeId,
      status,
      failure,
      success: null,
      firstVisit: null,
      decisionCorrect: null,
      steps: 0,
      firstFrameHash: null,
      actionDigest: new ActionDigest().digest,
      actionHashes: [],
      reads: emptyReadSummary(),
      tries,
    };
  }
}
