import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { protocolJsonSchema, protocolJsonSchemaText } from '../../src/protocol/index.js';
import { ROOT } from './helpers.js';

describe('JSON Schema export', () => {
  it('schemas/protocol.schema.json is up to date (run: npx tsx scripts/export-protocol-schema.ts)', () => {
    const committed = readFileSync(join(ROOT, 'schemas/protocol.schema.json'), 'utf8');
    expect(committed).toBe(protocolJsonSchemaText());
  });

  it('describes the top-level keys, requires the essential ones and refuses unknown ones', () => {
    const schema = protocolJsonSchema() as {
      properties: Record<string, unknown>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(Object.keys(schema.properties)).toEqual([
      'version',
      'id',
      'title',
      'description',
      'simulator',
      'envs',
      'suite',
      'checkpoint',
      'policy',
      'conventions',
      'memory',
      'seeds',
      'n',
      'attempts',
      'chains',
      'factors',
      'conditions',
      'waves',
      'estimands',
      'criteria',
      'gates',
      'validity',
      'holmFamilies',
      'goNoGo',
      'executionFailures',
      'allowlists',
      'bootstrap',
      'mde',
      'frames',
      'amendments',
    ]);
    expect(schema.required).toEqual(
      expect.arrayContaining(['version', 'id', 'conditions', 'waves', 'allowlists', 'executionFailures']),
    );
    // exactly one of checkpoint (ONNX / TF.js) or policy (a hosted policy)
    expect((schema as unknown as { oneOf: unknown }).oneOf).toEqual([
      { required: ['checkpoint'] },
      { required: ['policy'] },
    ]);
    // exactly one of envs or suite (the suite fills envs)
    expect((schema as unknown as { allOf: unknown }).allOf).toEqual([
      { oneOf: [{ required: ['envs'] }, { required: ['suite'] }] },
    ]);
    expect(schema.required).not.toContain('envs');
    expect(schema.required).not.toContain('criteria'); // defaulted to []
    expect(schema.additionalProperties).toBe(false);
  });
});
