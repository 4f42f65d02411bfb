/**
 * What precommit records about a protocol's hosted policy (`policy: { runtime: remote }`): the host that
 * served it and the identity it reported (src/campaign/remote-policy-provider.ts), frozen so a
 * later run refuses a changed policy.
 */
import { z } from 'zod';
import { Sha256HexSchema } from '../unit-layout.js';

/** precommit.json `hostedPolicy`: `digest` is the SHA-256 of the canonical JSON { name, version, memory, files }. */
export const HostedPolicyRecordSchema = z.object({
  runtime: z.literal('remote'),
  name: z.string(),
  host: z.object({ name: z.string(), version: z.string() }),
  version: z.string(),
  memory: z.object({
    bank: z.string(),
    banks: z.array(z.string()).optional(),
    k: z.number().int().nonnegative().optional(),
  }),
  files: z.array(z.object({ path: z.string(), bytes: z.number().int().nonnegative(), sha256: Sha256HexSchema })),
  digest: Sha256HexSchema,
});
export type HostedPolicyRecord = z.infer<typeof HostedPolicyRecordSchema>;
