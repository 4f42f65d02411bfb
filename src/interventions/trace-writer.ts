/**
 * Trace files: the one I/O edge of this folder. Entries stream to disk in batches so a 400-unit × 90-step
 * ladder never holds every entry in memory.
 *
 * Format (version 1): the 8-byte magic "IMEPTRC1", then frames of [uint32 LE byte length][msgpack bytes].
 * Frame 0 is the header { format, version, meta }; every later frame is one msgpackr-packed array of
 * TraceEntry (records/structures are defined inside each frame, so every frame decodes on its own).
 * Each flush appends one frame and fsyncs. The reader iterates entries lazily, frame by frame, and
 * validates every entry's shape.
 */
import { closeSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { Packr, Unpackr } from 'msgpackr';
import { ImepError } from '../core/index.js';
import type { SelectedRecordTrace, TraceEntry } from './trace.js';

export const TRACE_MAGIC = 'IMEPTRC1';
export const TRACE_FORMAT_VERSION = 1;

export type TraceMeta = Readonly<Record<string, string | number | boolean>>;

export interface TraceHeader {
  readonly format: 'imep-trace';
  readonly version: typeof TRACE_FORMAT_VERSION;
  readonly meta: TraceMeta;
}

export interface TraceWriterOptions {
  /** Entries per frame (and per fsync); default 1024. */
  readonly batchSize?: number;
  /** Replace an existing file; default false (refuse). */
  readonly overwrite?: boolean;
}

function ioError(path: string, message: string, cause?: unknown): ImepError {
  return new ImepError('E_IO', message, { file: path, cause });
}

export class TraceWriter {
  readonly path: string;
  private fd: number | null;
  private readonly packr = new Packr({ useRecords: true });
  private readonly batchSize: number;
  private batch: TraceEntry[] = [];
  private written = 0;

  private constructor(path: string, fd: number, batchSize: number) {
    this.path = path;
    this.fd = fd;
    this.batchSize = batchSize;
  }

  static open(path: string, meta: TraceMeta = {}, options: TraceWriterOptions = {}): TraceWriter {
    let fd: number;
    try {
      fd = openSync(path, options.overwrite ? 'w' : 'wx');
    } catch (e) {
      throw ioError(path, `cannot create trace file (${(e as Error).message})`, e);
    }
    const w = new TraceWriter(path, fd, Math.max(1, options.batchSize ?? 1024));
    w.writeRaw(Buffer.from(TRACE_MAGIC, 'latin1'));
    const header: TraceHeader = { format: 'imep-trace', version: TRACE_FORMAT_VERSION, meta };
    w.writeFrame(w.packr.pack(header));
    fsyncSync(fd);
    return w;
  }

  /** A sink for TraceRecorder. */
  readonly sink = (entry: TraceEntry): void => this.append(entry);

  append(entry: TraceEntry): void {
    if (this.fd === null) throw ioError(this.path, 'trace writer is closed');
    this.batch.push(entry);
    if (this.batch.length >= this.batchSize) this.flush();
  }

  /** Appends the buffered entries as one frame and fsyncs. */
  flush(): void {
    if (this.fd === null || this.batch.length === 0) return;
    this.writeFrame(this.packr.pack(this.batch));
    fsyncSync(this.fd);
    this.written += this.batch.length;
    this.batch = [];
  }

  close(): void {
    if (this.fd === null) return;
    this.flush();
    closeSync(this.fd);
    this.fd = null;
  }

  /** Entries written to disk so far (excludes the unflushed batch). */
  get entriesWritten(): number {
    return this.written;
  }

  private writeFrame(bytes: Uint8Array): void {
    const frame = Buffer.allocUnsafe(4 + bytes.length);
    frame.writeUInt32LE(bytes.length, 0);
    frame.set(bytes, 4);
    this.writeRaw(frame);
  }

  private writeRaw(buf: Uint8Array): void {
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd as number, buf, off, buf.length - off);
  }
}

// ------------------------------------------------------------------ reading

function isStr(x: unknown): x is string {
  return typeof x === 'string';
}
function isInt(x: unknown): x is number {
  return typeof x === 'number' && Number.isInteger(x);
}

function isSelected(x: unknown): x is SelectedRecordTrace {
  if (typeof x !== 'object' || x === null) return false;
  const s = x as Record<string, unknown>;
  return (
    isInt(s.slot) &&
    isInt(s.timestep) &&
    isInt(s.version) &&
    isStr(s.before) &&
    (s.after === null || isStr(s.after)) &&
    typeof s.unmodifiedSubstituted === 'boolean'
  );
}

export function isTraceEntry(x: unknown): x is TraceEntry {
  if (typeof x !== 'object' || x === null) return false;
  const e = x as Record<string, unknown>;
  return (
    isStr(e.bank) &&
    isStr(e.scope) &&
    isStr(e.episode) &&
    isInt(e.queryIndex) &&
    typeof e.decisionStep === 'boolean' &&
    isInt(e.candidateCount) &&
    typeof e.afterPoint === 'boolean' &&
    Array.isArray(e.selected) &&
    e.selected.every(isSelected) &&
    isInt(e.returnedCount) &&
    isStr(e.readBefore) &&
    isStr(e.readAfter)
  );
}

function isHeader(x: unknown): x is TraceHeader {
  if (typeof x !== 'object' || x === null) return false;
  const h = x as Record<string, unknown>;
  return (
    h.format === 'imep-trace' && h.version === TRACE_FORMAT_VERSION && typeof h.meta === 'object' && h.meta !== null
  );
}

class FrameReader {
  private pos = 0;
  constructor(
    private readonly fd: number,
    private readonly path: string,
  ) {}

  readExactly(n: number, what: string): Buffer | null {
    const buf = Buffer.allocUnsafe(n);
    let got = 0;
    while (got < n) {
      const k = readSync(this.fd, buf, got, n - got, this.pos + got);
      if (k === 0) break;
      got += k;
    }
    if (got === 0) return null;
    if (got < n) throw ioError(this.path, `trace file is truncated inside ${what} at byte ${this.pos}`);
    this.pos += n;
    return buf;
  }

  /** The next frame's bytes, or null at a clean end of file. */
  next(): Buffer | null {
    const len = this.readExactly(4, 'a frame length');
    if (len === null) return null;
    const bytes = this.readExactly(len.readUInt32LE(0), 'a frame');
    if (bytes === null) throw ioError(this.path, `trace file ends after a frame length at byte ${this.pos}`);
    return bytes;
  }
}

export interface TraceReadOptions {
  /** Stop quietly at a partly written last frame (a crash mid-flush) instead of throwing E_IO. */
  readonly tolerateTruncatedTail?: boolean;
}

function openChecked(path: string): { fd: number; frames: FrameReader; header: TraceHeader } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw ioError(path, `cannot open trace file (${(e as Error).message})`, e);
  }
  try {
    const frames = new FrameReader(fd, path);
    const magic = frames.readExactly(TRACE_MAGIC.length, 'the magic');
    if (magic === null || magic.toString('latin1') !== TRACE_MAGIC)
      throw ioError(path, 'not an IMEP trace file (bad magic)');
    const first = frames.next();
    const header: unknown = first === null ? null : new Unpackr({ useRecords: true }).unpack(first);
    if (!isHeader(header))
      throw ioError(path, `unsupported trace header (want format imep-trace version ${TRACE_FORMAT_VERSION})`);
    return { fd, frames, header };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

export function readTraceHeader(path: string): TraceHeader {
  const { fd, header } = openChecked(path);
  closeSync(fd);
  return header;
}

/** Iterates a trace file's entries lazily (one frame in memory at a time). */
export function* readTrace(path: string, options: TraceReadOptions = {}): Generator<TraceEntry, void, undefined> {
  const { fd, frames } = openChecked(path);
  const unpackr = new Unpackr({ useRecords: true });
  try {
    for (;;) {
      let bytes: Buffer | null;
      try {
        bytes = frames.next();
      } catch (e) {
        if (options.tolerateTruncatedTail && e instanceof ImepError && e.code === 'E_IO') return;
        throw e;
      }
      if (bytes === null) return;
      const batch: unknown = unpackr.unpack(bytes);
      if (!Array.isArray(batch)) throw ioError(path, 'trace frame is not a batch of entries');
      for (const entry of batch as unknown[]) {
        if (!isTraceEntry(entry)) throw ioError(path, 'trace entry does not match the TraceEntry shape');
        yield entry;
      }
    }
  } finally {
    closeSync(fd);
  }
}
