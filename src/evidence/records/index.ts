/**
 * src/evidence/records — one zod schema per evidence record (types are their z.infer), the readers that branch on a
 * record's version, and nothing that writes. The store's transitions (../transitions) write them, ../verify checks
 * them, and every consumer (the adjudicator, the cross-check, the report) reads them through these schemas. The ones
 * users read are exported as JSON Schema to schemas/ (json-schemas.ts, scripts/export-protocol-schema.ts).
 *   unit.json            evidence-unit.ts (unit-header.ts reads and writes it)
 *   precommit.json       precommit-record.ts (hosted-policy-record.ts, arrival-order-record.ts: its parts)
 *   arrival-order.json   arrival-order-record.ts
 *   rows/rows.jsonl      episode-row.ts (and rows/timings.jsonl)
 *   rows/run.json        run-record.ts (simulator-environment.ts: a session's part)
 *   amendments.jsonl     amendment.ts
 *   seal.json            seal-record.ts
 *   traces/frames.jsonl  frames-line.ts
 *   <unit>.shards/…/shard.json   shard-record.ts
 *   adjudication/        post-seal-records.ts (adjudication-NNN.json, cross-check-NNN.json, closeout.json);
 *                        adjudication-document.ts (NNN/adjudication.json, with its sections in adjudication-*.ts),
 *                        adjudication-artifact.ts (reads it verified)
 */
export { ADJUDICATION_FILE, readAdjudicationArtifact } from './adjudication-artifact.js';
export {
  ADJUDICATION_KIND,
  ADJUDICATION_VERSION,
  AdjudicationDocumentSchema,
  AdjudicationDocumentV1Schema,
  adjudicationSchemaIssues,
  readAdjudication,
  readAdjudicationHeader,
  readAdjudicationText,
  type AdjudicationDocument,
  type AdjudicationSchemaIssue,
  type DeepReadonly,
} from './adjudication-document.js';
export {
  AvailableEstimandSchema,
  BootstrapInfoSchema,
  CohortSummarySchema,
  CountsSchema,
  ESTIMAND_KINDS,
  EstimandConditionsSchema,
  EstimandResultSchema,
  IntervalSchema,
  READOUTS,
  TaskThetaSchema,
  TestResultSchema,
  UnavailableEstimandSchema,
} from './adjudication-estimands.js';
export {
  AmendmentListingSchema,
  ConditionSummarySchema,
  GATE_KINDS,
  GATE_ON_FAIL,
  GateResultSchema,
  GoNoGoResultSchema,
  GoNoGoRuleResultSchema,
  HolmFamilyResultSchema,
  HolmMemberSchema,
  ProtocolAmendmentListingSchema,
  QUESTIONS,
  QuestionResultSchema,
  RetrospectiveReadingSchema,
  VALIDITY_CHECK_KINDS,
} from './adjudication-sections.js';
export {
  CRITERION_RULES,
  DescriptiveVerdictSchema,
  ExcludedVerdictSchema,
  HoldsVerdictSchema,
  InvalidVerdictSchema,
  NotDetectedVerdictSchema,
  RoutedBoundSchema,
  UnresolvedVerdictSchema,
  VERDICT_WORDS,
  VerdictSchema,
} from './adjudication-verdicts.js';
export { AMENDMENT_CLASSES, AmendmentSchema, type Amendment, type AmendmentClass } from './amendment.js';
export {
  ARRIVAL_ORDER_FILE,
  ArrivalKeyFileSchema,
  ArrivalOrderCommitmentSchema,
  type ArrivalKeyFile,
  type ArrivalOrderCommitment,
} from './arrival-order-record.js';
export {
  EXECUTION_STATUSES,
  EpisodeRowSchema,
  EpisodeTimingSchema,
  ReadSummarySchema,
  type EpisodeRow,
  type EpisodeTiming,
  type ExecutionStatus,
  type ReadSummary,
} from './episode-row.js';
export {
  CodeIdentitySchema,
  EvidenceUnitV1Schema,
  SeedBandSchema,
  UnitSpecSchema,
  type CodeIdentity,
  type EvidenceUnit,
  type SeedBand,
  type UnitSpec,
} from './evidence-unit.js';
export { HostedPolicyRecordSchema, type HostedPolicyRecord } from './hosted-policy-record.js';
export { PolicyServerRecordSchema, type PolicyServerRecord } from './policy-server-record.js';
export {
  AdjudicationRecordSchema,
  CloseoutRecordSchema,
  CROSS_CHECK_OUTCOMES,
  CrossCheckRecordSchema,
  OverrideRecordSchema,
  type AdjudicationRecord,
  type CloseoutRecord,
  type CrossCheckOutcome,
  type CrossCheckRecord,
} from './post-seal-records.js';
export { PrecommitRecordSchema, type PrecommitRecord } from './precommit-record.js';
export {
  RUN_KINDS,
  RunRecordSchema,
  RunSessionSchema,
  runOperators,
  type RunKind,
  type RunRecord,
} from './run-record.js';
export { AmendmentsPrefixSchema, SealRecordSchema, type SealRecord } from './seal-record.js';
export {
  SimulatorEnvironmentSchema,
  simulatorEnvironmentOf,
  type SimulatorEnvironment,
} from './simulator-environment.js';
export { parseJsonText, parseRecordText } from './json-text.js';
export { FramesLineSchema, type FramesLine } from './frames-line.js';
export { ShardRecordSchema, type ShardRecord } from './shard-record.js';
export { readUnitHeader } from './unit-header.js';
export { RECORD_JSON_SCHEMAS, recordJsonSchemaText, recordSchemaPath } from './json-schemas.js';
