/**
 * src/evidence/attestation — what a reviewer checks with stock tools (public face).
 *   statement.ts  the in-toto Statement v1 of a stage, its predicate (IMEP_PREDICATE_TYPE) and verdict summary
 *   write.ts      attestations/<record>.minisig and <record>.intoto.json, written at seal / adjudication / closeout
 */
export {
  IN_TOTO_STATEMENT_TYPE,
  IMEP_PREDICATE_TYPE,
  ATTESTATION_STAGES,
  stageStatement,
  summarizeVerdicts,
} from './statement.js';
export type { AttestationStage, InTotoStatement, StagePredicate, VerdictSummary } from './statement.js';
export {
  ATTESTATIONS_DIR,
  attestedFile,
  attestationPaths,
  adjudicationVerdicts,
  writeStageAttestations,
} from './write.js';
export type { StageAttestationInput } from './write.js';
