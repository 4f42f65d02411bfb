/**
 * A protocol block whose kind is registered (DESIGN.md "Kinds are registered"): `simulator: { kind, … }` is parsed
 * through core's `simulatorFaces` — the block's name field picks the registered face, and the block is parsed by
 * `z.strictObject({ [nameField]: z.literal(name), ...face.fields })`, its issues reported at their paths under the
 * block; a name nobody registered is the registry's refusal at the name field. The protocol imports no kind: what a
 * kind is arrives by registration (src/kinds).
 *
 * The issue walk (issues.ts schemaAt) and the JSON Schema export (json-schema.ts) look through a kind field with
 * `kindFieldInfo`: the object schema of the data's kind, and the union over every registered kind.
 */
import { z } from 'zod';
import { isImepError, type Kind, type KindRegistry } from '../core/index.js';

/** A registered kind as the protocol parses it: its fields besides the name field. */
export interface KindWithFields extends Kind {
  readonly fields: z.ZodRawShape;
}

export interface KindFieldInfo {
  /** The field's description, from the registered kinds (e.g. "the simulator: { kind: lite } or …"). */
  describe(): string;
  /** The object schema of the kind `data` names; undefined when it names none that is registered. */
  objectOf(data: unknown): z.ZodObject | undefined;
  /** The union over every registered kind (for the JSON Schema). */
  union(): z.ZodType;
}

/** The params of a zod issue that carries a protocol issue's own words (issues.ts zodIssues). */
export interface WordedIssueParams {
  readonly worded: { readonly message: string; readonly hint?: string | undefined };
}

const infos = new WeakMap<z.ZodType, KindFieldInfo>();

/** What `kindField` knows about `schema`, if it made it. */
export function kindFieldInfo(schema: z.ZodType): KindFieldInfo | undefined {
  return infos.get(schema);
}

/** The block's required fields besides the name field, for the description ("{ kind: sim-bridge, adapter }"). */
function required(fields: z.ZodRawShape): string[] {
  return Object.entries(fields)
    .filter(([, s]) => !(s as z.ZodType).safeParse(undefined).success)
    .map(([k]) => k);
}

export type KindBlockOf<N extends string> = { readonly [K in N]: string } & Readonly<Record<string, unknown>>;

/** How a kind field is built beyond its registry, name field and label (all optional). */
export interface KindFieldOptions {
  /** Fields every block has besides its kind's (they come first, then the name field, then the kind's fields). */
  readonly common?: z.ZodRawShape;
  /** The block's description (else generated from the registered kinds and `label`). */
  readonly description?: string;
  /**
   * How an unknown name is refused: 'registry' (the registry's own message and hint, the default) or 'choices' — the
   * words of a discriminated union over the registered kinds: `unknown kind "Q"` — `use one of: A, N, …` (the
   * condition kinds' refusal, which protocols and tests have always read).
   */
  readonly unknown?: 'registry' | 'choices';
}

/**
 * The zod field of a kind block named by `nameField` (e.g. 'kind'), its kinds looked up in `registry`.
 * `label` words the description: `${label}: { kind: a } or { kind: b, x }`.
 */
export function kindField<K extends KindWithFields, N extends string, Out = KindBlockOf<N>>(
  registry: KindRegistry<K>,
  nameField: N,
  label: string,
  options: KindFieldOptions = {},
): z.ZodType<Out, Readonly<Record<string, unknown>>> {
  const objects = new WeakMap<K, z.ZodObject>();
  const objectOfKind = (kind: K): z.ZodObject => {
    let o = objects.get(kind);
    if (o === undefined) {
      o = z.strictObject({
        ...options.common,
        [nameField]: z.literal(kind.name).describe(kind.summary),
        ...kind.fields,
      });
      objects.set(kind, o);
    }
    return o;
  };
  const describe = (): string =>
    options.description ??
    `${label}: ${registry
      .all()
      .map((k) => `{ ${[`${nameField}: ${k.name}`, ...required(k.fields)].join(', ')} }`)
      .join(' or ')}`;
  const schema = z.looseObject({}).transform((block, ctx) => {
    const name = block[nameField];
    const worded = (message: string, hint: string): void => {
      const params: WordedIssueParams = { worded: { message, hint } };
      ctx.issues.push({ code: 'custom', path: [nameField], message, input: name, params });
    };
    if (options.unknown === 'choices' && (typeof name !== 'string' || !registry.has(name))) {
      // the issue a discriminated union over the registered kinds raises (issues.ts words it, with a close name)
      ctx.issues.push({
        code: 'invalid_union',
        errors: [],
        note: 'No matching discriminator',
        discriminator: nameField,
        options: registry.names(),
        path: [nameField],
        input: block,
      });
      return z.NEVER;
    }
    if (typeof name !== 'string') {
      worded(
        name === undefined ? `missing required field "${nameField}"` : `unknown ${nameField} ${JSON.stringify(name)}`,
        `use one of: ${registry.names().join(', ')}`,
      );
      return z.NEVER;
    }
    let kind: K;
    try {
      kind = registry.require(name);
    } catch (e) {
      if (!isImepError(e)) throw e;
      worded(e.message, e.hint ?? '');
      return z.NEVER;
    }
    const parsed = objectOfKind(kind).safeParse(block);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.issues.push({ ...issue, input: undefined });
      return z.NEVER;
    }
    return parsed.data as Out;
  });
  infos.set(schema, {
    describe,
    objectOf(data) {
      const name = data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[nameField] : undefined;
      const kind = typeof name === 'string' ? registry.get(name) : undefined;
      return kind === undefined ? undefined : objectOfKind(kind);
    },
    union() {
      const options = registry.all().map(objectOfKind);
      const u = options.length === 1 ? (options[0] as z.ZodObject) : z.discriminatedUnion(nameField, options as never);
      return u.describe(describe());
    },
  });
  return schema as unknown as z.ZodType<Out, Readonly<Record<string, unknown>>>;
}
