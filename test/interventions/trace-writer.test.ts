import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import { survivalCoverage } from '../../src/interventions/coverage.js';
import type { TraceEntry } from '../../src/interventions/trace.js';
import { readTrace, readTraceHeader, TraceWriter } from '../../src/interventions/trace-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-trace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function entry(unit: number, q: number): TraceEntry {
  const hit = unit % 5 !== 0 || q < 3;
  return {
    bank: 'pcmb',
    scope: `u${unit}`,
    episode: `u${unit}/a2`,
    queryIndex: q,
    decisionStep: true,
    candidateCount: 4 + (q % 3),
    afterPoint: true,
    selected: [
      {
        slot: 0,
        timestep: 1,
        version: q > 3 ? 1 : 0,
        before: 'aaaaaaaaaaaaaaaa',
        after: 'aaaaaaaaaaaaaaaa',
        unmodifiedSubstituted: hit,
      },
      { slot: 3, timestep: q, version: 0, before: 'bbbbbbbbbbbbbbbb', after: null, unmodifiedSubstituted: false },
    ],
    returnedCount: 2,
    readBefore: 'cccccccccccccccc',
    readAfter: 'cccccccccccccccc',
  };
}

function* ladder(units: number, steps: number): Generator<TraceEntry> {
  for (let u = 0; u < units; u++) for (let q = 0; q < steps; q++) yield entry(u, q);
}

describe('trace files', () => {
  it('round-trips a 400-unit × 90-step ladder through batched frames and reads it lazily', () => {
    const path = join(dir, 'ladder.imeptrace');
    const w = TraceWriter.open(path, { condition: 'S', seed: 17 }, { batchSize: 1000 });
    let n = 0;
    for (const e of ladder(400, 90)) {
      w.append(e);
      n++;
    }
    expect(w.entriesWritten).toBe(36_000);
    w.close();
    expect(n).toBe(36_000);
    expect(readTraceHeader(path)).toEqual({ format: 'imep-trace', version: 1, meta: { condition: 'S', seed: 17 } });
    const bytesPerEntry = statSync(path).size / n;
    expect(bytesPerEntry).toBeLessThan(200); // compact: JSON of one entry is ~450 bytes

    const it = readTrace(path);
    const first = it.next();
    expect(first.value).toEqual(entry(0, 0)); // lazily: only the first frame has been read
    it.return(undefined);

    let i = 0;
    const expected = ladder(400, 90);
    for (const e of readTrace(path)) {
      if (i % 997 === 0) expect(e).toEqual(expected.next().value);
      else expected.next();
      i++;
    }
    expect(i).toBe(36_000);
    // coverage streams straight off the file: units 0, 5, 10, … lose slot 0 at q ≥ 3
    expect(survivalCoverage(readTrace(path))).toMatchObject({ units: 400, covered: 320, coverage: 0.8 });
  });

  it('flush appends a frame per call; close flushes the remainder', () => {
    const path = join(dir, 'small.imeptrace');
    const w = TraceWriter.open(path);
    w.append(entry(1, 1));
    w.flush();
    const size1 = statSync(path).size;
    w.append(entry(1, 2));
    w.append(entry(1, 3));
    w.close();
    expect(statSync(path).size).toBeGreaterThan(size1);
    expect([...readTrace(path)].map((e) => e.queryIndex)).toEqual([1, 2, 3]);
    expect(() => w.append(entry(1, 4))).toThrow(/closed/);
  });

  it('refuses to overwrite, rejects foreign files, and reports a truncated tail (or stops at it when asked)', () => {
    const path = join(dir, 'trunc.imeptrace');
    const w = TraceWriter.open(path, {}, { batchSize: 2 });
    for (let q = 0; q < 5; q++) w.append(entry(2, q));
    w.close();
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return isImepError(e) ? e.code : 'other';
      }
      return undefined;
    };
    expect(code(() => TraceWriter.open(path))).toBe('E_IO');
    TraceWriter.open(path, {}, { overwrite: true }).close();
    expect([...readTrace(path)]).toEqual([]);

    const p2 = join(dir, 'trunc2.imeptrace');
    const w2 = TraceWriter.open(p2, {}, { batchSize: 2 });
    for (let q = 0; q < 5; q++) w2.append(entry(2, q));
    w2.close();
    truncateSync(p2, statSync(p2).size - 3);
    expect(code(() => [...readTrace(p2)])).toBe('E_IO');
    expect([...readTrace(p2, { tolerateTruncatedTail: true })].map((e) => e.queryIndex)).toEqual([0, 1, 2, 3]);

    const foreign = join(dir, 'foreign.bin');
    writeFileSync(foreign, 'not a trace at all');
    expect(code(() => readTraceHeader(foreign))).toBe('E_IO');
    const bad = join(dir, 'bad.imeptrace');
    writeFileSync(bad, readFileSync(p2).subarray(0, 8));
    appendFileSync(bad, Buffer.from([1, 0, 0, 0, 0xc0]));
    expect(code(() => readTraceHeader(bad))).toBe('E_IO');
  });
});
