import { open, readFile, truncate } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ImepError, canonicalJson, type JsonValue } from '../../core/index.js';
import { fsyncDir, ioError, writeAll } from './atomic-write.js';

/**
 * Durable JSON-lines files (rows, timings, traces, amendments).
 *
 * Append: the line is serialised first (a throwing serialiser writes nothing), then written with
 * one `O_APPEND` write loop and fsync'd; when the append creates the file its directory is fsync'd
 * too. A line is committed once its trailing newline is on disk.
 *
 * Read: complete lines (ending in `\n`) must each be valid JSON — otherwise E_UNIT_TAMPERED naming
 * the file and line. Bytes after the last newline are a TORN tail left by a crash mid-append: the
 * reader reports it (never hides it) and never counts it as a row; `repairTornTail` truncates it
 * on resume. Complete rows are never dropped by the reader.
 */

export interface TornTail {
  /** Byte offset where the torn line starts (= the size the file is truncated to). */
  readonly offset: number;
  readonly bytes: number;
  /** The first characters of the torn bytes, for the report. */
  readonly preview: string;
}

export interface JsonLinesRead {
  readonly lines: JsonValue[];
  /** Byte offset of the start of each complete line. */
  readonly offsets: number[];
  /** Size in bytes of the complete-lines prefix. */
  readonly completeBytes: number;
  readonly torn: TornTail | null;
}

function tampered(file: string, message: string): ImepError {
  return new ImepError('E_UNIT_TAMPERED', message, {
    file,
    hint: 'lines are only ever appended by imep; restore the file from the sealed copy, or run `imep campaign verify`',
  });
}

/**
 * Serialises one JSON value as a line (with its trailing newline). A throwing serialiser, or a line
 * that would contain a newline, throws here, before anything touches the file.
 */
export function encodeJsonLine(
  file: string,
  value: unknown,
  serialize: (v: unknown) => string = canonicalJson,
): Uint8Array {
  let line: string;
  try {
    line = serialize(value);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new ImepError('E_IO', `could not serialise the line; nothing was appended: ${why}`, { file, cause: e });
  }
  if (line.includes('\n')) throw new ImepError('E_INTERNAL', 'a JSON line may not contain a newline', { file });
  return Buffer.from(`${line}\n`, 'utf8');
}

/**
 * Appends one JSON value as a line, durably (open, write, fsync, close: for occasional appends such as
 * amendments and shard lines; a run's rows go through the RowWriter, which keeps its files open). An
 * empty file before the write is treated as just created, and its directory is fsync'd too (no
 * exception on the common path: the file is opened with 'a' and its size read, not probed with 'ax').
 */
export async function appendJsonLine(
  file: string,
  value: unknown,
  serialize: (v: unknown) => string = canonicalJson,
): Promise<void> {
  const bytes = encodeJsonLine(file, value, serialize);
  let fh: FileHandle | undefined;
  let created = false;
  try {
    fh = await open(file, 'a', 0o644);
    created = (await fh.stat()).size === 0;
    await writeAll(fh, bytes);
    await fh.sync();
  } catch (e) {
    throw ioError(file, 'append a line', e);
  } finally {
    await fh?.close().catch(() => undefined);
  }
  if (created) await fsyncDir(dirname(file));
}

/** Reads a JSON-lines file; a missing file reads as empty. */
export async function readJsonLines(file: string): Promise<JsonLinesRead> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return { lines: [], offsets: [], completeBytes: 0, torn: null };
    throw ioError(file, 'read', e);
  }
  return parseJsonLines(buf, file);
}

/**
 * Parses JSON-lines bytes already in memory (`file` names them in errors): the complete lines, their offsets,
 * and a torn final line (no newline) reported apart — also used on a buffer read once and checked against a
 * verified hash (verified-read.ts), so the bytes parsed are the bytes hashed.
 */
export function parseJsonLines(buf: Buffer, file: string): JsonLinesRead {
  const lines: JsonValue[] = [];
  const offsets: number[] = [];
  let start = 0;
  let lineNo = 0;
  for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
    lineNo += 1;
    const text = buf.subarray(start, nl).toString('utf8');
    try {
      lines.push(JSON.parse(text) as JsonValue);
    } catch {
      throw tampered(file, `line ${lineNo} is not valid JSON (a complete line, so not a crash artefact)`);
    }
    offsets.push(start);
    start = nl + 1;
  }
  const torn =
    start < buf.length
      ? {
          offset: start,
          bytes: buf.length - start,
          preview: buf.subarray(start, Math.min(buf.length, start + 60)).toString('utf8'),
        }
      : null;
  return { lines, offsets, completeBytes: start, torn };
}

export interface SeqRow {
  readonly seq: number;
  readonly [key: string]: JsonValue;
}

function seqOf(line: JsonValue): number | undefined {
  if (typeof line !== 'object' || line === null || Array.isArray(line)) return undefined;
  const seq = line['seq'];
  return typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
}

/**
 * Checks that line i carries `seq === firstSeq + i`: names the first line that is missing a seq,
 * duplicates one, skips one (gap) or goes backwards.
 */
export function checkSeqOrder(lines: readonly JsonValue[], file: string, firstSeq = 0): SeqRow[] {
  return lines.map((line, i) => {
    const seq = seqOf(line);
    const expected = firstSeq + i;
    if (seq === undefined) throw tampered(file, `line ${i + 1} has no non-negative integer "seq"`);
    if (seq !== expected) {
      const kind =
        seq < expected ? (lines.slice(0, i).some((l) => seqOf(l) === seq) ? 'duplicates' : 'goes back to') : 'skips to';
      throw tampered(file, `line ${i + 1} ${kind} seq ${seq}; expected seq ${expected}`);
    }
    return line as SeqRow;
  });
}

export interface RowsRead {
  readonly rows: SeqRow[];
  readonly torn: TornTail | null;
  /** The next seq to run. */
  readonly nextSeq: number;
}

/** Reads a seq-ordered rows file (torn tail reported, not counted). */
export async function readRows(file: string, firstSeq = 0): Promise<RowsRead> {
  const read = await readJsonLines(file);
  const rows = checkSeqOrder(read.lines, file, firstSeq);
  return { rows, torn: read.torn, nextSeq: firstSeq + rows.length };
}

/** The next seq to run for a rows file: the count of complete, in-order rows (a torn tail is not a row). */
export async function resumePoint(rowsFile: string, firstSeq = 0): Promise<number> {
  return (await readRows(rowsFile, firstSeq)).nextSeq;
}

/** Truncates a torn final line, if any; returns what was removed. Complete lines are kept. */
export async function repairTornTail(file: string): Promise<TornTail | null> {
  const { torn } = await readJsonLines(file);
  if (torn === null) return null;
  try {
    await truncate(file, torn.offset);
  } catch (e) {
    throw ioError(file, 'truncate the torn final line', e);
  }
  return torn;
}

export interface SeqTruncation {
  readonly torn: TornTail | null;
  /** Complete lines removed because their seq had no committed row. */
  readonly droppedLines: number;
}

/** What cutting a side file back to `nextSeq` removes (planSeqCut), before anything is cut. */
interface SeqCut extends SeqTruncation {
  readonly file: string;
  readonly keepBytes: number;
  readonly fileBytes: number;
}

/**
 * For a side file keyed by row seq (timings, traces): what must go — the torn tail and every line whose
 * `seq >= nextSeq`, which belong to a row that was never committed and will be re-run. Those lines must form
 * a suffix (the side files are written in seq order) and must all be of seq `nextSeq` itself: a row's side
 * lines are written just before it and each row is durable before the next row's side lines, so a crash
 * leaves side lines of at most the one row in flight. A side line of a later seq means committed rows are
 * missing from the rows file (lost or cut), not an interrupted write: E_UNIT_TAMPERED. Reads only.
 */
async function planSeqCut(file: string, nextSeq: number): Promise<SeqCut> {
  const read = await readJsonLines(file);
  const cut = read.lines.findIndex((l) => (seqOf(l) ?? -1) >= nextSeq);
  const bad = read.lines.findIndex((l) => seqOf(l) === undefined);
  if (bad !== -1) throw tampered(file, `line ${bad + 1} has no non-negative integer "seq"`);
  if (cut !== -1) {
    const late = read.lines.slice(cut).findIndex((l) => (seqOf(l) ?? 0) < nextSeq);
    if (late !== -1)
      throw tampered(file, `line ${cut + late + 1} (seq ${seqOf(read.lines[cut + late]!)}) follows a later seq`);
    const ahead = read.lines.slice(cut).findIndex((l) => (seqOf(l) ?? 0) > nextSeq);
    if (ahead !== -1) {
      throw tampered(
        file,
        `line ${cut + ahead + 1} belongs to row seq ${seqOf(read.lines[cut + ahead]!)}, but the rows file ends before seq ${nextSeq}: committed rows are missing from it (a crash leaves side lines of the one row in flight only)`,
      );
    }
  }
  return {
    file,
    torn: read.torn,
    droppedLines: cut === -1 ? 0 : read.lines.length - cut,
    keepBytes: cut === -1 ? read.completeBytes : read.offsets[cut]!,
    fileBytes: read.completeBytes + (read.torn?.bytes ?? 0),
  };
}

async function applySeqCut(c: SeqCut): Promise<void> {
  if (c.keepBytes >= c.fileBytes) return;
  try {
    await truncate(c.file, c.keepBytes);
  } catch (e) {
    throw ioError(c.file, 'truncate lines of uncommitted rows', e);
  }
}

/** Cuts one side file back to `nextSeq` (planSeqCut: refused, nothing cut, when committed rows are missing). */
export async function truncateFromSeq(file: string, nextSeq: number): Promise<SeqTruncation> {
  const c = await planSeqCut(file, nextSeq);
  await applySeqCut(c);
  return { torn: c.torn, droppedLines: c.droppedLines };
}

/**
 * Cuts a rows file and its side files back to the committed rows, the next of which is `nextSeq`: every side
 * file is checked first (planSeqCut), so a refusal leaves all of them and the rows file as they were; then the
 * rows file's torn tail and the side lines of the row in flight go. Used by resume (formal run, shard).
 */
export async function cutToCommittedRows(
  rowsFile: string,
  sideFiles: readonly string[],
  nextSeq: number,
): Promise<{ readonly tornRow: TornTail | null; readonly droppedSideLines: number }> {
  const cuts: SeqCut[] = [];
  for (const file of sideFiles) cuts.push(await planSeqCut(file, nextSeq));
  const tornRow = await repairTornTail(rowsFile);
  for (const c of cuts) await applySeqCut(c);
  return { tornRow, droppedSideLines: cuts.reduce((n, c) => n + c.droppedLines, 0) };
}
