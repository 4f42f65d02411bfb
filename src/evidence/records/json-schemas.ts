/**
 * The evidence records users read, as JSON Schema (draft 2020-12, the output form: what IMEP writes), for tools
 * outside IMEP that read a unit. scripts/export-protocol-schema.ts writes each to schemas/<name>.schema.json and
 * test/evidence/record-json-schemas.test.ts keeps the committed files equal to this export.
 */
import { z } from 'zod';
import { AdjudicationDocumentSchema, ADJUDICATION_VERSION } from './adjudication-document.js';
import { AmendmentSchema } from './amendment.js';
import { EpisodeRowSchema, EpisodeTimingSchema } from './episode-row.js';
import { EvidenceUnitV1Schema } from './evidence-unit.js';
import { AdjudicationRecordSchema, CloseoutRecordSchema, CrossCheckRecordSchema } from './post-seal-records.js';
import { PrecommitRecordSchema } from './precommit-record.js';
import { RunRecordSchema } from './run-record.js';
import { SealRecordSchema } from './seal-record.js';

const SCHEMA_BASE = 'https://imep.dev/schemas/';

interface RecordSchemaEntry {
  /** schemas/<name>.schema.json */
  readonly name: string;
  readonly title: string;
  readonly schema: z.ZodType;
}

/** Every exported record: the unit file it describes, in the title. */
export const RECORD_JSON_SCHEMAS: readonly RecordSchemaEntry[] = [
  {
    name: 'adjudication',
    title: `IMEP adjudication document, adjudication/NNN/adjudication.json (version ${ADJUDICATION_VERSION})`,
    schema: AdjudicationDocumentSchema,
  },
  { name: 'episode-row', title: 'IMEP episode row, one line of rows/rows.jsonl (version 1)', schema: EpisodeRowSchema },
  { name: 'episode-timing', title: 'IMEP episode timing, one line of rows/timings.jsonl', schema: EpisodeTimingSchema },
  { name: 'evidence-unit', title: 'IMEP evidence unit header, unit.json (version 1)', schema: EvidenceUnitV1Schema },
  {
    name: 'precommit-record',
    title: 'IMEP precommit record, precommit.json (version 1)',
    schema: PrecommitRecordSchema,
  },
  { name: 'run-record', title: 'IMEP run record, rows/run.json (version 1)', schema: RunRecordSchema },
  { name: 'amendment', title: 'IMEP amendment, one line of amendments.jsonl', schema: AmendmentSchema },
  { name: 'seal-record', title: 'IMEP seal record, seal.json (version 1)', schema: SealRecordSchema },
  {
    name: 'adjudication-record',
    title: 'IMEP adjudication record, adjudication/adjudication-NNN.json (version 1)',
    schema: AdjudicationRecordSchema,
  },
  {
    name: 'cross-check-record',
    title: 'IMEP cross-check record, adjudication/cross-check-NNN.json (version 1)',
    schema: CrossCheckRecordSchema,
  },
  { name: 'closeout-record', title: 'IMEP closeout record, closeout.json (version 1)', schema: CloseoutRecordSchema },
];

/** The path of a record's schema file, relative to the repository root. */
export function recordSchemaPath(name: string): string {
  return `schemas/${name}.schema.json`;
}

/** The exact text of schemas/<name>.schema.json. */
export function recordJsonSchemaText(entry: RecordSchemaEntry): string {
  const schema = z.toJSONSchema(entry.schema, { io: 'output', target: 'draft-2020-12' });
  const text = { ...schema, $id: `${SCHEMA_BASE}${entry.name}.schema.json`, title: entry.title };
  return `${JSON.stringify(text, null, 2)}\n`;
}
