import { ImepError } from '../core/errors.js';
import { appendJsonLine } from './durable-append.js';
import { DurableRowSchema } from './unit-layout.js';

/**
 * Appends a run's rows and side lines. Rows must arrive in seq order (the writer knows the next
 * seq); every append first runs `guard`, which re-reads the unit's state so a unit sealed or failed
 * meanwhile is never written to. Rows are serialised as canonical JSON, so the same row values give
 * the same bytes whether or not the run was interrupted and resumed.
 */

export interface RowWriterFiles {
  readonly rows: string;
  readonly timings: string;
  readonly tracesDir: string;
}

const STREAM_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export type SeqLine = { readonly seq: number } & Readonly<Record<string, unknown>>;

export class RowWriter {
  private next: number;

  constructor(
    readonly files: RowWriterFiles,
    nextSeq: number,
    private readonly guard: () => Promise<void>,
  ) {
    this.next = nextSeq;
  }

  /** The seq the next row must carry. */
  get nextSeq(): number {
    return this.next;
  }

  /** Appends a row; its `seq` must equal `nextSeq`. A row with an `error` string counts as a failure. */
  async appendRow(row: SeqLine): Promise<void> {
    const parsed = DurableRowSchema.safeParse(row);
    if (!parsed.success) {
      throw new ImepError('E_INTERNAL', `row is not a durable row: ${parsed.error.issues[0]?.message ?? 'invalid'}`, { file: this.files.rows });
    }
    if (row.seq !== this.next) {
      throw new ImepError('E_OUT_OF_ORDER', `row seq ${row.seq} arrived but the next row is seq ${this.next}`, {
        file: this.files.rows,
        hint: 'rows are appended in seq order; resume with `imep campaign resume`',
      });
    }
    await this.guard();
    await appendJsonLine(this.files.rows, row);
    this.next += 1;
  }

  /** Appends a timing line (kept apart from rows: timings are not deterministic). */
  async appendTiming(timing: SeqLine): Promise<void> {
    this.checkSideSeq(timing, this.files.timings);
    await this.guard();
    await appendJsonLine(this.files.timings, timing);
  }

  /** Appends a trace line to `traces/<stream>.jsonl`; written before its row, so `seq <= nextSeq`. */
  async appendTrace(stream: string, entry: SeqLine): Promise<void> {
    if (!STREAM_RE.test(stream)) throw new ImepError('E_USAGE', `bad trace stream name '${stream}'`, { field: 'stream' });
    const file = `${this.files.tracesDir}/${stream}.jsonl`;
    this.checkSideSeq(entry, file);
    await this.guard();
    await appendJsonLine(file, entry);
  }

  private checkSideSeq(line: SeqLine, file: string): void {
    if (!Number.isSafeInteger(line.seq) || line.seq < 0 || line.seq > this.next) {
      throw new ImepError('E_OUT_OF_ORDER', `line seq ${String(line.seq)} is not a committed or current row (next row is seq ${this.next})`, { file });
    }
  }
}
