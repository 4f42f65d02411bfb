/**
 * One line of the amendment log (amendments.jsonl): append-only and hash-chained (`prevSha256` is the SHA-256 of
 * the previous line's bytes). The classification is derived from the unit at the time, never chosen by the user
 * (transitions/amend.ts writes and checks the log).
 */
import { z } from 'zod';
import { UNIT_STATES } from '../lifecycle.js';
import { OperatorSchema, Sha256HexSchema } from '../unit-layout.js';
import { SignatureBlockSchema } from '../../signing/index.js';

export const AMENDMENT_CLASSES = ['before-data', 'after-smoke', 'after-formal-data'] as const;
export type AmendmentClass = (typeof AMENDMENT_CLASSES)[number];

export const AmendmentSchema = z.object({
  id: z.string().regex(/^A\d+$/),
  at: z.string(),
  author: OperatorSchema,
  text: z.string().min(1),
  classification: z.enum(AMENDMENT_CLASSES),
  stateAtAmendment: z.enum(UNIT_STATES),
  affects: z.array(z.string().min(1)).min(1),
  prevSha256: Sha256HexSchema.nullable(),
  /** Post-seal lines of a signed unit: the author's Ed25519 signature over the line (src/evidence/verify/amendment-signatures.ts). */
  signature: SignatureBlockSchema.optional(),
});
export type Amendment = z.infer<typeof AmendmentSchema>;
