/**
 * A slot's memory for a `structured-pcmb` bank (manifest.ts): one StructuredBank. A read queries the current scope
 * with the step's query key as all three keys (cognitive, perceptual, state signature; the selector's gate and top-k
 * decide); a write records (keys = query key, payload `leaf` = write candidate, every other payload field a
 * one-element zero) only when the step's writeGate > 0.
 *
 * Scopes: `beginScope(scope)` empties the bank and makes `scope` current until `endScope`; with persistence
 * 'across-attempts' the scope's records survive `reset` (attempt 1's records reach attempt 2), with 'within-episode'
 * (the default) every `reset` empties the scope. Without beginScope, each episode is its own scope.
 */
import { PAYLOAD_FIELDS, StructuredBank, type Payload, type PayloadField, type ReadHook } from '../../banks/index.js';
import type { FloatTensor } from '../../core/index.js';
import type { StructuredBankSpec } from '../manifest.js';
import { sliceRow, type EncodedRows, type SlotMemory, type SlotRead } from './slot-memory.js';

export type Persistence = 'within-episode' | 'across-attempts';

const ZERO: Readonly<Float32Array> = new Float32Array(1);

export class StructuredSlotMemory implements SlotMemory {
  readonly bank: StructuredBank;
  /** The scope set by beginScope, or null (then each episode is its own scope). */
  private current: string | null = null;
  /** The episode the slot runs (reset), or null before the first. */
  private episode: string | null = null;

  constructor(
    private readonly spec: StructuredBankSpec,
    private readonly persistence: Persistence,
    private readonly keyDim: number,
    private readonly d: number,
  ) {
    this.bank = new StructuredBank({
      capacity: spec.capacity,
      k: spec.k,
      gate: spec.gate,
      weights: spec.weights,
      mergeThreshold: spec.mergeThreshold,
    });
  }

  setReadHook(hook: ReadHook): void {
    this.bank.setReadHook(hook);
  }

  scope(): string | null {
    return this.current ?? this.episode;
  }

  beginScope(scope: string): void {
    this.bank.clearAll();
    this.current = scope;
  }

  endScope(scope: string): void {
    this.bank.clearScope(scope, { keepClock: false });
    if (this.current === scope) this.current = null;
  }

  reset(episode: string): void {
    if (this.current === null) this.bank.clearAll();
    else if (this.persistence === 'within-episode') this.bank.clearScope(this.current, { keepClock: false });
    this.episode = episode;
  }

  read(rows: EncodedRows, row: number, decisionStep: boolean): SlotRead {
    const key = this.keyOf(rows, row);
    return this.bank.query(
      this.scope() as string,
      { cognitiveKey: key, perceptualKey: key, stateSignature: key },
      { episode: this.episode as string, decisionStep },
    );
  }

  write(rows: EncodedRows, row: number, _step: number): void {
    if (!(((rows.gates as Float32Array)[row] as number) > 0)) return;
    const key = this.keyOf(rows, row);
    const value: FloatTensor = { dtype: 'float32', shape: [this.d], data: sliceRow(rows.candidates, row, this.d) };
    this.bank.write(this.scope() as string, {
      keys: { cognitiveKey: key, perceptualKey: key, stateSignature: key },
      payload: this.payloadOf(value),
      sourceEpisode: this.episode as string,
    });
  }

  /** A copy of the row's query key (the bank keeps the keys of what it stores). */
  private keyOf(rows: EncodedRows, row: number): FloatTensor {
    return { dtype: 'float32', shape: [this.keyDim], data: sliceRow(rows.queryKeys, row, this.keyDim) };
  }

  /** A record's payload: the leaf field carries the write candidate, the others a one-element zero. */
  private payloadOf(value: FloatTensor): Payload {
    const leaf = this.spec.leaf as PayloadField;
    const out = {} as Record<PayloadField, FloatTensor>;
    for (const f of PAYLOAD_FIELDS) out[f] = f === leaf ? value : { dtype: 'float32', shape: [1], data: ZERO };
    return out;
  }
}
