import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readUnitHeader, startRun, unitPaths } from '../../src/evidence/index.js';
import { writeUnitHeader } from '../../src/evidence/records/unit-header.js';
import { requireAction } from '../../src/evidence/unit-state.js';
import { RowWriter } from '../../src/evidence/io/row-writer.js';
import { buildUnit, expectImepError, removeTree, row, RUNNER, tempDir } from './helpers.js';

/** Every open / write / fdatasync / close on node:fs while `on`, by file name; `failWrite` injects an EIO. */
const io = vi.hoisted(() => ({
  on: false,
  log: [] as string[],
  names: new Map<number, string>(),
  failWrite: null as string | null,
}));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const name = (fd: number): string => io.names.get(fd) ?? `fd${fd}`;
  return {
    ...fs,
    openSync: (...a: Parameters<typeof fs.openSync>) => {
      const fd = fs.openSync(...a);
      io.names.set(fd, String(a[0]).split('/').slice(-2).join('/'));
      if (io.on) io.log.push(`open ${name(fd)}`);
      return fd;
    },
    writeSync: ((fd: number, ...rest: unknown[]) => {
      if (io.on) io.log.push(`write ${name(fd)}`);
      if (io.failWrite !== null && name(fd).endsWith(io.failWrite)) {
        io.failWrite = null;
        throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
      }
      return (fs.writeSync as (...x: unknown[]) => number)(fd, ...rest);
    }) as typeof fs.writeSync,
    fdatasync: ((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
      if (io.on) io.log.push(`sync ${name(fd)}`);
      fs.fdatasync(fd, cb);
    }) as typeof fs.fdatasync,
    closeSync: (fd: number) => {
      if (io.on) io.log.push(`close ${name(fd)}`);
      fs.closeSync(fd);
    },
  };
});

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-row-writer-');
});
afterAll(async () => removeTree(root));

function record<T>(fn: () => Promise<T>): Promise<{ value: T; log: string[] }> {
  io.log = [];
  io.on = true;
  return fn().then(
    (value) => {
      io.on = false;
      return { value, log: io.log.filter((l) => !l.endsWith('/rows') && !l.endsWith('/traces')) };
    },
    (e: unknown) => {
      io.on = false;
      throw e;
    },
  );
}

describe('RowWriter', () => {
  it('opens each file once per run; writes a row’s side lines before it, then fdatasyncs the row and its side lines before the next row', async () => {
    const dir = join(root, 'open-once');
    await buildUnit(dir, 'precommitted');
    const run = await startRun(dir, { runId: 'formal-1', operator: RUNNER });
    const { log } = await record(async () => {
      for (let i = 0; i < 4; i++) {
        await run.appendTrace('reads', { seq: i, n: i });
        await run.appendTiming({ seq: i, wallMs: i });
        await run.appendRow(row(i));
      }
      await run.close();
    });
    expect(log.filter((l) => l.startsWith('open'))).toEqual([
      'open traces/reads.jsonl',
      'open rows/timings.jsonl',
      'open rows/rows.jsonl',
    ]);
    const rowsLog = log.filter((l) => !l.startsWith('open') && !l.startsWith('close'));
    const perRow = ['write traces/reads.jsonl', 'write rows/timings.jsonl', 'write rows/rows.jsonl'];
    for (let i = 0; i < 4; i++) {
      const chunk = rowsLog.slice(i * 6, i * 6 + 6);
      expect(chunk.slice(0, 3)).toEqual(perRow);
      expect([...chunk.slice(3)].sort()).toEqual([
        'sync rows/rows.jsonl',
        'sync rows/timings.jsonl',
        'sync traces/reads.jsonl',
      ]);
    }
    expect(rowsLog).toHaveLength(24);
    expect(log.filter((l) => l.startsWith('close')).sort()).toEqual([
      'close rows/rows.jsonl',
      'close rows/timings.jsonl',
      'close traces/reads.jsonl',
    ]);
    const text = await readFile(unitPaths(dir).rows, 'utf8');
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { seq: number }).seq),
    ).toEqual([0, 1, 2, 3]);
  });

  it('runs the full unit-state check at the first append and again only when unit.json changes', async () => {
    const dir = join(root, 'guard');
    await buildUnit(dir, 'precommitted');
    await startRun(dir, { runId: 'formal-1', operator: RUNNER });
    const p = unitPaths(dir);
    let checks = 0;
    const guard = async (): Promise<void> => {
      checks += 1;
      await requireAction(dir, 'append');
    };
    const w = new RowWriter({ rows: p.rows, timings: p.timings, tracesDir: p.tracesDir }, 0, guard, p.header);
    for (let i = 0; i < 3; i++) {
      await w.appendTiming({ seq: i, wallMs: i });
      await w.appendRow(row(i));
    }
    expect(checks).toBe(1);
    await writeUnitHeader(dir, await readUnitHeader(dir)); // same content, rewritten: a new inode
    await w.appendRow(row(3));
    expect(checks).toBe(2);
    await writeUnitHeader(dir, { ...(await readUnitHeader(dir)), status: 'run-complete' });
    await expectImepError(w.appendTiming({ seq: 4 }), 'E_OUT_OF_ORDER');
    expect(checks).toBe(3);
    await w.close();
  });

  it('an I/O error breaks the writer: that append fails with E_IO and so does every later one', async () => {
    const dir = join(root, 'broken');
    await buildUnit(dir, 'precommitted');
    const run = await startRun(dir, { runId: 'formal-1', operator: RUNNER });
    await run.appendRow(row(0));
    io.failWrite = 'rows/rows.jsonl';
    const first = await expectImepError(run.appendRow(row(1)), 'E_IO');
    expect(first.message).toContain('EIO');
    const later = await expectImepError(run.appendRow(row(1)), 'E_IO');
    expect(later.message).toContain('an earlier append failed');
    expect(run.nextSeq).toBe(1);
  });
});
