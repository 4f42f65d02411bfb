/**
 * src/export's Parquet writer on its own: every leaf type, nulls at every level, empty lists, lists of structs of
 * lists (repetition level 2), booleans across byte boundaries, extreme integers and floats, read back by pyarrow
 * value for value (floats bit-exact); and what the writer refuses instead of dropping or bending a value.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leaf, listOf, parquetBytes, shred, structOf, type SchemaNode } from '../../src/export/index.js';
import { CI, SKIP_WHY, f64, readParquet } from './read-parquet.js';

const FIELDS: readonly SchemaNode[] = [
  leaf('id', 'int64'),
  leaf('flag', 'boolean'),
  leaf('maybeFlag', 'boolean', true),
  leaf('x', 'double'),
  leaf('maybeX', 'double', true),
  leaf('name', 'string'),
  leaf('maybeName', 'string', true),
  listOf('ints', leaf('element', 'int64')),
  listOf('maybeInts', leaf('element', 'int64', true), true),
  structOf(
    'inner',
    [
      leaf('n', 'int64'),
      structOf('deep', [leaf('s', 'string', true)], true),
      listOf('tags', leaf('element', 'string')),
    ],
    true,
  ),
  listOf('tries', structOf('element', [leaf('code', 'string'), listOf('notes', leaf('element', 'string'))])),
];

const DOUBLES = [0.1, -0, 5e-324, 1.7976931348623157e308, 1 / 3, -2.5e-7, 123456.789, 0];
const ROWS: Record<string, unknown>[] = Array.from({ length: 19 }, (_, i) => ({
  id: [0, -5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER][i % 4] as number,
  flag: i % 3 === 0,
  maybeFlag: i % 5 === 0 ? null : i % 2 === 0,
  x: DOUBLES[i % DOUBLES.length] as number,
  maybeX: i % 4 === 1 ? null : (DOUBLES[(i + 3) % DOUBLES.length] as number) / (i + 1),
  name: ['', 'ünïcode ✓ 🦾', 'a'.repeat(300), 'tab\tand\nnewline'][i % 4] as string,
  maybeName: i % 2 === 0 ? null : `n${i}`,
  ints: Array.from({ length: i % 4 }, (_, k) => k * 1000 - i),
  maybeInts: i % 3 === 0 ? null : i % 3 === 1 ? [] : [i, null, -i],
  inner:
    i % 6 === 0
      ? null
      : {
          n: i,
          deep: i % 2 === 0 ? null : { s: i % 3 === 0 ? null : `d${i}` },
          tags: i % 4 === 0 ? [] : ['t', `u${i}`],
        },
  tries:
    i % 5 === 0
      ? []
      : Array.from({ length: (i % 3) + 1 }, (_, k) => ({
          code: `E${k}`,
          notes: Array.from({ length: (i + k) % 3 }, (_, m) => `${i}.${k}.${m}`),
        })),
}));

/** What pyarrow gives back for a row: the same values, with every double in its bit-exact form. */
function expected(row: Record<string, unknown>): Record<string, unknown> {
  return {
    ...row,
    x: f64(row['x'] as number),
    maybeX: row['maybeX'] === null ? null : f64(row['maybeX'] as number),
  };
}

function write(rows: readonly Record<string, unknown>[], name: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'imep-parquet-')), name);
  writeFileSync(
    file,
    parquetBytes({
      fields: FIELDS,
      rows,
      metadata: [
        ['k', 'v'],
        ['ünï', '✓'],
      ],
      createdBy: 'imep version test',
    }),
  );
  return file;
}

describe.skipIf(SKIP_WHY !== null && !CI)(
  `the Parquet writer, read back by pyarrow${SKIP_WHY ? ` (skipped: ${SKIP_WHY})` : ''}`,
  () => {
    it('gives back every value of every row, floats bit-exact, nulls and empty lists as written', () => {
      const back = readParquet(write(ROWS, 'all.parquet'));
      expect(back.numRows).toBe(ROWS.length);
      expect(back.rows).toEqual(ROWS.map(expected));
      expect(back.metadata).toEqual({ k: 'v', ünï: '✓' });
      expect(back.arrowTypes).toEqual({
        id: 'int64',
        flag: 'bool',
        maybeFlag: 'bool',
        x: 'double',
        maybeX: 'double',
        name: 'string',
        maybeName: 'string',
        ints: 'list<element: int64 not null>',
        maybeInts: 'list<element: int64>',
        inner: 'struct<n: int64 not null, deep: struct<s: string>, tags: list<element: string not null> not null>',
        tries: 'list<element: struct<code: string not null, notes: list<element: string not null> not null> not null>',
      });
      const physical = Object.fromEntries(back.columns.map((c) => [c.path, `${c.physical} ${c.logical}`]));
      expect(physical['id']).toBe('INT64 None');
      expect(physical['x']).toBe('DOUBLE None');
      expect(physical['flag']).toBe('BOOLEAN None');
      expect(physical['name']).toBe('BYTE_ARRAY String');
      expect(physical['tries.list.element.notes.list.element']).toBe('BYTE_ARRAY String');
    });

    it('writes an empty table that readers open', () => {
      const back = readParquet(write([], 'empty.parquet'));
      expect(back.numRows).toBe(0);
      expect(back.rows).toEqual([]);
    });
  },
);

describe('what the writer refuses rather than drop or bend', () => {
  const one = ROWS[1] as Record<string, unknown>;
  it.each([
    ['an extra field', { ...one, surprise: 1 }, /row 0: field "surprise" has no column/],
    [
      'an extra nested field',
      { ...one, inner: { n: 1, deep: null, tags: [], more: true } },
      /row 0: inner: field "more"/,
    ],
    ['a missing required field', { ...one, id: null }, /row 0: id is missing/],
    ['a fraction in an integer column', { ...one, id: 1.5 }, /row 0: id: 1\.5 is not of type int64/],
    ['an infinite float', { ...one, x: Infinity }, /row 0: x: Infinity is not of type double/],
    ['NaN', { ...one, maybeX: NaN }, /row 0: maybeX: NaN is not of type double/],
    ['an unsafe integer', { ...one, id: 2 ** 60 }, /is not of type int64/],
    ['a null list element where elements are required', { ...one, ints: [1, null] }, /row 0: ints\[1\] is missing/],
  ])('%s', (_what, row, message) => {
    expect(() => shred(FIELDS, [row])).toThrow(message);
  });
});
