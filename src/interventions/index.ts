/**
 * Public face of the interventions layer: registered condition kinds (the A/N/O/C/U/S/T ladder built in, others
 * registered with registerConditionKind), the one factory, installation, traces and coverage.
 *   condition-kind.ts kinds/   the condition kinds: their registry and the built-in entries, one file per kind
 *   condition.ts            the one factory: a condition spec → its read hook / point action (interventionHook)
 *   leaf-operator.ts        what every per-leaf operator is; reference / no-access / oracle / replicate hooks
 *   one-ulp.ts permute.ts resample.ts   U, S_π, T_μ as small operators over ulp.ts and normal.ts
 *   donor-swap.ts donor-assignment.ts read-swap*.ts   S/T donors: assignment, installation, read-time swaps
 *   install*.ts read-hook.ts   installation on a bank, the operator read hook
 *   trace.ts trace-writer.ts coverage.ts gates.ts digest.ts   what a run records and checks
 *   kernels/                the hand-assembled WebAssembly (SIMD) fast paths of U and S_π, behind kernels/index.ts
 */
export {
  ULP_DIRECTIONS,
  nextUp,
  nextDown,
  nextUpBits,
  nextDownBits,
  stepUlp,
  stepUlpBits,
  stepTensorUlp,
  isFiniteBits,
} from './ulp.js';
export type { UlpDirection, NarrowDtype, UlpTensorResult } from './ulp.js';
export { applyToItems, applyToLeaves, applyToPayload, emptyLeafStats } from './leaf-operator.js';
export type { LeafOperator, LeafOperatorCondition, LeafStats, RegisteredParams } from './leaf-operator.js';
export { DIGEST_CHARS, itemDigest, leavesDigest, payloadDigest, readDigest } from './digest.js';
export { referenceHook } from './reference.js';
export { blockHook, clearAtPoint } from './no-access.js';
export type { ClearRecord } from './no-access.js';
export { oracleHook, fixedOracle } from './oracle.js';
export type { OracleSource } from './oracle.js';
export { replicateHook } from './replicate.js';
export { DEFAULT_ULP_DIRECTION, oneUlpLeaf, oneUlpOperator } from './one-ulp.js';
export { permuteLeaf, permuteOperator } from './permute.js';
export { finiteMoments, resampleLeaf, resampleOperator } from './resample.js';
export type { Moments } from './resample.js';
export { standardNormal, fillStandardNormal } from './normal.js';
export { orderForInstallation, swapPayloads } from './donor-swap.js';
export type { DonorShort, SwapPair, SwapResult } from './donor-swap.js';
export { assignDonors } from './donor-assignment.js';
export type { DonorAssignment, DonorAssignmentEntry, DonorMode, DonorUnit } from './donor-assignment.js';
export type { BankWriteEvent, BankWriteKind, InstallTarget } from './install-target.js';
export { installDonorSwaps, installPayloads, snapshotRecords } from './install.js';
export type { InstallResult, InstallTransform, InstallationRecord, InstalledRecordDigest } from './install.js';
export { readHook } from './read-hook.js';
export type { OperatorReadHook, ReadHookStats } from './read-hook.js';
export { conditionLabel, interventionHook } from './condition.js';
export type { InterventionBookkeeping, InterventionContext, InterventionHandle, PointOutcome } from './condition.js';
export { conditionKinds, registerConditionKind } from './condition-kind.js';
export type { ConditionKind, ConditionMode, ConditionOperator, ConditionSpec } from './condition-kind.js';
export { conditionKindOf, conditionSeed, pointLabel, toConditionSpec } from './condition-spec.js';
export { BUILTIN_CONDITION_KINDS } from './kinds/index.js';
export { U_DEFAULT } from './kinds/one-ulp.js';
export { SCRAMBLE_VERSIONS, scrambleOperator, type ScrambleVersion } from './kinds/scramble.js';
export { TraceRecorder } from './trace.js';
export type { SelectedRecordTrace, SubstitutionMode, TraceEntry, TraceRecorderOptions } from './trace.js';
export { survivalCoverage } from './coverage.js';
export type { CoverageOptions, CoverageResult, UnitCoverage } from './coverage.js';
export {
  gateEmptyReadPositions,
  gateEmptyReadsInBlock,
  gateInstallationChanged,
  gateReadsInReference,
  gateSubstitutedReadsChanged,
} from './gates.js';
export type { EmptyPositionOptions, GateName, GateResult } from './gates.js';
export {
  TRACE_FORMAT_VERSION,
  TRACE_MAGIC,
  TraceWriter,
  isTraceEntry,
  readTrace,
  readTraceHeader,
} from './trace-writer.js';
export type { TraceHeader, TraceMeta, TraceReadOptions, TraceWriterOptions } from './trace-writer.js';
export { PrePointCapture, alignByRank, type PrePointItems } from './read-swap.js';
export { checkDonorWrites, readSwapAtStepHook, type PrePointWrites, type SwapCounters } from './read-swap-at-step.js';
