/**
 * The chain manifest (format `imep-chain-manifest`, version 1): the frozen list of ChainBench chains.
 *
 * A chain is one unit: a scene (`sceneSeed`, K drawers named in `drawers`, position order), an ordered
 * list of episodes and the query. Roles:
 *  - `write`: reveals `object` → drawer position `drawer`. Exactly one write is the deciding write
 *    (`deciding: true`): the latest write of the query object, whose drawer is the final fact. In a
 *    rewritten chain (`rewrite: true`) an earlier write of the query object states the initial fact,
 *    which the deciding write overwrites (initial ≠ final).
 *  - `distractor`: a write of another object's drawer (never the query object).
 *  - `query`: the last episode; shows `object` with every drawer closed. Its hidden answer is
 *    `finalFact.drawer`; the query observation is identical whatever that answer is, which
 *    `queryFrameHash` records (SHA-256 of the method-visible query observation, see query-frame.ts).
 * `executorSeeds.primary` seeds the motor executor of every recorded decision; `executorSeeds.replay`
 * seeds the re-issued identical instruction (condition R, the replay floor).
 * `features` fixes how each write/distractor episode's event embedding is derived (embeddings.ts).
 *
 * Schema-level checks are here (zod, exported as JSON Schema to schemas/chain-manifest.schema.json);
 * the cross-field rules (K range, duplicate ids, exactly one deciding write, the query frame hash) are
 * in manifest-validate.ts so that each refusal names its chain and field in one line.
 */
import { z } from 'zod';

export const CHAIN_MANIFEST_FORMAT = 'imep-chain-manifest';
export const CHAIN_MANIFEST_VERSION = 1;

const Uint32 = z.number().int().min(0).max(0xffffffff);
/** Object and drawer identifiers: what the label-equivariance audit renames. */
export const IdentifierSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'an identifier: letters, digits, _ or -, 1–64 characters');
const ChainId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'a chain id: letters, digits, . _ : or -, 1–128 characters');
const DrawerIndex = z.number().int().min(0);
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex SHA-256');

export const FactSchema = z.strictObject({
  object: IdentifierSchema,
  /** Drawer position 0..K−1 (the chain's `drawers` names it). */
  drawer: DrawerIndex,
});

export const WriteEpisodeSchema = z.strictObject({
  role: z.literal('write'),
  object: IdentifierSchema,
  drawer: DrawerIndex,
  deciding: z.boolean(),
});

export const DistractorEpisodeSchema = z.strictObject({
  role: z.literal('distractor'),
  object: IdentifierSchema,
  drawer: DrawerIndex,
});

export const QueryEpisodeSchema = z.strictObject({
  role: z.literal('query'),
  object: IdentifierSchema,
});

export const EpisodeSchema = z.discriminatedUnion('role', [
  WriteEpisodeSchema,
  DistractorEpisodeSchema,
  QueryEpisodeSchema,
]);

export const ChainSchema = z.strictObject({
  id: ChainId,
  K: z.number().int(),
  sceneSeed: Uint32,
  drawers: z.array(IdentifierSchema),
  episodes: z.array(EpisodeSchema).min(1),
  initialFact: FactSchema,
  finalFact: FactSchema,
  rewrite: z.boolean(),
  executorSeeds: z.strictObject({ primary: Uint32, replay: Uint32 }),
  queryFrameHash: Sha256,
});

export const FeatureSpecSchema = z.strictObject({
  /** Embedding length (float32 elements). */
  dim: z.number().int().min(1).max(4096),
  /** Seed of the fixed per-identifier embeddings and of the per-episode noise. */
  seed: Uint32,
  /** Norm of the per-drawer component. */
  drawerScale: z.number().min(0),
  /** Norm of the per-object component. */
  objectScale: z.number().min(0),
  /** Standard deviation of the per-element seeded noise. */
  noise: z.number().min(0),
});

export const GeneratorRecordSchema = z.strictObject({
  name: z.literal('chaindrawers-lite-generator'),
  version: z.number().int().min(1),
  seed: Uint32,
  prng: z.strictObject({ name: z.string(), version: z.number().int() }),
  chains: z.number().int().min(0),
  K: z.array(z.number().int()),
  rewriteRate: z.number().min(0).max(1),
  distractors: z.strictObject({ min: z.number().int().min(0), max: z.number().int().min(0) }),
});

export const ChainManifestSchema = z.strictObject({
  format: z.literal(CHAIN_MANIFEST_FORMAT),
  version: z.literal(CHAIN_MANIFEST_VERSION),
  /** The simulator whose query frames the manifest was checked on and whose executor replays decisions. */
  env: z.strictObject({
    id: z.literal('ChainDrawers-lite'),
    executionSuccess: z.number().min(0).max(1),
  }),
  features: FeatureSpecSchema,
  /** How the manifest was generated (absent for hand-built manifests). */
  generator: GeneratorRecordSchema.optional(),
  chains: z.array(ChainSchema),
});

export type Fact = z.infer<typeof FactSchema>;
export type WriteEpisode = z.infer<typeof WriteEpisodeSchema>;
export type DistractorEpisode = z.infer<typeof DistractorEpisodeSchema>;
export type QueryEpisode = z.infer<typeof QueryEpisodeSchema>;
export type Episode = z.infer<typeof EpisodeSchema>;
export type Chain = z.infer<typeof ChainSchema>;
export type FeatureSpec = z.infer<typeof FeatureSpecSchema>;
export type GeneratorRecord = z.infer<typeof GeneratorRecordSchema>;
export type ChainManifest = z.infer<typeof ChainManifestSchema>;

/** The manifest's JSON Schema (draft 2020-12), as written to schemas/chain-manifest.schema.json. */
export function chainManifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ChainManifestSchema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'https://imep.dev/schemas/chain-manifest.schema.json',
    title: 'IMEP ChainBench chain manifest',
    description: `${CHAIN_MANIFEST_FORMAT} version ${CHAIN_MANIFEST_VERSION}: frozen ChainBench chains (src/chainbench/manifest-schema.ts).`,
  };
}
