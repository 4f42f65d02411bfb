import { z } from 'zod';
import { ManifestEntrySchema } from '../manifest.js';
import { OperatorSchema, Sha256HexSchema } from '../unit-layout.js';
import { SignatureBlockSchema } from '../../signing/index.js';

/**
 * The post-seal records — adjudication/ and closeout.json (schemas only; writing is in transitions/post-seal-write.ts, checking in
 * verify/verify.ts). Each record is self-hashed and names the seal it judged, so it is tamper-evident
 * before the closeout binds it; artifacts of adjudication NNN live in adjudication/NNN/ and are
 * listed (path, size, sha256) in its record.
 */

const JsonSchema: z.ZodType<unknown> = z.unknown();

export const OverrideRecordSchema = z.object({
  by: z.string(),
  reason: z.string().min(1),
  ranBy: z.array(z.string()),
});

export const AdjudicationRecordSchema = z.object({
  kind: z.literal('imep.adjudication'),
  version: z.literal(1),
  unitId: z.string(),
  number: z.number().int().positive(),
  at: z.string(),
  operator: OperatorSchema,
  /**
   * Present (true) when the operator's signing key was created by the very command that adjudicated: an identity
   * with no history before it (verify and the report warn; src/signing/chain.ts identityWarning).
   */
  operatorKeyCreated: z.literal(true).optional(),
  /** The operators who ran the formal run's conditions (start and resumes). */
  ranBy: z.array(z.string()),
  sameOperatorOverride: OverrideRecordSchema.nullable(),
  sealRoot: Sha256HexSchema,
  sealSha256: Sha256HexSchema,
  /** The earlier adjudication this one supersedes (re-adjudication of the same sealed data). */
  supersedes: z.string().nullable(),
  /** Identity of the frozen adjudicator (name, version, source hash…), as the caller describes it. */
  adjudicator: JsonSchema,
  /** The adjudicator's output (verdicts, gates, estimands). */
  result: JsonSchema,
  artifacts: z.array(ManifestEntrySchema),
  /** Ed25519 signature by the adjudicating operator's key, chained to seal.json or the superseded adjudication (src/signing). */
  signature: SignatureBlockSchema.optional(),
  sha256: Sha256HexSchema,
});
export type AdjudicationRecord = z.infer<typeof AdjudicationRecordSchema>;

export const CROSS_CHECK_OUTCOMES = ['agrees', 'disagrees', 'not-performed'] as const;
export type CrossCheckOutcome = (typeof CROSS_CHECK_OUTCOMES)[number];

export const CrossCheckRecordSchema = z.object({
  kind: z.literal('imep.cross-check'),
  version: z.literal(1),
  unitId: z.string(),
  number: z.number().int().positive(),
  at: z.string(),
  operator: OperatorSchema,
  adjudicationFile: z.string(),
  adjudicationSha256: Sha256HexSchema,
  outcome: z.enum(CROSS_CHECK_OUTCOMES),
  /** How it was checked, e.g. "registered adjudicator rerun on a second machine from verified sealed inputs". */
  method: z.string().min(1),
  detail: JsonSchema,
  /** Ed25519 signature by the cross-checking operator's key, chained to the adjudication record it checks (src/signing). */
  signature: SignatureBlockSchema.optional(),
  sha256: Sha256HexSchema,
});
export type CrossCheckRecord = z.infer<typeof CrossCheckRecordSchema>;

export const CloseoutRecordSchema = z.object({
  kind: z.literal('imep.closeout'),
  version: z.literal(1),
  unitId: z.string(),
  closedAt: z.string(),
  operator: OperatorSchema,
  sealRoot: Sha256HexSchema,
  sealSha256: Sha256HexSchema,
  /** Merkle root over `files` (manifest.ts): the fingerprint of the whole closed unit. */
  merkle: z.object({ scheme: z.literal('imep-merkle-v1'), root: Sha256HexSchema }),
  /** seal.json, amendments.jsonl (when present) and every file under adjudication/. */
  files: z.array(ManifestEntrySchema),
  amendments: z.array(z.object({ id: z.string(), classification: z.string(), at: z.string() })),
  adjudication: z.object({ file: z.string(), sha256: Sha256HexSchema }),
  crossCheck: z.object({ file: z.string(), outcome: z.enum(CROSS_CHECK_OUTCOMES) }),
  notes: z.string().nullable(),
  /** Ed25519 signature by the closing operator's key, chained to the current adjudication record (src/signing). */
  signature: SignatureBlockSchema.optional(),
  sha256: Sha256HexSchema,
});
export type CloseoutRecord = z.infer<typeof CloseoutRecordSchema>;
