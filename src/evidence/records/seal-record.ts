/**
 * seal.json: the SHA-256 manifest of every file in the unit at the seal (except seal.json itself, the amendment log,
 * bound by its prefix hash instead, and closeout.json) and its Merkle root (manifest.ts). Written by
 * transitions/seal.ts, checked by verify/verify.ts; self-hashed, and signed when the unit is.
 */
import { z } from 'zod';
import { ManifestEntrySchema, MERKLE_SCHEME } from '../manifest.js';
import { OperatorSchema, Sha256HexSchema } from '../unit-layout.js';
import { SignatureBlockSchema } from '../../signing/index.js';

/** The amendment log as the seal bound it: its line count, byte length, SHA-256 of those bytes and last line. */
export const AmendmentsPrefixSchema = z.object({
  count: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  sha256: Sha256HexSchema,
  headSha256: Sha256HexSchema.nullable(),
});

export const SealRecordSchema = z.object({
  kind: z.literal('imep.seal'),
  version: z.literal(1),
  unitId: z.string(),
  sealedAt: z.string(),
  operator: OperatorSchema,
  protocolHash: Sha256HexSchema,
  precommitSha256: Sha256HexSchema,
  merkle: z.object({ scheme: z.literal(MERKLE_SCHEME), root: Sha256HexSchema }),
  files: z.array(ManifestEntrySchema),
  amendments: AmendmentsPrefixSchema,
  /** Ed25519 signature by the operator's key, chained to precommit.json (src/signing); absent in older units. */
  signature: SignatureBlockSchema.optional(),
  sha256: Sha256HexSchema,
});
export type SealRecord = z.infer<typeof SealRecordSchema>;
