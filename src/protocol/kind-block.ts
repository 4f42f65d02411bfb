/**
 * A protocol block whose fields a registered kind owns (each `conditions[i]`: `kind` names the kind): parsed
 * through the kind's face (src/core/kinds) as `z.strictObject({ ...common, [nameField]: z.literal(name), ...fields })`,
 * so the parsed block, its defaults, its error lines and the JSON Schema are what one discriminated union over the
 * registered kinds gives — built from the registry when it is used, so a kind registered later (a user's, a test's)
 * parses like a built-in. An unregistered name is refused at the name field, listing the registered names.
 *
 * schemaAt (issues.ts) follows a block into its kind's schema (for field descriptions and allowed keys);
 * json-schema.ts writes the union of the registered kinds.
 */
import { z } from 'zod';
import type { Kind, KindRegistry } from '../core/index.js';

/** What a kind gives a block: its name, its one-line summary (the name field's description) and its fields. */
export interface BlockKind extends Kind {
  readonly fields: z.ZodRawShape;
}

export interface KindBlockOptions<F extends BlockKind> {
  readonly registry: KindRegistry<F>;
  /** The field naming the kind, e.g. "kind". */
  readonly nameField: string;
  /** Fields every block has besides the kind's own (they come first). */
  readonly common: z.ZodRawShape;
  /** What the block is, in words (its description). */
  readonly description: string;
}

interface Resolver {
  /** The kind's strict schema for `data`, or undefined when `data` names no registered kind. */
  of(data: unknown): z.ZodObject | undefined;
  /** The discriminated union of every registered kind's schema (the JSON Schema's form of the block). */
  union(): z.ZodType;
}

const RESOLVERS = new WeakMap<z.ZodType, Resolver>();

/** The registered kind's schema a kind block holds `data` to, if `schema` is a kind block (issues.ts). */
export function kindBlockSchemaOf(schema: z.ZodType, data: unknown): z.ZodObject | undefined {
  return RESOLVERS.get(schema)?.of(data);
}

/** The union of the registered kinds' schemas, if `schema` is a kind block (json-schema.ts). */
export function kindBlockUnionOf(schema: z.ZodType): z.ZodType | undefined {
  return RESOLVERS.get(schema)?.union();
}

/** The schema of a block parsed through `registry` (see the file's comment); its output is `Out`. */
export function kindBlock<F extends BlockKind, Out>(options: KindBlockOptions<F>): z.ZodType<Out, unknown> {
  const { registry, nameField, common, description } = options;
  const built = new WeakMap<F, z.ZodObject>();
  const schemaOf = (kind: F): z.ZodObject => {
    let s = built.get(kind);
    if (s === undefined) {
      s = z.strictObject({ ...common, [nameField]: z.literal(kind.name).describe(kind.summary), ...kind.fields });
      built.set(kind, s);
    }
    return s;
  };
  const kindOf = (data: unknown): F | undefined => {
    const name = data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[nameField] : undefined;
    return typeof name === 'string' ? registry.get(name) : undefined;
  };
  const schema = z
    .looseObject({})
    .transform((value, ctx) => {
      const kind = kindOf(value);
      if (kind === undefined) {
        // the issue a discriminated union over the registered kinds raises (issues.ts words it)
        ctx.issues.push({
          code: 'invalid_union',
          errors: [],
          note: 'No matching discriminator',
          discriminator: nameField,
          options: registry.names(),
          path: [nameField],
          input: value,
        });
        return z.NEVER;
      }
      const r = schemaOf(kind).safeParse(value);
      if (!r.success) {
        for (const issue of r.error.issues) ctx.issues.push({ ...issue, input: undefined });
        return z.NEVER;
      }
      return r.data as Out;
    })
    .describe(description);
  RESOLVERS.set(schema, {
    of: (data) => {
      const kind = kindOf(data);
      return kind === undefined ? undefined : schemaOf(kind);
    },
    union: () => {
      const options = registry.all().map(schemaOf);
      return z
        .discriminatedUnion(nameField, options as unknown as [z.ZodObject, ...z.ZodObject[]])
        .describe(description);
    },
  });
  return schema as unknown as z.ZodType<Out, unknown>;
}
