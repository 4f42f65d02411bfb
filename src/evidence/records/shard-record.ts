/**
 * A shard folder's `shard.json` (`<unit>.shards/shard-i-of-N/`, version 2): which unit and plan it belongs to, its
 * place in the split, the rows it holds and who ran it. Written by src/campaign/shard.ts, read by src/cluster's merge.
 */
import { z } from 'zod';
import { OperatorSchema } from '../unit-layout.js';

/** The shard folder's `shard.json` (version 2); src/cluster reads it through this one schema. */
export const ShardRecordSchema = z.object({
  kind: z.literal('imep.shard'),
  version: z.literal(2),
  unitId: z.string(),
  protocolHash: z.string(),
  planHash: z.string(),
  index: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  rows: z.number().int().nonnegative(),
  /** Everyone who ran or resumed this shard, in order of first run (one entry per id). */
  operators: z.array(OperatorSchema).min(1),
  complete: z.boolean(),
});
export type ShardRecord = z.infer<typeof ShardRecordSchema>;
