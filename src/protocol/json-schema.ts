/**
 * The protocol schema as JSON Schema (draft 2020-12) for editors: input form (defaults optional),
 * with the field descriptions. scripts/export-protocol-schema.ts writes it to
 * schemas/protocol.schema.json; a test keeps the committed file up to date.
 */
import { z } from 'zod';
import { ProtocolSchema } from './schema.js';

export const PROTOCOL_SCHEMA_ID = 'https://imep.dev/schemas/protocol.schema.json';

export function protocolJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ProtocolSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  // exactly one of checkpoint / policy (cross-check.ts), which zod's object schema cannot say
  const oneOf = [{ required: ['checkpoint'] }, { required: ['policy'] }];
  return { ...schema, oneOf, $id: PROTOCOL_SCHEMA_ID, title: 'IMEP protocol (version 1)' };
}

/** The exact text of schemas/protocol.schema.json. */
export function protocolJsonSchemaText(): string {
  return `${JSON.stringify(protocolJsonSchema(), null, 2)}\n`;
}
