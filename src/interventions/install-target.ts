/**
 * The bank surface the interventions need, declared structurally so this folder never imports the bank
 * class (src/banks builds StructuredBank against the same shape).
 */
import type { BankRecord, ReadHook } from '../banks/index.js';

export type BankWriteKind = 'insert' | 'merge' | 'evict';

export interface BankWriteEvent {
  readonly kind: BankWriteKind;
  readonly scope: string;
  readonly slot: number;
  /** The scope's query clock when the write happened. */
  readonly queryIndex: number;
}

export interface InstallTarget {
  records(scope: string): readonly BankRecord[];
  /** Throws unless every identity and every key is byte-identical to the stored record's. */
  replaceRecords(scope: string, records: readonly BankRecord[]): void;
  clearScope(scope: string, options: { keepClock: boolean }): void;
  clock(scope: string): number;
  setReadHook(hook: ReadHook): void;
  /** Registers a write listener; returns a function that removes it. */
  onWrite(listener: (e: BankWriteEvent) => void): () => void;
}
