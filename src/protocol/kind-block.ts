/**
 * A protocol block that names a registered kind (`simulator: { kind, … }`, `policy: { runtime, … }`,
 * `conditions[i]: { …, kind, … }`): parsed by the kind's own fields, found in a core registry by the name field, so
 * the protocol knows no kind by name. An unknown name reads as a discriminated union's does ("unknown kind …,
 * did you mean …, use one of: …"); the kind's fields report at their own paths; `schemaAt` (issues.ts) follows the
 * block into the named kind's object for descriptions and allowed keys (`kindBlockObject`). The JSON Schema for
 * editors is a oneOf over the registered kinds (`kindBlockJsonSchema`).
 */
import { z } from 'zod';
import type { KindRegistry } from '../core/index.js';

/** What a registered kind gives a block: its name and its fields besides the name field. */
interface BlockKind {
  readonly name: string;
  readonly summary: string;
  readonly fields: z.ZodRawShape;
}

interface BlockDef {
  readonly registry: KindRegistry<BlockKind>;
  readonly nameField: string;
  /** Fields every block of this family has besides the kind's own (e.g. a condition's id), placed before the name. */
  readonly common: z.ZodRawShape;
  readonly objects: Map<string, { kind: BlockKind; object: z.ZodObject }>;
}

/** A parsed kind block: its name field, and the kind's own fields (typed by the kind, unknown here). */
export type KindBlockValue<N extends string> = Readonly<Record<string, unknown>> & { readonly [K in N]: string };

const BLOCKS = new WeakMap<z.ZodType, BlockDef>();

/** The strict object of `kind` in this family (cached per registered entry). */
function objectOf(def: BlockDef, kind: BlockKind): z.ZodObject {
  const cached = def.objects.get(kind.name);
  if (cached !== undefined && cached.kind === kind) return cached.object;
  const object = z
    .strictObject({
      ...def.common,
      [def.nameField]: z.literal(kind.name).describe(`${kind.name}: ${kind.summary}`),
      ...kind.fields,
    })
    .describe(kind.summary);
  def.objects.set(kind.name, { kind, object });
  return object;
}

/**
 * The schema of a block naming a kind of `registry` by `nameField`; `common` are fields every kind's block has
 * (owned by the protocol). Parses to exactly what the kind's strict object gives (its defaults filled in).
 */
export function kindBlock<N extends string>(
  registry: KindRegistry<BlockKind>,
  nameField: N,
  description: string,
  common: z.ZodRawShape = {},
): z.ZodType<KindBlockValue<N>, Record<string, unknown>> {
  const def: BlockDef = { registry, nameField, common, objects: new Map() };
  const schema = z
    .looseObject({ [nameField]: z.string() })
    .transform((value, ctx) => {
      const name = value[nameField] as string;
      const kind = registry.get(name);
      if (kind === undefined) {
        ctx.issues.push({
          code: 'invalid_union',
          discriminator: nameField,
          options: registry.names(),
          errors: [],
          path: [nameField],
          input: name,
          message: `unknown ${registry.what} "${name}"`,
        } as z.core.$ZodRawIssue);
        return z.NEVER;
      }
      const r = objectOf(def, kind).safeParse(value);
      if (!r.success) {
        for (const issue of r.error.issues) ctx.issues.push({ ...issue, input: undefined } as z.core.$ZodRawIssue);
        return z.NEVER;
      }
      return r.data as KindBlockValue<N>;
    })
    .describe(description);
  BLOCKS.set(schema, def);
  return schema;
}

/** For a kind block schema and its data: the named kind's strict object (undefined: not a kind block, or no such kind). */
export function kindBlockObject(schema: z.ZodType, data: unknown): z.ZodObject | undefined {
  const def = BLOCKS.get(schema);
  if (def === undefined) return undefined;
  const name = data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[def.nameField] : undefined;
  const kind = typeof name === 'string' ? def.registry.get(name) : undefined;
  return kind === undefined ? undefined : objectOf(def, kind);
}

/** Whether `schema` is a kind block (kindBlock). */
export const isKindBlock = (schema: z.ZodType): boolean => BLOCKS.has(schema);

/** The JSON Schema (input form) of a kind block: oneOf the registered kinds' objects. */
export function kindBlockJsonSchema(schema: z.ZodType): Record<string, unknown> | undefined {
  const def = BLOCKS.get(schema);
  if (def === undefined) return undefined;
  const oneOf = def.registry.all().map((kind) => {
    const s = z.toJSONSchema(objectOf(def, kind), { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
    delete s['$schema'];
    return s;
  });
  return { ...(schema.description === undefined ? {} : { description: schema.description }), oneOf };
}
