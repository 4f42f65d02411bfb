/**
 * One batch slot's memory as the external-memory policy (../memory-policy.ts) sees it: a bank with its scopes, read
 * with the step's query key and written with the step's write candidate. One implementation per bank kind a
 * checkpoint's manifest may declare (`bank.kind`): episode-slot-memory.ts (`episode`), structured-slot-memory.ts
 * (`structured-pcmb`); the policy uses only this interface.
 */
import type { EpisodeBank, ReadContext, ReadHook, RetrievedItem, StructuredBank } from '../../banks/index.js';

/** What one read gave: the items the read hook returned (in memory-slot order) and the read's context. */
export interface SlotRead {
  readonly items: readonly RetrievedItem[];
  readonly ctx: ReadContext;
}

/** Rows of one batched encode run (row-major float32, one row per slot of the call). */
export interface EncodedRows {
  /** queryKey [B, keyDim]. */
  readonly queryKeys: Float32Array;
  /** writeCandidate [B, d]. */
  readonly candidates: Float32Array;
  /** writeGate [B] where the encode graph has one (structured banks), else undefined. */
  readonly gates: Float32Array | undefined;
}

export interface SlotMemory {
  /** The slot's bank, for inspection and installation (its class says its kind). */
  readonly bank: EpisodeBank | StructuredBank;
  /** Sets the bank's read hook (the intervention point). */
  setReadHook(hook: ReadHook): void;
  /** The scope the slot's next reads and writes belong to, or null where the bank has no scopes (episode banks). */
  scope(): string | null;
  /** Empties the bank at a scope's start (a structured bank makes `scope` current). */
  beginScope(scope: string): void;
  /** Empties the bank at a scope's end (a structured bank forgets the scope). */
  endScope(scope: string): void;
  /** Starts episode `episode` in the slot (what it empties depends on the bank kind and its persistence). */
  reset(episode: string): void;
  /** Reads the bank through its hook with row `row` of the encoded query keys. */
  read(rows: EncodedRows, row: number, decisionStep: boolean): SlotRead;
  /** Writes row `row` of the encoded write candidates at elapsed step `step` (read-before-write: after the read). */
  write(rows: EncodedRows, row: number, step: number): void;
}

/** A copy of row i (n values) of a row-major batch. */
export function sliceRow(data: Float32Array, i: number, n: number): Float32Array {
  return data.slice(i * n, (i + 1) * n);
}
