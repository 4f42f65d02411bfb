/**
 * Bounded refusals (issue 24): a protocol built to be expensive to refuse — thousands of overlapping seed bands,
 * tens of thousands of unknown keys, duplicated waves — is refused with a bounded number of problems kept (all
 * counted), one leading line and exit 2. Before the fix 4,000 copies of one band kept 8 M overlap problems (out of
 * memory), 50,000 unknown keys took 26–40 s (each key located by a scan of the whole mapping) and 20,000 duplicated
 * waves 8–45 s. Times are measured in bench/protocol-refusals.ts, never asserted here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_ISSUES, MAX_PROTOCOL_BYTES } from '../../src/protocol/issue-cap.js';
import { ProtocolError, parseProtocol } from '../../src/protocol/index.js';
import { protocolText } from '../../src/protocol/load.js';
import { overlappingBands } from '../../src/protocol/seeds.js';
import { duplicatedWaves, repeatedBands, unknownKeys } from '../support/hostile-protocols.js';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refusal(text: string): ProtocolError {
  try {
    parseProtocol(text, 'hostile.yaml');
  } catch (e) {
    if (e instanceof ProtocolError) return e;
    throw e;
  }
  throw new Error('the hostile protocol was accepted');
}

describe('bounded refusals in the loader', () => {
  it('4,000 copies of one seed band: 3,999 overlaps counted, at most MAX_ISSUES kept', () => {
    const text = repeatedBands(4000);
    const e = refusal(text);
    // the second band's line in the built file (the first line after `bands:` is band 0)
    const line = text.split('\n').findIndex((l) => /^\s*bands:/.test(l)) + 3;
    expect(e.code).toBe('E_SEED_OVERLAP');
    expect(e.total).toBe(3999);
    expect(e.issues.length).toBe(MAX_ISSUES);
    expect(e.oneLine()).toBe(
      `hostile.yaml:${line}:7: seeds.bands[1]: band 610000–610399 overlaps band 610000–610399 (seeds.bands[0]) — make the bands disjoint (and 3998 more problems)`,
    );
  });

  it('20,000 unknown keys: all counted, MAX_ISSUES kept, the first in file order first', () => {
    const e = refusal(unknownKeys(20_000));
    expect(e.total).toBe(20_000);
    expect(e.issues.length).toBe(MAX_ISSUES);
    expect(e.issues.map((i) => i.path[0])).toEqual(Array.from({ length: MAX_ISSUES }, (_, i) => `x${i}`));
    expect(e.oneLine()).toMatch(
      /^hostile\.yaml:\d+:1: x0: unknown field "x0" — allowed here: version, .* \(and 19999 more problems\)$/,
    );
  });

  it('200 duplicated waves: 199 duplicate ids counted, MAX_ISSUES kept', () => {
    const e = refusal(duplicatedWaves(200));
    expect(e.total).toBe(199);
    expect(e.issues.length).toBe(MAX_ISSUES);
    expect(e.oneLine()).toContain('waves[2].id: duplicate wave id "2" (also waves[1])');
  });

  it('4,000 duplicated waves: refused by the list limit before any pairwise check', () => {
    const e = refusal(duplicatedWaves(4000));
    expect(e.issues[0]?.path).toEqual(['waves']);
    expect(e.oneLine()).toMatch(/^hostile\.yaml:\d+:\d+: waves: has more than 256 items/);
  });

  it('a file over the size limit (20,000 waves, 50,000 keys: ~1 MB / 495 KB) is refused unparsed, naming the limit', () => {
    for (const text of [duplicatedWaves(20_000), unknownKeys(50_000)]) {
      const bytes = Buffer.from(text);
      expect(bytes.length).toBeGreaterThan(MAX_PROTOCOL_BYTES);
      expect(() => protocolText(bytes, 'big.yaml')).toThrow(
        `the protocol file is ${bytes.length} bytes, over the ${MAX_PROTOCOL_BYTES}-byte limit for protocols`,
      );
      expect(() => parseProtocol(text, 'big.yaml')).toThrow(/over the 262144-byte limit/);
    }
  });
});

describe('overlappingBands: sort and sweep', () => {
  it('n copies of one band: n − 1 pairs, each at the later band', () => {
    const bands = Array.from({ length: 5 }, () => ({ start: 1, end: 9 }));
    expect(overlappingBands(bands)).toEqual([1, 2, 3, 4].map((at) => ({ at, other: 0 })));
  });

  it('disjoint bands in any order: none; nested and chained overlaps: one pair per overlapping band', () => {
    expect(
      overlappingBands([
        { start: 20, end: 29 },
        { start: 0, end: 9 },
        { start: 10, end: 19 },
      ]),
    ).toEqual([]);
    // [0,100] holds [10,20] and [50,60]; [95,120] overlaps [0,100]; [200,210] overlaps nothing
    const bands = [
      { start: 50, end: 60 },
      { start: 0, end: 100 },
      { start: 200, end: 210 },
      { start: 10, end: 20 },
      { start: 95, end: 120 },
    ];
    expect(overlappingBands(bands)).toEqual([
      { at: 1, other: 0 },
      { at: 3, other: 1 },
      { at: 4, other: 1 },
    ]);
    // an inverted band is skipped here (reported as inverted by the cross-check)
    expect(
      overlappingBands([
        { start: 5, end: 1 },
        { start: 0, end: 9 },
      ]),
    ).toEqual([]);
  });
});

describe('the CLI refuses with one leading line and exit 2', () => {
  it('imep protocol check: MAX_ISSUES lines on stdout, one summary line on stderr', () => {
    const file = join(dir, 'bands.yaml');
    writeFileSync(file, repeatedBands(4000));
    const r = runCli(['protocol', 'check', file]);
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split('\n')).toHaveLength(MAX_ISSUES);
    const err = r.stderr.trim().split('\n');
    expect(err).toHaveLength(1);
    expect(err[0]).toContain('3999 problems (the first 100 listed on stdout, 3899 more not shown)');
  });

  it('imep campaign run on a 1 MB protocol and on 20,000 unknown keys: exit 2, one line naming the file', () => {
    for (const [name, text, expected] of [
      ['waves.yaml', duplicatedWaves(20_000), 'over the 262144-byte limit for protocols'],
      ['keys.yaml', unknownKeys(20_000), 'x0: unknown field "x0"'],
    ] as const) {
      const file = join(dir, name);
      writeFileSync(file, text);
      const r = runCli(['campaign', 'run', file, '--campaigns-dir', join(dir, 'campaigns')]);
      expect(r.code, r.stderr).toBe(2);
      const err = r.stderr.trim().split('\n');
      expect(err).toHaveLength(1);
      expect(err[0]).toContain(name);
      expect(err[0]).toContain(expected);
    }
  });
});
