/**
 * A minimal, standard Parquet writer (format 2.x files, data page v1): one row group, one PLAIN-encoded data
 * page per leaf column, levels in the RLE/bit-packing hybrid (RLE runs only), every page GZIP-compressed
 * (node:zlib, fixed mtime: the same table gives the same bytes), no dictionary and no statistics, and the
 * file's key-value metadata in the footer. What it writes is exactly what it is given: INT64 for integers,
 * DOUBLE for floats (the IEEE-754 bits of the JS number), BOOLEAN, UTF8 BYTE_ARRAY strings, nulls as
 * definition levels. Spec: https://github.com/apache/parquet-format (parquet.thrift, Encodings.md).
 */
import { gzipSync } from 'node:zlib';
import { shred, type LeafType, type SchemaNode, type ShreddedColumn } from './parquet-schema.js';
import { bin, encodeStruct, i32, i64, list, struct, type ThriftStruct, type ThriftValue } from './thrift-compact.js';

const MAGIC = Buffer.from('PAR1', 'ascii');
/** parquet.thrift enums. */
const PHYSICAL: Record<LeafType, number> = { boolean: 0, int64: 2, double: 5, string: 6 };
const REPETITION = { required: 0, optional: 1, repeated: 2 } as const;
const CONVERTED = { UTF8: 0, LIST: 3 } as const;
const ENCODING = { PLAIN: 0, RLE: 3 } as const;
const CODEC_GZIP = 2;
const PAGE_DATA = 0;

export interface ParquetTable {
  readonly fields: readonly SchemaNode[];
  readonly rows: readonly Readonly<Record<string, unknown>>[];
  /** Footer key-value metadata, in this order. */
  readonly metadata: readonly (readonly [string, string])[];
  readonly createdBy: string;
}

function bitWidth(max: number): number {
  return max === 0 ? 0 : Math.ceil(Math.log2(max + 1));
}

function varint(n: number): number[] {
  const out: number[] = [];
  let x = n;
  while (x >= 0x80) {
    out.push((x & 0x7f) | 0x80);
    x = Math.floor(x / 128);
  }
  out.push(x);
  return out;
}

/** Levels in the RLE/bit-packing hybrid, RLE runs only, with the 4-byte length prefix of data page v1. */
function levels(values: readonly number[], max: number): Buffer {
  const width = bitWidth(max);
  const valueBytes = Math.ceil(width / 8);
  const body: number[] = [];
  for (let i = 0; i < values.length;) {
    let j = i;
    while (j < values.length && values[j] === values[i]) j++;
    body.push(...varint((j - i) * 2));
    for (let b = 0; b < valueBytes; b++) body.push(((values[i] as number) >> (8 * b)) & 0xff);
    i = j;
  }
  const out = Buffer.alloc(4 + body.length);
  out.writeUInt32LE(body.length, 0);
  Buffer.from(body).copy(out, 4);
  return out;
}

function plain(type: LeafType, values: readonly (boolean | number | string)[]): Buffer {
  switch (type) {
    case 'boolean': {
      const out = Buffer.alloc(Math.ceil(values.length / 8));
      values.forEach((v, i) => {
        if (v === true) out[i >> 3] = (out[i >> 3] as number) | (1 << (i & 7));
      });
      return out;
    }
    case 'int64': {
      const out = Buffer.alloc(8 * values.length);
      values.forEach((v, i) => out.writeBigInt64LE(BigInt(v as number), 8 * i));
      return out;
    }
    case 'double': {
      const out = Buffer.alloc(8 * values.length);
      values.forEach((v, i) => out.writeDoubleLE(v as number, 8 * i));
      return out;
    }
    case 'string': {
      const parts: Buffer[] = [];
      for (const v of values) {
        const b = Buffer.from(v as string, 'utf8');
        const len = Buffer.alloc(4);
        len.writeUInt32LE(b.length, 0);
        parts.push(len, b);
      }
      return Buffer.concat(parts);
    }
  }
}

/** The SchemaElement list: the root, then every node depth first. */
function schemaElements(fields: readonly SchemaNode[]): ThriftValue[] {
  const out: ThriftValue[] = [
    struct([
      [4, bin('schema')],
      [5, i32(fields.length)],
    ]),
  ];
  const rep = (optional: boolean): ThriftValue => i32(optional ? REPETITION.optional : REPETITION.required);
  const walk = (node: SchemaNode): void => {
    if (node.kind === 'leaf') {
      const s: [number, ThriftValue][] = [
        [1, i32(PHYSICAL[node.type])],
        [3, rep(node.optional)],
        [4, bin(node.name)],
      ];
      // converted type UTF8 and logical type STRING (union field 1, an empty struct)
      if (node.type === 'string') s.push([6, i32(CONVERTED.UTF8)], [10, struct([[1, struct([])]])]);
      out.push(struct(s));
    } else if (node.kind === 'struct') {
      out.push(
        struct([
          [3, rep(node.optional)],
          [4, bin(node.name)],
          [5, i32(node.fields.length)],
        ]),
      );
      node.fields.forEach(walk);
    } else {
      out.push(
        struct([
          [3, rep(node.optional)],
          [4, bin(node.name)],
          [5, i32(1)],
          [6, i32(CONVERTED.LIST)],
          [10, struct([[3, struct([])]])],
        ]),
      );
      out.push(
        struct([
          [3, i32(REPETITION.repeated)],
          [4, bin('list')],
          [5, i32(1)],
        ]),
      );
      walk(node.element);
    }
  };
  fields.forEach(walk);
  return out;
}

interface WrittenChunk {
  readonly column: ShreddedColumn;
  readonly offset: number;
  readonly uncompressed: number;
  readonly compressed: number;
}

function pageOf(column: ShreddedColumn): { header: Buffer; body: Buffer; uncompressed: number } {
  const parts: Buffer[] = [];
  if (column.maxRep > 0) parts.push(levels(column.reps, column.maxRep));
  if (column.maxDef > 0) parts.push(levels(column.defs, column.maxDef));
  parts.push(plain(column.type, column.values));
  const raw = Buffer.concat(parts);
  const body = gzipSync(raw, { level: 6 });
  const header = encodeStruct([
    [1, i32(PAGE_DATA)],
    [2, i32(raw.length)],
    [3, i32(body.length)],
    [
      5,
      struct([
        [1, i32(column.defs.length)],
        [2, i32(ENCODING.PLAIN)],
        [3, i32(ENCODING.RLE)],
        [4, i32(ENCODING.RLE)],
      ]),
    ],
  ]);
  return { header, body, uncompressed: header.length + raw.length };
}

/** The bytes of a Parquet file holding `table`. */
export function parquetBytes(table: ParquetTable): Buffer {
  const columns = shred(table.fields, table.rows);
  const parts: Buffer[] = [MAGIC];
  let offset = MAGIC.length;
  const chunks: WrittenChunk[] = [];
  for (const column of columns) {
    const page = pageOf(column);
    parts.push(page.header, page.body);
    const compressed = page.header.length + page.body.length;
    chunks.push({ column, offset, uncompressed: page.uncompressed, compressed });
    offset += compressed;
  }
  const columnChunk = (c: WrittenChunk): ThriftValue =>
    struct([
      [2, i64(c.offset)],
      [
        3,
        struct([
          [1, i32(PHYSICAL[c.column.type])],
          [2, list('i32', [i32(ENCODING.PLAIN), i32(ENCODING.RLE)])],
          [
            3,
            list(
              'bin',
              c.column.path.map((p) => bin(p)),
            ),
          ],
          [4, i32(CODEC_GZIP)],
          [5, i64(c.column.defs.length)],
          [6, i64(c.uncompressed)],
          [7, i64(c.compressed)],
          [9, i64(c.offset)],
        ]),
      ],
    ]);
  const totalUncompressed = chunks.reduce((s, c) => s + c.uncompressed, 0);
  const rowGroup = struct([
    [1, list('struct', chunks.map(columnChunk))],
    [2, i64(totalUncompressed)],
    [3, i64(table.rows.length)],
  ]);
  const footer: ThriftStruct = [
    [1, i32(1)],
    [2, list('struct', schemaElements(table.fields))],
    [3, i64(table.rows.length)],
    [4, list('struct', table.rows.length === 0 && columns.length === 0 ? [] : [rowGroup])],
    [
      5,
      list(
        'struct',
        table.metadata.map(([k, v]) =>
          struct([
            [1, bin(k)],
            [2, bin(v)],
          ]),
        ),
      ),
    ],
    [6, bin(table.createdBy)],
  ];
  const meta = encodeStruct(footer);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(meta.length, 0);
  parts.push(meta, len, MAGIC);
  return Buffer.concat(parts);
}
