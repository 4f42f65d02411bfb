/**
 * src/evidence — the evidence-unit store and its lifecycle (public face).
 * Layout: unit-layout.ts. State machine: lifecycle.ts. Typed handles: unit.ts. Every record's schema (and the
 * adjudication document's, with its one reader `readAdjudication`): records/ (records/index.ts). Writing:
 * transitions/. Checking: verify/. Reading files once and verified: io/verified-read.ts.
 */
export * from './records/index.js';
export { UNIT_FILES, UNIT_SCHEMA_VERSION, STORED_STATUSES, unitPaths } from './unit-layout.js';
export type { Operator } from './unit-layout.js';
export {
  UNIT_STATES,
  UNIT_ACTIONS,
  ACTION_RULES,
  NEXT_COMMAND,
  refusal,
  assertAllowed,
  isSealedState,
} from './lifecycle.js';
export type { UnitState, UnitAction } from './lifecycle.js';
export { readUnitState } from './unit-state.js';
export type { UnitSnapshot } from './unit-state.js';

export { createUnit, loadUnit } from './unit.js';
export type {
  Unit,
  CreatedUnit,
  PrecommittedUnit,
  RunningUnit,
  OpenUnit,
  RunCompleteUnit,
  SealedUnit,
  AdjudicatedUnit,
  CrossCheckedUnit,
  ClosedUnit,
} from './unit.js';

export { precommit, readPrecommit, loadFrozenProtocol, assertProtocolUnchanged } from './transitions/precommit.js';
export type { PrecommitInput, FrozenProtocol } from './transitions/precommit.js';
export { startRun, resumeRun, completeRun, failRun, readRunRecord } from './transitions/formal-run.js';
export type { RunOptions, ResumeReport, FailRunInput, FormalRun } from './transitions/formal-run.js';
export { startSmallRun, listSmallRuns } from './small-run.js';
export type { SmallRun, SmallRunKind, SmallRunOptions } from './small-run.js';
export type { SeqLine } from './io/row-writer.js';

export { seal, readSeal } from './transitions/seal.js';
export type { SealResult, SealOptions } from './transitions/seal.js';
export { verifyUnit, assertUnitIntact, describeIssue, TAMPER_KINDS } from './verify/verify.js';
export type { VerifyResult, VerifyOk, VerifyFailed, VerifyIssue, TamperKind, VerifyOptions } from './verify/verify.js';
export { MERKLE_SCHEME, merkleRoot, merkleLeaf } from './manifest.js';
export type { ManifestEntry } from './manifest.js';
export { adjudicate, crossCheck, readAdjudications, readCrossChecks } from './transitions/post-seal-write.js';
export type { AdjudicateInput, CrossCheckInput } from './transitions/post-seal-write.js';
export { closeout } from './transitions/closeout-write.js';
export type { CloseoutInput } from './transitions/closeout-write.js';
export { amend, readAmendments, classifyAmendment } from './transitions/amend.js';
export type { AmendInput } from './transitions/amend.js';

export {
  DEFAULT_SEED_REGISTRY,
  registerSeeds,
  readSeedRegistry,
  findSeedOverlaps,
  describeOverlap,
} from './seed-registry.js';
export type { SeedRegistry, SeedRegistryEntry, SeedOverlap, RegisterSeedsInput } from './seed-registry.js';
export { unitStatus, formatStatus } from './status.js';
export type { UnitStatusSummary } from './status.js';
export { failureSummary, failureCodeLines, failureSectionLines } from './failure-summary.js';
export type { FailureSummary, FailureCodeSummary, FailureRowLike } from './failure-summary.js';
export { currentOperator, explicitOperator, checkAdjudicator } from './operator.js';
export type { SameOperatorOverride, OverrideRecord } from './operator.js';
export { detectCodeIdentity, detectPackageVersions } from './code-identity.js';

export {
  appendJsonLine,
  readJsonLines,
  readRows,
  resumePoint,
  repairTornTail,
  checkSeqOrder,
} from './io/durable-append.js';
export type { TornTail, RowsRead, SeqRow } from './io/durable-append.js';
export { writeFileAtomic, writeJsonAtomic } from './io/atomic-write.js';
export { listKeys, trustKeyFile, trustKeyFromUnit, revokeKey, embeddedKeys } from './verify/trust-store.js';
export type { StoredKey, EmbeddedKey } from './verify/trust-store.js';
export { checkUnitSignatures, chainRecordPaths } from './verify/unit-signatures.js';
export type { UnitSignatureOptions } from './verify/unit-signatures.js';
export { arrivalOrder, newArrivalKey, readArrivalKey } from './arrival-order.js';
export { fsyncDir, ioError, writeAll } from './io/atomic-write.js';
export { cutToCommittedRows } from './io/durable-append.js';
export { readRecord, selfHashOk, withSelfHash, writeRecord } from './io/record-file.js';
export { RowWriter } from './io/row-writer.js';
export { readSealed, readVerified, readVerifiedRecord, sealedSha256, type VerifiedUnit } from './io/verified-read.js';
export { sameOperatorOverride } from './operator.js';
export { notPlannedError, planMismatch } from './planned-rows.js';
export { readVerifiedAmendments } from './transitions/amend.js';
export { createUnitDir } from './transitions/create-unit.js';
export { OperatorSchema, UnitIdSchema, recordNumber } from './unit-layout.js';
export {
  lockShard,
  lockUnit,
  processAlive,
  releaseLocksNow,
  setRemoteHolderCheck,
  setStopSignalOwner,
  slurmJobOf,
  type RemoteHolderCheck,
} from './unit-lock.js';
export { listAdjudicationRecords, requireAction } from './unit-state.js';
export { assertUnitVerified, parseExpectedRoot } from './verify/verify.js';
export {
  SEEN_DIR_ENV,
  SEEN_FORMAT,
  SEEN_VERSION,
  readSeen,
  rememberSeen,
  rollbackError,
  rollbackOf,
  seenDir,
  seenFile,
  type SeenEvent,
  type SeenAdjudication,
  type SeenLine,
  type SeenState,
} from './seen-store.js';
export { seenStateOfUnit, seenStateOfVerified } from './seen-state.js';
export { arrivalOrderIssues } from './verify/arrival-order.js';
export { simulatorEnvironmentOf, type SimulatorEnvironment } from './records/simulator-environment.js';
export { checkFrozenPower, MDE_EFFECT_TOLERANCE } from './frozen-power.js';
