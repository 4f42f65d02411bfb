import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendJsonLine, readRows, repairTornTail, resumePoint } from '../../src/evidence/index.js';
import { truncateFromSeq } from '../../src/evidence/io/durable-append.js';
import { expectImepError, removeTree, row, tempDir } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('imep-append-');
});
afterAll(async () => removeTree(dir));

describe('durable append', () => {
  it('appends canonical JSON lines (sorted keys) and reads them back in seq order', async () => {
    const f = join(dir, 'a.jsonl');
    await appendJsonLine(f, { seq: 0, b: 2, a: 1 });
    await appendJsonLine(f, { seq: 1, z: [1, 'x'], a: null });
    expect(await readFile(f, 'utf8')).toBe('{"a":1,"b":2,"seq":0}\n{"a":null,"seq":1,"z":[1,"x"]}\n');
    const r = await readRows(f);
    expect(r.rows.map((x) => x.seq)).toEqual([0, 1]);
    expect(r.torn).toBeNull();
    expect(await resumePoint(f)).toBe(2);
  });

  it('a missing rows file resumes at seq 0', async () => {
    expect(await resumePoint(join(dir, 'absent.jsonl'))).toBe(0);
  });

  it('reports a torn final line (crash mid-append), never counts it, and truncates only it on repair', async () => {
    const f = join(dir, 'torn.jsonl');
    for (let i = 0; i < 3; i++) await appendJsonLine(f, row(i));
    const complete = await readFile(f);
    await appendFile(f, '{"seq":3,"condition":"N","se'); // the crash
    const r = await readRows(f);
    expect(r.rows).toHaveLength(3);
    expect(r.torn).toEqual({ offset: complete.length, bytes: 28, preview: '{"seq":3,"condition":"N","se' });
    expect(await resumePoint(f)).toBe(3);
    const removed = await repairTornTail(f);
    expect(removed?.bytes).toBe(28);
    expect(await readFile(f)).toEqual(complete);
    expect(await repairTornTail(f)).toBeNull();
  });

  it('treats a complete JSON value without its newline as torn (not committed)', async () => {
    const f = join(dir, 'nonl.jsonl');
    await appendJsonLine(f, row(0));
    await appendFile(f, JSON.stringify(row(1)));
    expect(await resumePoint(f)).toBe(1);
    expect((await readRows(f)).torn).not.toBeNull();
  });

  it('refuses a corrupt complete line, naming file and line (never drops it silently)', async () => {
    const f = join(dir, 'corrupt.jsonl');
    await writeFile(f, '{"seq":0}\n{"seq":1,oops}\n{"seq":2}\n');
    const err = await expectImepError(readRows(f), 'E_UNIT_TAMPERED');
    expect(err.file).toBe(f);
    expect(err.message).toContain('line 2');
  });

  it.each([
    ['duplicate', '{"seq":0}\n{"seq":1}\n{"seq":1}\n', 'line 3 duplicates seq 1'],
    ['gap', '{"seq":0}\n{"seq":2}\n', 'line 2 skips to seq 2'],
    ['backwards', '{"seq":1}\n', 'line 1 skips to seq 1'],
    ['no seq', '{"seq":0}\n{"x":1}\n', 'line 2 has no non-negative integer "seq"'],
  ])('checks seq order: %s', async (name, text, message) => {
    const f = join(dir, `order-${name}.jsonl`);
    await writeFile(f, text);
    const err = await expectImepError(resumePoint(f), 'E_UNIT_TAMPERED');
    expect(err.message).toContain(message);
  });

  it('a throwing serialiser appends nothing', async () => {
    const f = join(dir, 'ser.jsonl');
    await appendJsonLine(f, row(0));
    const before = await readFile(f);
    const err = await expectImepError(
      appendJsonLine(f, row(1), () => {
        throw new Error('boom');
      }),
      'E_IO',
    );
    expect(err.file).toBe(f);
    expect(await readFile(f)).toEqual(before);
  });

  it('side files drop lines of uncommitted rows on resume and report them', async () => {
    const f = join(dir, 'trace.jsonl');
    for (const s of [0, 0, 1, 2, 2]) await appendJsonLine(f, { seq: s, x: 1 });
    await appendFile(f, '{"seq":2,');
    const r = await truncateFromSeq(f, 2);
    expect(r.droppedLines).toBe(2);
    expect(r.torn?.bytes).toBe(9);
    expect((await readFile(f, 'utf8')).trim().split('\n')).toHaveLength(3);
  });

  it('side lines of a seq beyond the row in flight mean committed rows are gone: refused, nothing cut', async () => {
    const f = join(dir, 'trace-lost.jsonl');
    for (const s of [0, 1, 2, 3, 4]) await appendJsonLine(f, { seq: s, x: 1 });
    const before = await readFile(f);
    // the rows file ends before seq 2 (rows 2 and 3 were committed, then lost): lines 3 and 4 cannot be in flight
    const err = await expectImepError(truncateFromSeq(f, 2), 'E_UNIT_TAMPERED');
    expect(err.file).toBe(f);
    expect(err.message).toMatch(
      /line 4 belongs to row seq 3, but the rows file ends before seq 2: committed rows are missing/,
    );
    expect(await readFile(f)).toEqual(before);
    // the row in flight itself (seq 4 next): its lines go
    expect((await truncateFromSeq(f, 4)).droppedLines).toBe(1);
  });
});
