/**
 * The protocol schema as JSON Schema (draft 2020-12) for editors: input form (defaults optional),
 * with the field descriptions. A registered-kind field (simulator, policy) is written as the union over the kinds registered
 * when it is called (kind-field.ts), so callers register the built-in kinds first (src/kinds).
 * scripts/export-protocol-schema.ts writes it to schemas/protocol.schema.json; a test keeps the committed file up to date.
 */
import { z } from 'zod';
import { kindFieldInfo } from './kind-field.js';
import { ProtocolObjectSchema } from './schema.js';

export const PROTOCOL_SCHEMA_ID = 'https://imep.dev/schemas/protocol.schema.json';

/** The protocol object with every registered-kind field (simulator) written as the union over its registered kinds. */
function describedProtocol(): z.ZodObject {
  const unions: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(ProtocolObjectSchema.shape)) {
    const optional = field instanceof z.ZodOptional;
    const info = kindFieldInfo((optional ? field.unwrap() : field) as z.ZodType);
    if (info !== undefined) unions[key] = optional ? info.union().optional() : info.union();
    // a list of kind blocks (conditions): the same list, of the union
    const listed = field instanceof z.ZodArray ? kindFieldInfo(field.element as z.ZodType) : undefined;
    if (listed !== undefined && field instanceof z.ZodArray) {
      const list = (field as z.ZodArray).clone({ ...field._zod.def, element: listed.union() });
      unions[key] = field.description === undefined ? list : list.describe(field.description);
    }
  }
  const extended = ProtocolObjectSchema.extend(unions);
  const description = ProtocolObjectSchema.description;
  return description === undefined ? extended : extended.describe(description);
}

export function protocolJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(describedProtocol(), { io: 'input', target: 'draft-2020-12' }) as Record<
    string,
    unknown
  >;
  // exactly one of checkpoint / policy (cross-check.ts), which zod's object schema cannot say
  const oneOf = [{ required: ['checkpoint'] }, { required: ['policy'] }];
  // exactly one of envs / suite as written (the suite fills envs: suite-expand.ts)
  const allOf = [{ oneOf: [{ required: ['envs'] }, { required: ['suite'] }] }];
  return { ...schema, oneOf, allOf, $id: PROTOCOL_SCHEMA_ID, title: 'IMEP protocol (version 1)' };
}

/** The exact text of schemas/protocol.schema.json. */
export function protocolJsonSchemaText(): string {
  return `${JSON.stringify(protocolJsonSchema(), null, 2)}\n`;
}
