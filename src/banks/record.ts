import type { FloatTensor } from '../core/index.js';

/**
 * The record model shared by every bank and every intervention.
 *
 * A record has an identity (which never changes under an intervention), selection keys (which the
 * selector reads; interventions never touch them), and payload fields (the content an intervention
 * may replace). Payload fields are float tensors with an explicit dtype.
 */

/** The payload fields of a structured (PCMB-style) record, in their canonical order. */
export const PAYLOAD_FIELDS = [
  'cognitiveValue',
  'perceptualValue',
  'actionChunk',
  'preActionState',
  'postActionState',
  'interactionSignature',
  'outcomeEmbedding',
  'failureSignature',
] as const;
export type PayloadField = (typeof PAYLOAD_FIELDS)[number];

/** The payload fields that a merge overwrites (the other six survive a merge). */
export const MERGE_OVERWRITTEN_FIELDS = [
  'cognitiveValue',
  'perceptualValue',
] as const satisfies readonly PayloadField[];

export type Payload = Readonly<Record<PayloadField, FloatTensor>>;

/** The keys that selection reads. Interventions keep them byte-identical. */
export interface RecordKeys {
  readonly cognitiveKey: FloatTensor;
  readonly perceptualKey: FloatTensor;
  readonly stateSignature: FloatTensor;
}

/** Identity of a record: never changed by an intervention. */
export interface RecordIdentity {
  readonly slot: number;
  readonly scope: string;
  readonly sourceEpisode: string;
  /** The per-scope query clock value when the record was last written. */
  readonly timestep: number;
  /** Incremented by every merge into the slot. */
  readonly version: number;
}

export interface BankRecord extends RecordIdentity {
  readonly keys: RecordKeys;
  readonly payload: Payload;
}

/** The (slot, timestep, version) tuple used by survival coverage. */
export type RecordTuple = readonly [slot: number, timestep: number, version: number];

export function recordTuple(r: RecordIdentity): RecordTuple {
  return [r.slot, r.timestep, r.version];
}

/** Canonical order of records for installation: by (timestep, slot). */
export function compareByTimestepSlot(a: RecordIdentity, b: RecordIdentity): number {
  return a.timestep - b.timestep || a.slot - b.slot;
}

/**
 * What a read returns and what the intervention hook sees: a list of retrieved items, each with an
 * identity and named float leaves. Structured banks put their payload here; episode-local banks put
 * the single `feature` latent here (identity: slot = position, version 0, scope = episode id).
 */
export interface RetrievedItem {
  readonly identity: RecordIdentity;
  readonly leaves: Readonly<Record<string, FloatTensor>>;
}

/** A read request at one query of one episode. */
export interface ReadContext {
  /** Which bank is being read ("pcmb", "perceptual", "cognitive", "text"). */
  readonly bank: string;
  readonly scope: string;
  readonly episode: string;
  /** Per-scope query clock at this read. */
  readonly queryIndex: number;
  /** True when this query feeds a decision (every policy query is a decision step unless told otherwise). */
  readonly decisionStep: boolean;
  /** How many records were candidates (before top-k). */
  readonly candidateCount: number;
}

/**
 * The read hook every bank exposes: it receives the selected items and returns what the reader
 * gets. The identity hook returns its input unchanged (same object).
 */
export type ReadHook = (items: readonly RetrievedItem[], ctx: ReadContext) => readonly RetrievedItem[];

export const identityReadHook: ReadHook = (items) => items;
