/**
 * Where finished rows go: a reorder buffer in front of a durable row target, so that rows computed out
 * of order (batch slots finish units in any order) are appended strictly in seq order, each one durably
 * (fsync'd by the target) before the next. Writes are queued and run while the loop keeps computing;
 * the first write error is kept and aborts the run at its next step (`error`).
 *
 * For each row, in order: its trace lines (written before the row, as the store requires), its timing
 * line (before the row too, so a crash between them leaves a side line that resume truncates rather than
 * a row without timing), then the row.
 *
 * Resume check: rows recomputed for seqs that are already durable (the earlier attempts of the unit the
 * run was killed in) are not written again; their canonical JSON must equal the durable line byte for
 * byte, else E_UNIT_TAMPERED — rows are deterministic, so a difference means the rows file was changed,
 * or the code or checkpoint differs from the run's start.
 */
import { canonicalJson, ImepError } from '../core/index.js';
import type { EpisodeRow, EpisodeTiming, SeqLine } from '../evidence/index.js';

/** The durable face of a run (FormalRun and SmallRun are RowWriters; shards have their own). */
export interface RowTarget {
  appendRow(row: SeqLine): Promise<void>;
  appendTiming(timing: SeqLine): Promise<void>;
  appendTrace(stream: string, entry: SeqLine): Promise<void>;
}

export interface TraceLine {
  readonly stream: string;
  readonly entry: SeqLine;
}

export interface FinishedRow {
  readonly row: EpisodeRow;
  readonly timing: EpisodeTiming;
  readonly traces: readonly TraceLine[];
}

export class RowSink {
  private readonly pending = new Map<number, FinishedRow>();
  private readonly extraTraces = new Map<number, TraceLine[]>();
  private idx = 0;
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown = undefined;
  private count = 0;
  private frozen = false;

  /**
   * @param expected the seqs this run appends, ascending
   * @param existing canonical JSON of durable rows that may be recomputed (resume), by seq
   */
  constructor(
    private readonly target: RowTarget,
    private readonly expected: readonly number[],
    private readonly existing: ReadonlyMap<number, string> = new Map(),
    private readonly file = 'rows.jsonl',
  ) {}

  /** The first write (or resume-check) error, if any. */
  get error(): unknown {
    return this.failure;
  }

  /** Rows appended so far. */
  get written(): number {
    return this.count;
  }

  /** Rows still expected (not yet appended or queued). */
  get remaining(): number {
    return this.expected.length - this.idx;
  }

  /**
   * A clean stop (run-stop.ts): rows put from now on are dropped — not durable, recomputed by the resume — while every
   * row queued before is still written (`settle`). A row the loop finishes after a Ctrl-C may record a simulator child
   * the same Ctrl-C killed: it must not become durable.
   */
  freeze(): void {
    this.frozen = true;
  }

  /** A trace line to write just before row `seq` (e.g. a segment's donor assignment). */
  trace(seq: number, line: TraceLine): void {
    const list = this.extraTraces.get(seq) ?? [];
    list.push(line);
    this.extraTraces.set(seq, list);
  }

  put(item: FinishedRow): void {
    if (this.frozen) return;
    const seq = item.row.seq;
    const durable = this.existing.get(seq);
    if (durable !== undefined) {
      if (canonicalJson(item.row) !== durable && this.failure === undefined) {
        const failure = (JSON.parse(durable) as { failure?: { code?: unknown; message?: unknown } | null }).failure;
        this.failure =
          failure !== null && failure !== undefined
            ? // an execution failure (a bridge timeout, a crashed simulator) is not deterministic: recomputing the unit
              // that straddles the resume point did not meet it again, so its remaining rows cannot be made consistent
              new ImepError(
                'E_OUT_OF_ORDER',
                `durable row seq ${seq} records an execution failure (${String(failure.code)}: ${String(failure.message)}) that the resumed run did not meet again; the unit it belongs to was cut by the crash and cannot be recomputed to the same rows`,
                {
                  file: this.file,
                  hint: 'nothing was written; the run cannot resume past this unit: fail the run (imep campaign fail-run UNIT, which keeps its rows under failed-runs/) and run it again',
                },
              )
            : new ImepError(
                'E_UNIT_TAMPERED',
                `durable row seq ${seq} differs from the row the resumed run recomputed`,
                {
                  file: this.file,
                  hint: 'rows are deterministic: the rows file was changed, or the code or checkpoint differs from the run’s start; run `imep campaign verify`',
                },
              );
      }
      this.extraTraces.delete(seq);
      return;
    }
    this.pending.set(seq, item);
    this.flush();
  }

  private flush(): void {
    for (;;) {
      const seq = this.expected[this.idx];
      if (seq === undefined) return;
      const item = this.pending.get(seq);
      if (item === undefined) return;
      this.pending.delete(seq);
      this.idx += 1;
      const traces = [...(this.extraTraces.get(seq) ?? []), ...item.traces];
      this.extraTraces.delete(seq);
      this.chain = this.chain.then(async () => {
        if (this.failure !== undefined) return;
        try {
          for (const t of traces) await this.target.appendTrace(t.stream, t.entry);
          await this.target.appendTiming(item.timing);
          await this.target.appendRow(item.row);
          this.count += 1;
        } catch (e) {
          this.failure = e;
        }
      });
    }
  }

  /** Waits for every queued write, whatever happened (for cleanup paths). */
  async settle(): Promise<void> {
    await this.chain;
  }

  /**
   * Waits for every queued write; throws the first error. Called when the run has ended: every expected seq
   * must have been written by then — a seq still missing (a row never finished, or one taken for a durable row
   * that is not there) is an error here, never a run that reports success with rows missing.
   */
  async drain(): Promise<void> {
    await this.chain;
    if (this.failure !== undefined) throw this.failure;
    if (this.idx < this.expected.length) {
      const missing = this.expected.slice(this.idx, this.idx + 5).join(', ');
      throw new ImepError(
        'E_INTERNAL',
        `the run ended with ${this.expected.length - this.idx} of its rows not written (seq ${missing}${this.expected.length - this.idx > 5 ? ', …' : ''})`,
        {
          file: this.file,
          hint: 'nothing was lost: run `imep campaign resume` (or the shard again) to write them',
        },
      );
    }
  }
}
