import { closeSync, constants, fdatasync, fsync, openSync, statSync, writeSync, type BigIntStats } from 'node:fs';
import { dirname } from 'node:path';
import { ImepError, isImepError } from '../../core/index.js';
import { ioError } from './atomic-write.js';
import { encodeJsonLine } from './durable-append.js';
import { DurableRowSchema } from '../unit-layout.js';

/**
 * Appends a run's rows and side lines (timings, traces), keeping every file it writes OPEN for the run.
 *
 * Order and durability, per row (the RowSink writes a row's trace and timing lines, then the row):
 *   - a side line (trace or timing) of the row being written (seq = nextSeq) is written when it is
 *     appended: a plain write into the open file, so it is in the file before its row is written;
 *   - appendRow writes the row, then fdatasyncs the rows file AND every side file written since the
 *     last row — one fdatasync each, concurrently, in one step. The row is committed (nextSeq advances,
 *     the next row is accepted) only once all of them return, so every row and its side lines are
 *     durable before the next row is written: durability per episode;
 *   - a side line of an already committed row (seq < nextSeq) is fdatasync'd at once;
 *   - a file created by the writer has its directory fsync'd with its first sync.
 * A process crash (kill -9) at any point leaves at most a torn row line and side lines of the row that
 * was not committed — the side lines reach the file before the row does — which resume truncates
 * (durable-append.ts: cutToCommittedRows), exactly as before. One trade-off of syncing a
 * row's files in one step rather than one after the other: an OS crash or power loss DURING that step
 * can persist the row but not a side line of it (that seq's timing or trace line is then missing; side
 * lines are never counted as rows). Lines are serialised as canonical JSON before anything is written
 * (a throwing serialiser writes nothing) and written whole; a line is committed once its newline is on
 * disk. An I/O error breaks the writer: it refuses every later append (the file may end in a partial
 * line; resume repairs it).
 *
 * Unit state: `guard` (the full lifecycle check: reads unit.json, stats the seal) runs at the writer's
 * first append and again whenever the watched file (unit.json) changes; between, an append only stats
 * the watched file (device, inode, size, mtime and ctime in ns — every lifecycle write replaces unit.json
 * by an atomic rename, so it gets a new inode). A unit sealed, failed or moved on to another run in the
 * meantime is thus never written to. Without a watched file every append runs the guard. No exception is
 * thrown on the path of a normal append (files are opened once; the stat does not throw on absence).
 *
 * Rows must arrive in seq order (the writer knows the next seq); appends run one at a time, in call order.
 * Rows are serialised as canonical JSON, so the same row values give the same bytes whether or not the
 * run was interrupted and resumed. `close()` releases the files (a later append reopens them).
 */

export interface RowWriterFiles {
  readonly rows: string;
  readonly timings: string;
  readonly tracesDir: string;
}

const STREAM_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export type SeqLine = { readonly seq: number } & Readonly<Record<string, unknown>>;

const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}

async function syncDir(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    fd = openSync(dir, constants.O_RDONLY);
    const handle = fd;
    await new Promise<void>((resolve, reject) => fsync(handle, (e) => (e ? reject(e) : resolve())));
  } catch (e) {
    throw ioError(dir, 'fsync the directory', e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** One file open for appending. */
class AppendFile {
  /** Bytes written since the last fdatasync. */
  dirty = false;
  /** Created by this writer: its directory still needs an fsync. */
  private created: boolean;

  constructor(
    readonly path: string,
    readonly fd: number,
    created: boolean,
  ) {
    this.created = created;
  }

  static open(path: string): AppendFile {
    try {
      try {
        return new AppendFile(path, openSync(path, APPEND_FLAGS | constants.O_EXCL, 0o644), true);
      } catch (e) {
        if ((e as { code?: string }).code !== 'EEXIST') throw e;
      }
      return new AppendFile(path, openSync(path, APPEND_FLAGS, 0o644), false);
    } catch (e) {
      throw ioError(path, 'open for appending', e);
    }
  }

  /** Writes every byte now (into the file; durable at the next sync). */
  write(bytes: Uint8Array): void {
    this.dirty = true;
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off);
    } catch (e) {
      throw ioError(this.path, 'append a line', e);
    }
  }

  async sync(): Promise<void> {
    if (this.dirty) {
      try {
        await datasync(this.fd);
      } catch (e) {
        throw ioError(this.path, 'fdatasync', e);
      }
      this.dirty = false;
    }
    if (this.created) {
      await syncDir(dirname(this.path));
      this.created = false;
    }
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // closing is best effort: every committed line was synced already
    }
  }
}

function stampOf(s: BigIntStats | undefined): string | null {
  return s === undefined ? null : `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

export class RowWriter {
  private next: number;
  private readonly open = new Map<string, AppendFile>();
  /** unit.json's stamp when the guard last passed; null: run the guard at the next append. */
  private stamp: string | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private broken: ImepError | null = null;

  /**
   * @param guard the full unit-state check (throws when appending is no longer allowed)
   * @param watch a file whose change means the guard must run again (unit.json); none: guard every append
   */
  constructor(
    readonly files: RowWriterFiles,
    nextSeq: number,
    private readonly guard: () => Promise<void>,
    private readonly watch: string | null = null,
  ) {
    this.next = nextSeq;
  }

  /** The seq the next row must carry. */
  get nextSeq(): number {
    return this.next;
  }

  /** Appends a row, durably; its `seq` must equal `nextSeq`. A row's `status` says whether it ran ('ok') or not. */
  appendRow(row: SeqLine): Promise<void> {
    return this.serial(async () => {
      const parsed = DurableRowSchema.safeParse(row);
      if (!parsed.success) {
        throw new ImepError('E_INTERNAL', `row is not a durable row: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
          file: this.files.rows,
        });
      }
      if (row.seq !== this.next) {
        throw new ImepError('E_OUT_OF_ORDER', `row seq ${row.seq} arrived but the next row is seq ${this.next}`, {
          file: this.files.rows,
          hint: 'rows are appended in seq order; resume with `imep campaign resume`',
        });
      }
      const bytes = encodeJsonLine(this.files.rows, row);
      await this.ready();
      const rows = this.file(this.files.rows);
      await this.io(async () => {
        rows.write(bytes);
        await Promise.all([...this.open.values()].map((f) => f.sync()));
      });
      this.next = this.seqAfter(this.next);
    });
  }

  /** The seq the row after row `seq` must carry: consecutive here (a shard's writer follows its own seqs). */
  protected seqAfter(seq: number): number {
    return seq + 1;
  }

  /** Appends a timing line (kept apart from rows: timings are not deterministic). */
  appendTiming(timing: SeqLine): Promise<void> {
    return this.serial(() => this.appendSide(this.files.timings, timing));
  }

  /** Appends a trace line to `traces/<stream>.jsonl`; written before its row, so `seq <= nextSeq`. */
  appendTrace(stream: string, entry: SeqLine): Promise<void> {
    return this.serial(async () => {
      if (!STREAM_RE.test(stream))
        throw new ImepError('E_USAGE', `bad trace stream name '${stream}'`, { field: 'stream' });
      await this.appendSide(`${this.files.tracesDir}/${stream}.jsonl`, entry);
    });
  }

  /** Releases the open files (every committed line is durable already; a later append reopens them). */
  async close(): Promise<void> {
    await this.serial(async () => this.closeFiles());
  }

  private async appendSide(file: string, line: SeqLine): Promise<void> {
    if (!Number.isSafeInteger(line.seq) || line.seq < 0 || line.seq > this.next) {
      throw new ImepError(
        'E_OUT_OF_ORDER',
        `line seq ${String(line.seq)} is not a committed or current row (next row is seq ${this.next})`,
        { file },
      );
    }
    const bytes = encodeJsonLine(file, line);
    await this.ready();
    const f = this.file(file);
    await this.io(async () => {
      f.write(bytes);
      // a line of the row being written becomes durable with that row; one of a committed row, now
      if (line.seq < this.next) await f.sync();
    });
  }

  /** Runs appends one at a time, in call order (a failed append does not stop the next). */
  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Writes and syncs; the first error breaks the writer for good (failing to OPEN a file does not: nothing was written). */
  private async io(op: () => Promise<void>): Promise<void> {
    try {
      await op();
    } catch (e) {
      const err = isImepError(e) ? e : ioError(this.files.rows, 'append', e);
      this.broken = new ImepError(
        'E_IO',
        `an earlier append failed, so this writer appends nothing more (${err.oneLine()})`,
        {
          file: this.files.rows,
          hint: 'the rows file may end in a partial line; `imep campaign resume` repairs it and continues',
          cause: err,
        },
      );
      this.closeFiles();
      throw err;
    }
  }

  /** The unit-state check: the full guard when unit.json changed (or at the first append), else one stat. */
  private async ready(): Promise<void> {
    if (this.broken !== null) throw this.broken;
    const stamp = this.watch === null ? null : this.stampNow(this.watch);
    if (stamp !== null && stamp === this.stamp) return;
    this.stamp = null;
    try {
      await this.guard();
    } catch (e) {
      this.closeFiles();
      throw e;
    }
    this.stamp = stamp;
  }

  private stampNow(watch: string): string | null {
    try {
      return stampOf(statSync(watch, { bigint: true, throwIfNoEntry: false }));
    } catch {
      return null; // the guard reports what is wrong with the file
    }
  }

  private file(path: string): AppendFile {
    let f = this.open.get(path);
    if (f === undefined) this.open.set(path, (f = AppendFile.open(path)));
    return f;
  }

  private closeFiles(): void {
    for (const f of this.open.values()) f.close();
    this.open.clear();
  }
}
