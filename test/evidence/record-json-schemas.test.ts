/**
 * The evidence records' JSON Schemas (src/evidence/records/json-schemas.ts) as committed in schemas/: each file equals
 * the export (regenerate: npx tsx scripts/export-protocol-schema.ts), and the adjudication document's schema says
 * what the zod schema says — its version literal, its required sections, no unknown field, and no bound on a
 * withheld verdict.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RECORD_JSON_SCHEMAS, recordJsonSchemaText, recordSchemaPath } from '../../src/evidence/index.js';
import { ROOT } from '../campaign/helpers.js';

describe('evidence record JSON Schemas in schemas/', () => {
  it.each(RECORD_JSON_SCHEMAS.map((e) => [e.name, e] as const))(
    '%s is up to date (run: npx tsx scripts/export-protocol-schema.ts)',
    (_name, entry) => {
      expect(readFileSync(join(ROOT, recordSchemaPath(entry.name)), 'utf8')).toBe(recordJsonSchemaText(entry));
    },
  );

  it('every schemas/ file is an export of some schema (none left behind by a rename)', () => {
    const exported = new Set([
      'protocol.schema.json',
      'chain-manifest.schema.json',
      ...RECORD_JSON_SCHEMAS.map((e) => `${e.name}.schema.json`),
    ]);
    expect(readdirSync(join(ROOT, 'schemas')).filter((n) => !exported.has(n))).toEqual([]);
  });

  it('the adjudication document: version 1, every section required, unknown fields refused', () => {
    const entry = RECORD_JSON_SCHEMAS.find((e) => e.name === 'adjudication')!;
    const schema = JSON.parse(recordJsonSchemaText(entry)) as {
      $id: string;
      properties: Record<string, { const?: unknown }>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(schema.$id).toBe('https://imep.dev/schemas/adjudication.schema.json');
    expect(schema.properties['kind']?.const).toBe('imep.adjudication-result');
    expect(schema.properties['version']?.const).toBe(1);
    expect(schema.required).toEqual([
      'kind',
      'version',
      'adjudicator',
      'unit',
      'provenance',
      'operator',
      'ranBy',
      'sameOperatorOverride',
      'design',
      'conditions',
      'gates',
      'estimands',
      'holm',
      'goNoGo',
      'verdicts',
      'questions',
      'amendments',
    ]);
    expect(schema.additionalProperties).toBe(false);
    const verdicts = (schema.properties['verdicts'] as { items: { oneOf?: unknown[]; anyOf?: unknown[] } }).items;
    const variants = (verdicts.oneOf ?? verdicts.anyOf) as { properties: Record<string, unknown> }[];
    const invalid = variants.find((v) => (v.properties['verdict'] as { const: string }).const === 'invalid')!;
    expect(invalid.properties['bound']).toEqual({ not: {} });
  });
});
