/**
 * The protocol schema as JSON Schema (draft 2020-12) for editors: input form (defaults optional),
 * with the field descriptions. A block naming a registered kind (`policy`, …) is a oneOf over the kinds registered
 * when it is exported (the built-ins: scripts/export-protocol-schema.ts registers them). That script writes it to
 * schemas/protocol.schema.json; a test keeps the committed file up to date.
 */
import { z } from 'zod';
import { kindBlockJsonSchema } from './kind-block.js';
import { ProtocolSchema } from './schema.js';

export const PROTOCOL_SCHEMA_ID = 'https://imep.dev/schemas/protocol.schema.json';

export function protocolJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ProtocolSchema, {
    io: 'input',
    target: 'draft-2020-12',
    // a block naming a registered kind (kind-block.ts): oneOf the registered kinds' own objects
    override: (ctx) => {
      const block = kindBlockJsonSchema(ctx.zodSchema as unknown as z.ZodType);
      if (block === undefined) return;
      for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
      Object.assign(ctx.jsonSchema, block);
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
