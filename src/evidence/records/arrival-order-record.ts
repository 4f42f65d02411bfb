/**
 * arrival-order.json (the unit's arrival-order key, a hosted policy's units only) and precommit.json's commitment to
 * it (the SHA-256 of its bytes). What the key is for and how it is used: arrival-order.ts.
 */
import { z } from 'zod';
import { Sha256HexSchema } from '../unit-layout.js';

export const ARRIVAL_ORDER_FILE = 'arrival-order.json';
export const ARRIVAL_ORDER_VERSION = 1;

/** `arrival-order.json`: the key (64 hex digits). */
export const ArrivalKeyFileSchema = z.object({
  kind: z.literal('imep.arrival-order'),
  version: z.literal(ARRIVAL_ORDER_VERSION),
  key: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ArrivalKeyFile = z.infer<typeof ArrivalKeyFileSchema>;

/** precommit.json `arrivalOrder`: the SHA-256 of arrival-order.json's bytes (canonical JSON). */
export const ArrivalOrderCommitmentSchema = z.object({
  version: z.literal(ARRIVAL_ORDER_VERSION),
  file: z.literal(ARRIVAL_ORDER_FILE),
  sha256: Sha256HexSchema,
});
export type ArrivalOrderCommitment = z.infer<typeof ArrivalOrderCommitmentSchema>;
