/**
 * `imep export UNIT` end to end: a real lite campaign (the blackout ladder at n = 4, the shipped lite checkpoint)
 * run through seal, exported, and both Parquet files read back by pyarrow (read-parquet.ts): every value of every
 * row equals rows/rows.jsonl (and, for episodes.parquet, rows/timings.jsonl; floats bit-exact), and each file's
 * key-value metadata equals the unit's manifest. Then the refusals: a tampered unit (exit 3), an unsealed unit
 * (exit 2), an --out inside the unit (exit 2); and the stages a later export names (adjudicated, closed).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { blackoutYaml, ROOT } from '../campaign/helpers.js';
import { imep, liteCheckpointSha, unitIn } from '../campaign/cli-support.js';
import { CI, SKIP_WHY, f64, readParquet, readWithDataframes } from './read-parquet.js';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const jsonLines = (file: string): Record<string, unknown>[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

interface Seal {
  unitId: string;
  protocolHash: string;
  merkle: { scheme: string; root: string };
  files: { path: string; sha256: string }[];
}

/** episodes.parquet's row for a row and its timing line, written out here independently of src/export/tables.ts. */
function episodeOf(row: Record<string, unknown>, t: Record<string, unknown> | undefined): Record<string, unknown> {
  const reads = row['reads'] as Record<string, unknown>;
  const failure = row['failure'] as { code: string; message: string } | null;
  const first = reads['firstQuery'] as { clock: number; candidates: number } | null;
  const ms = (k: string): unknown => (t === undefined ? null : f64(t[k] as number));
  const tries = t === undefined ? null : (t['failedTries'] as { code: string }[]);
  return {
    seq: row['seq'],
    wave: row['wave'],
    condition: row['condition'],
    task: row['task'],
    seed: row['seed'],
    attempt: row['attempt'],
    status: row['status'],
    failureCode: failure?.code ?? null,
    failureMessage: failure?.message ?? null,
    success: row['success'],
    decisionCorrect: row['decisionCorrect'],
    firstVisit: row['firstVisit'],
    steps: row['steps'],
    tries: row['tries'],
    readsTotal: reads['total'],
    readsEmpty: reads['empty'],
    readsWithHistory: reads['withHistory'],
    readsSubstituted: reads['substituted'],
    readsSubstitutedUnchanged: reads['substitutedUnchanged'],
    decisionQueries: reads['decisionQueries'],
    coveredDecisionQueries: reads['coveredDecisionQueries'],
    covered: reads['covered'],
    firstQueryClock: first?.clock ?? null,
    firstQueryCandidates: first?.candidates ?? null,
    simMs: ms('simMs'),
    policyMs: ms('policyMs'),
    bankMs: ms('bankMs'),
    totalMs: ms('totalMs'),
    failedTries: tries?.length ?? null,
    failedTryCodes: tries?.map((x) => x.code) ?? null,
  };
}

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe.skipIf(SKIP_WHY !== null && !CI)(`imep export${SKIP_WHY ? ` (skipped: ${SKIP_WHY})` : ''}`, () => {
  let dir = '';
  let unit = '';
  let seal: Seal;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'imep-export-'));
    writeFileSync(join(dir, 'p.yaml'), blackoutYaml({ n: 4, sha: liteCheckpointSha() }));
    const run = await imep(['campaign', 'run', 'p.yaml', '--campaigns-dir', 'c'], dir);
    expect(run.code, run.stderr).toBe(0);
    unit = unitIn(join(dir, 'c')) as string;
    seal = JSON.parse(readFileSync(join(unit, 'seal.json'), 'utf8')) as Seal;
  }, 180_000);

  /** The metadata a file of `table` must carry at `stage` with `root` as the root to cite. */
  const metadataOf = (table: string, stage: string, root: string): Record<string, string> => ({
    'imep.table': table,
    'imep.unit_id': seal.unitId,
    'imep.stage': stage,
    'imep.merkle_root': root,
    'imep.merkle_scheme': seal.merkle.scheme,
    'imep.seal_root': seal.merkle.root,
    'imep.protocol_hash': seal.protocolHash,
    'imep.rows_sha256': seal.files.find((f) => f.path === 'rows/rows.jsonl')?.sha256 ?? 'absent',
    'imep.imep_version': VERSION,
  });

  it('writes rows.parquet and episodes.parquet whose every value pyarrow reads back equal to the sealed rows', async () => {
    const r = await imep(['export', unit], dir);
    expect(r.code, r.stderr).toBe(0);
    const out = join(dir, 'c', 'exports', basename(unit));
    const rowsFile = join(out, 'rows.parquet');
    const episodesFile = join(out, 'episodes.parquet');
    expect(r.stdout.split('\n')).toEqual([
      rowsFile,
      episodesFile,
      `exported 56 rows of unit ${seal.unitId} (sealed, root ${seal.merkle.root.slice(0, 12)}…) as Parquet`,
      '',
    ]);

    const rows = jsonLines(join(unit, 'rows/rows.jsonl'));
    expect(rows).toHaveLength(7 * 4 * 2);
    const back = readParquet(rowsFile);
    expect(back.numRows).toBe(rows.length);
    expect(back.rows).toEqual(rows); // every field of every row, in order; rows v1 holds no float
    expect(back.metadata).toEqual(metadataOf('rows', 'sealed', seal.merkle.root));
    expect(seal.protocolHash).toBe(sha256(readFileSync(join(unit, 'protocol.json'))));
    const physical = Object.fromEntries(back.columns.map((c) => [c.path, c.physical]));
    expect(physical).toMatchObject({
      seq: 'INT64',
      seed: 'INT64',
      condition: 'BYTE_ARRAY',
      success: 'BOOLEAN',
      'failure.code': 'BYTE_ARRAY',
      'actionHashes.list.element': 'BYTE_ARRAY',
      'reads.emptyPositions.list.element': 'INT64',
      'reads.firstQuery.clock': 'INT64',
      'reads.covered': 'BOOLEAN',
    });
    expect(back.arrowTypes['reads']).toMatch(
      /^struct<total: int64 not null, empty: int64 not null, emptyPositions: list/,
    );

    const timings = new Map(jsonLines(join(unit, 'rows/timings.jsonl')).map((t) => [t['seq'] as number, t]));
    const episodes = readParquet(episodesFile);
    expect(episodes.rows).toEqual(rows.map((row) => episodeOf(row, timings.get(row['seq'] as number))));
    expect(episodes.arrowTypes['simMs']).toBe('double');
    expect(episodes.rows.some((e) => e['totalMs'] !== null)).toBe(true);
    expect(episodes.metadata).toEqual(metadataOf('episodes', 'sealed', seal.merkle.root));

    // the same unit exports to the same bytes
    const again = await imep(['export', unit, '--out', 'again'], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(sha256(readFileSync(join(dir, 'again', 'rows.parquet')))).toBe(sha256(readFileSync(rowsFile)));
    expect(sha256(readFileSync(join(dir, 'again', 'episodes.parquet')))).toBe(sha256(readFileSync(episodesFile)));
  }, 60_000);

  it.each([
    [
      'a row changed',
      'rows/rows.jsonl',
      (f: string) => writeFileSync(f, readFileSync(f, 'utf8').replace('"success":true', '"success":false')),
    ],
    [
      'a timing line appended',
      'rows/timings.jsonl',
      (f: string) => writeFileSync(f, readFileSync(f, 'utf8') + '{"seq":0}\n'),
    ],
  ])(
    'refuses a tampered unit (%s): exit 3, one line naming the file, nothing written',
    async (_what, path, tamper) => {
      const copy = join(mkdtempSync(join(tmpdir(), 'imep-export-tampered-')), basename(unit));
      cpSync(unit, copy, { recursive: true });
      tamper(join(copy, path));
      const r = await imep(['export', copy, '--out', join(copy, '..', 'out')], dir);
      expect(r.code).toBe(3);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(path);
      expect(existsSync(join(copy, '..', 'out'))).toBe(false);
    },
    60_000,
  );

  it('pandas, polars and DuckDB read both files to the values of the sealed rows, DuckDB the metadata too', async () => {
    const out = join(dir, 'df');
    const r = await imep(['export', unit, '--out', out], dir);
    expect(r.code, r.stderr).toBe(0);
    const rows = jsonLines(join(unit, 'rows/rows.jsonl'));
    const timings = new Map(jsonLines(join(unit, 'rows/timings.jsonl')).map((t) => [t['seq'] as number, t]));
    const episodes = rows.map((row) => episodeOf(row, timings.get(row['seq'] as number)));
    const e = readWithDataframes(join(out, 'episodes.parquet'));
    // flat columns: every value of every row, nulls as nulls, floats bit-exact, in each reader
    expect(e.pandas).toEqual(episodes);
    expect(e.polars).toEqual(episodes);
    expect(e.duckdb).toEqual(episodes);
    expect(e.duckdbMetadata).toEqual(metadataOf('episodes', 'sealed', seal.merkle.root));
    // nested columns (structs, lists, lists inside structs) in the two readers that keep them as nested values
    const n = readWithDataframes(join(out, 'rows.parquet'));
    expect(n.polars).toEqual(rows);
    expect(n.duckdb).toEqual(rows);
    expect(n.pandas.map((x) => x['seq'])).toEqual(rows.map((x) => x['seq']));
  }, 120_000);

  it('refuses an unsealed unit (exit 2, with the next step) and an --out inside the unit (exit 2)', async () => {
    const pre = await imep(['campaign', 'precommit', 'p.yaml', '--campaigns-dir', 'u'], dir);
    expect(pre.code, pre.stderr).toBe(0);
    const open = unitIn(join(dir, 'u')) as string;
    const r = await imep(['export', open], dir);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      `imep: unit ${seal.unitId} is 'precommitted'; \`imep export\` exports sealed evidence only; next: \`imep campaign run <its protocol file>\`, which seals it`,
    );
    const inside = await imep(['export', unit, '--out', join(unit, 'exports')], dir);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toMatch(/--out .* is inside the unit; a file there would fail its verification/);
    expect(existsSync(join(unit, 'exports'))).toBe(false);
  }, 60_000);

  it('names the stage and the root to cite after adjudication and closeout', async () => {
    const adj = await imep(['campaign', 'adjudicate', unit, '--allow-same-operator', 'export test'], dir);
    expect(adj.code, adj.stderr).toBe(0);
    const a = await imep(['export', unit, '--out', 'adjudicated'], dir);
    expect(a.code, a.stderr).toBe(0);
    expect(readParquet(join(dir, 'adjudicated', 'rows.parquet')).metadata).toEqual(
      metadataOf('rows', 'adjudicated', seal.merkle.root),
    );
    for (const step of ['cross-check', 'closeout']) {
      const s = await imep(['campaign', step, unit], dir);
      expect(s.code, `${step}: ${s.stderr}`).toBe(0);
    }
    const closeout = JSON.parse(readFileSync(join(unit, 'closeout.json'), 'utf8')) as { merkle: { root: string } };
    const c = await imep(['export', unit, '--out', 'closed'], dir);
    expect(c.code, c.stderr).toBe(0);
    const back = readParquet(join(dir, 'closed', 'episodes.parquet'));
    expect(back.metadata).toEqual(metadataOf('episodes', 'closed', closeout.merkle.root));
    expect(back.numRows).toBe(56);
  }, 120_000);
});

it.runIf(CI && SKIP_WHY !== null)('CI: pyarrow in .venvs/formats (scripts/formats/setup.sh) is available', () => {
  expect(SKIP_WHY).toBeNull();
});
