/**
 * The protocol schema as JSON Schema (draft 2020-12) for editors: input form (defaults optional),
 * with the field descriptions. scripts/export-protocol-schema.ts writes it to
 * schemas/protocol.schema.json; a test keeps the committed file up to date.
 */
import { z } from 'zod';
import { kindBlockUnionOf } from './kind-block.js';
import { ProtocolSchema } from './schema.js';

export const PROTOCOL_SCHEMA_ID = 'https://imep.dev/schemas/protocol.schema.json';

export function protocolJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ProtocolSchema, {
    io: 'input',
    target: 'draft-2020-12',
    // a kind block (each conditions[i]) is written as the union of the kinds registered now (kind-block.ts)
    override: ({ zodSchema, jsonSchema }) => {
      const union = kindBlockUnionOf(zodSchema as unknown as z.ZodType);
      if (union === undefined) return;
      const { $schema: _, ...written } = z.toJSONSchema(union, { io: 'input', target: 'draft-2020-12' });
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Record<string, unknown>)[key];
      Object.assign(jsonSchema, written);
    },
  }) as Record<string, unknown>;
  // exactly one of checkpoint / policy (cross-check.ts), which zod's object schema cannot say
  const oneOf = [{ required: ['checkpoint'] }, { required: ['policy'] }];
  return { ...schema, oneOf, $id: PROTOCOL_SCHEMA_ID, title: 'IMEP protocol (version 1)' };
}

/** The exact text of schemas/protocol.schema.json. */
export function protocolJsonSchemaText(): string {
  return `${JSON.stringify(protocolJsonSchema(), null, 2)}\n`;
}
