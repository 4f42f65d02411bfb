/**
 * rows.parquet's schema (src/export/tables.ts) names every field of the row schema (EpisodeRowSchema, rows v1) and
 * of its nested objects, and nothing else: a field added to the rows must be added to the export, which would
 * otherwise refuse every row that carries it (parquet-schema.ts `shred`).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EpisodeRowSchema, ReadSummarySchema } from '../../src/evidence/index.js';
import { ROW_FIELDS, type SchemaNode } from '../../src/export/index.js';

const names = (fields: readonly SchemaNode[]): string[] => fields.map((f) => f.name).sort();
const child = (fields: readonly SchemaNode[], name: string): readonly SchemaNode[] => {
  const node = fields.find((f) => f.name === name);
  if (node?.kind !== 'struct') throw new Error(`${name} is not a struct in ROW_FIELDS`);
  return node.fields;
};

describe('rows.parquet schema', () => {
  it('has one column per field of EpisodeRowSchema, reads and reads.firstQuery', () => {
    expect(names(ROW_FIELDS)).toEqual(Object.keys(EpisodeRowSchema.shape).sort());
    expect(names(child(ROW_FIELDS, 'reads'))).toEqual(Object.keys(ReadSummarySchema.shape).sort());
    const firstQuery = ReadSummarySchema.shape.firstQuery.unwrap() as z.ZodObject;
    expect(names(child(child(ROW_FIELDS, 'reads'), 'firstQuery'))).toEqual(Object.keys(firstQuery.shape).sort());
    const failure = EpisodeRowSchema.shape.failure.unwrap() as z.ZodObject;
    expect(names(child(ROW_FIELDS, 'failure'))).toEqual(Object.keys(failure.shape).sort());
  });
});
