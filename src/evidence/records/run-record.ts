import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { SimulatorEnvironmentSchema } from './simulator-environment.js';
import { OperatorSchema } from '../unit-layout.js';

/**
 * The run record (`run.json` next to a run's rows): which run, what kind, who started and resumed
 * it and when, and completion. It names every operator that ran the conditions, which is what the
 * adjudication-by-another-session check reads.
 */

export const RUN_KINDS = ['formal', 'probe', 'smoke'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

export const RunSessionSchema = z.object({
  /** 'shard': an operator who ran a shard of a cluster merge's rows (src/cluster/merge.ts adds one per operator). */
  action: z.enum(['start', 'resume', 'shard']),
  at: z.string(),
  operator: OperatorSchema,
  /** For a resume: the seq it resumed at, torn bytes truncated, side-file lines of uncommitted rows dropped. */
  resumedAtSeq: z.number().int().nonnegative().nullable(),
  tornBytes: z.number().int().nonnegative().nullable(),
  droppedSideLines: z.number().int().nonnegative().nullable(),
  /** A policy host this session started: how it was isolated (src/bridges/sandbox.ts), e.g. "isolation: none (…)". */
  policyIsolation: z.string().optional(),
  /** The simulator servers this session started or attached to: how they were isolated (src/bridges/simulator-sandbox.ts). */
  simulatorIsolation: z.string().optional(),
  /** The resource limits in force on the policy host this session started and what enforced each (src/bridges/resource-limits.ts). */
  policyLimits: z.string().optional(),
  /** The resource limits in force on the simulator servers this session started. */
  simulatorLimits: z.string().optional(),
  /** What the bridged simulator this session ran on reported about its stack (packages, renderer); absent for lite. */
  simulatorEnvironment: SimulatorEnvironmentSchema.optional(),
});
export type RunSession = z.infer<typeof RunSessionSchema>;

export const RunRecordSchema = z.object({
  kind: z.literal('imep.run'),
  version: z.literal(1),
  unitId: z.string(),
  runId: z.string(),
  runKind: z.enum(RUN_KINDS),
  label: z.string().nullable(),
  sessions: z.array(RunSessionSchema).min(1),
  completedAt: z.string().nullable(),
  rowsDone: z.number().int().nonnegative().nullable(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

export const RUN_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** `<kind>-<UTC timestamp>-<8 hex>`, e.g. `formal-20260101T120000Z-1a2b3c4d`. */
export function newRunId(kind: RunKind, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return `${kind}-${stamp}-${randomBytes(4).toString('hex')}`;
}

export function runOperators(record: RunRecord): string[] {
  return [...new Set(record.sessions.map((s) => s.operator.id))].sort();
}
