/**
 * precommit.json: what froze the protocol and plan and what will produce the evidence (code identity, checkpoint and
 * simulator input digests, a hosted policy's identity, a policy server's metadata, the seed bands). Written by transitions/precommit.ts;
 * self-hashed, and signed when the unit is.
 */
import { z } from 'zod';
import { ArrivalOrderCommitmentSchema } from './arrival-order-record.js';
import { HostedPolicyRecordSchema } from './hosted-policy-record.js';
import { PolicyServerRecordSchema } from './policy-server-record.js';
import { CodeIdentitySchema, SeedBandSchema } from './evidence-unit.js';
import { OperatorSchema, Sha256HexSchema } from '../unit-layout.js';
import { SignatureBlockSchema } from '../../signing/index.js';

export const PrecommitRecordSchema = z.object({
  kind: z.literal('imep.precommit'),
  version: z.literal(1),
  unitId: z.string(),
  protocolFile: z.literal('protocol.json'),
  protocolHash: Sha256HexSchema,
  planFile: z.literal('plan.json'),
  planHash: z.string().min(1),
  planSha256: Sha256HexSchema,
  plannedRows: z.number().int().positive(),
  code: CodeIdentitySchema,
  checkpointHashes: z.record(z.string(), Sha256HexSchema),
  /** Digests of files the simulator reads (e.g. simulator.replayDir: src/campaign/simulator-inputs.ts); absent when none. */
  simulatorHashes: z.record(z.string(), Sha256HexSchema).optional(),
  /** A protocol's hosted policy (runtime remote): its host and identity (src/campaign/remote-policy-provider.ts); absent otherwise. */
  hostedPolicy: HostedPolicyRecordSchema.optional(),
  /** A protocol's policy server (runtime openpi-websocket | vla-eval): its endpoint and metadata (src/campaign/server-policy-record.ts); absent otherwise. */
  policyServer: PolicyServerRecordSchema.optional(),
  /** The SHA-256 of the unit's arrival-order key file (arrival-order.ts): units with a hosted policy; absent otherwise. */
  arrivalOrder: ArrivalOrderCommitmentSchema.optional(),
  seeds: z.array(SeedBandSchema),
  reuse: z.array(z.string()),
  createdAt: z.string(),
  operator: OperatorSchema,
  /** Ed25519 signature by the operator's key (src/signing); absent in units written before signing. */
  signature: SignatureBlockSchema.optional(),
  sha256: Sha256HexSchema,
});
export type PrecommitRecord = z.infer<typeof PrecommitRecordSchema>;
