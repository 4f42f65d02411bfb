/**
 * unit.json, version 1: the unit's header — its id, stored status, who created it and when, and the spec block
 * (inspect_ai style: what produced the evidence, filled at precommit). Read and written by unit-header.ts, which
 * branches on the version.
 */
import { z } from 'zod';
import { OperatorSchema, Sha256HexSchema, STORED_STATUSES, UnitIdSchema } from '../unit-layout.js';

export const CodeIdentitySchema = z.object({
  gitCommit: z.string().nullable(),
  dirty: z.boolean().nullable(),
  packageVersion: z.string(),
});
export type CodeIdentity = z.infer<typeof CodeIdentitySchema>;

/** An inclusive band of integer seeds for one task ('*' = every task). */
export const SeedBandSchema = z
  .object({
    task: z.string().min(1),
    start: z.number().int().nonnegative(),
    end: z.number().int().nonnegative(),
  })
  .refine((b) => b.end >= b.start, 'end must be >= start');
export type SeedBand = z.infer<typeof SeedBandSchema>;

/** The spec block (inspect_ai style): what produced the evidence. Filled at precommit. */
export const UnitSpecSchema = z.object({
  /** The current (or last) formal run id; null until `imep campaign run`. */
  runId: z.string().nullable(),
  protocolHash: Sha256HexSchema,
  planHash: z.string().min(1),
  code: CodeIdentitySchema,
  packageVersions: z.record(z.string(), z.string()),
  nodeVersion: z.string(),
  checkpointHashes: z.record(z.string(), Sha256HexSchema),
  prng: z.object({ name: z.string(), version: z.number().int() }),
  seeds: z.array(SeedBandSchema),
});
export type UnitSpec = z.infer<typeof UnitSpecSchema>;

export const EvidenceUnitV1Schema = z.object({
  kind: z.literal('imep.evidence-unit'),
  version: z.literal(1),
  id: UnitIdSchema,
  status: z.enum(STORED_STATUSES),
  createdAt: z.string(),
  createdBy: OperatorSchema,
  spec: UnitSpecSchema.nullable(),
});
export type EvidenceUnit = z.infer<typeof EvidenceUnitV1Schema>;
