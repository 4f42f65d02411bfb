/** Public face of the memory banks. */
export { cosine, cosineOfUnits, dot64, isDegenerate, unitVector } from './cosine.js';
export {
  DEFAULT_SELECTOR_CONFIG,
  prepareKeys,
  resolveSelectorConfig,
  selectPrepared,
  selectRecords,
} from './selector.js';
export type {
  PreparedKeys,
  SelectableRecord,
  Selection,
  SelectionPick,
  SelectionReason,
  SelectorCandidate,
  SelectorConfig,
  SelectorConfigInput,
  SelectorWeights,
} from './selector.js';
export {
  DEFAULT_CAPACITY,
  DEFAULT_MERGE_THRESHOLD,
  MERGE_OVERWRITTEN_KEYS,
  PCMB_BANK_NAME,
  StructuredBank,
} from './structured-bank.js';
export type {
  QueryOptions,
  QueryResult,
  ResolvedStructuredBankConfig,
  StructuredBankConfig,
  StructuredQuery,
  WriteCandidate,
  WriteEvent,
  WriteListener,
} from './structured-bank.js';
export { EpisodeBank } from './episode-bank.js';
export type {
  EpisodeBankConfig,
  EpisodeConsolidation,
  EpisodeEntry,
  EpisodeQueryOptions,
  EpisodeQueryResult,
  EpisodeWriteResult,
  ResolvedEpisodeBankConfig,
} from './episode-bank.js';
export { CONSOLIDATION_MODES, averageFeatures, mostSimilarAdjacentPair } from './token-merge.js';
export type { AdjacentPair, ConsolidationMode } from './token-merge.js';
export { TextMemory, identityTextReadHook } from './text-memory.js';
export type {
  AppendOutcome,
  TextLogEntry,
  TextReadHook,
  TextReadOptions,
  TextRecord,
  TextRecordInput,
  TextRevocation,
} from './text-memory.js';
export {
  MERGE_OVERWRITTEN_FIELDS,
  PAYLOAD_FIELDS,
  compareByTimestepSlot,
  identityReadHook,
  recordTuple,
} from './record.js';
export type {
  BankRecord,
  Payload,
  PayloadField,
  ReadContext,
  ReadHook,
  RecordIdentity,
  RecordKeys,
  RecordTuple,
  RetrievedItem,
} from './record.js';
