/**
 * What precommit records about a protocol's policy server (`policy: { runtime: openpi-websocket | vla-eval }`): the
 * server's endpoint and what it said first (src/campaign/server-policy-record.ts), frozen so a later run of the unit
 * refuses a server that now reports anything else.
 */
import { z } from 'zod';
import { Sha256HexSchema } from '../unit-layout.js';

/**
 * precommit.json `policyServer`. `metadata`: openpi's metadata frame or vla-eval's HELLO payload as JSON, every
 * ndarray replaced by { dtype, shape, sha256 } (the SHA-256 of its bytes); `digest` = SHA-256 of its canonical JSON.
 */
export const PolicyServerRecordSchema = z.object({
  runtime: z.string().min(1),
  endpoint: z.string().min(1),
  metadata: z.record(z.string(), z.json()),
  digest: Sha256HexSchema,
});
export type PolicyServerRecord = z.infer<typeof PolicyServerRecordSchema>;
