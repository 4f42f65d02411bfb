/**
 * A slot's memory for an `episode` bank (manifest.ts): one EpisodeBank, no scopes — every begin / end of a scope and
 * every episode empties it — read every step with the step's query key (top-k by cosine over the writes of steps
 * 0..t−1 of this episode) and written every step with its write candidate.
 */
import { EpisodeBank, type EpisodeQueryOptions, type ReadHook } from '../../banks/index.js';
import type { FloatTensor } from '../../core/index.js';
import type { EpisodeBankSpec } from '../manifest.js';
import type { EncodedRows, SlotMemory, SlotRead } from './slot-memory.js';

/** Episode-bank read options: the policy copies each leaf into the memory input at once and writes none. */
const READ_DECISION: EpisodeQueryOptions = Object.freeze({ decisionStep: true, leafViews: true });
const READ_OTHER: EpisodeQueryOptions = Object.freeze({ decisionStep: false, leafViews: true });

/** Fills the float32 tensor `t` with row i of a row-major batch (t.data.length values per row) and returns it. */
function copyRowInto(t: FloatTensor, data: Float32Array, i: number): FloatTensor {
  const out = t.data as Float32Array;
  const n = out.length;
  const off = i * n;
  for (let j = 0; j < n; j++) out[j] = data[off + j] as number;
  return t;
}

export class EpisodeSlotMemory implements SlotMemory {
  readonly bank: EpisodeBank;
  /**
   * The one key and the one write candidate handed to the bank, refilled for each read / write (a copy of its row):
   * EpisodeBank.query reads the key and keeps nothing; EpisodeBank.write copies the value it stores.
   */
  private readonly keyScratch: FloatTensor;
  private readonly valueScratch: FloatTensor;

  constructor(spec: EpisodeBankSpec, keyDim: number, d: number) {
    this.bank = new EpisodeBank({
      bank: spec.name,
      capacity: spec.capacity,
      k: spec.k,
      consolidation: spec.consolidation,
    });
    this.keyScratch = { dtype: 'float32', shape: Object.freeze([keyDim]), data: new Float32Array(keyDim) };
    this.valueScratch = { dtype: 'float32', shape: Object.freeze([d]), data: new Float32Array(d) };
  }

  setReadHook(hook: ReadHook): void {
    this.bank.setReadHook(hook);
  }

  scope(): null {
    return null;
  }

  beginScope(scope: string): void {
    this.bank.reset(`${scope}/begin`);
  }

  endScope(scope: string): void {
    this.bank.reset(`${scope}/end`);
  }

  reset(episode: string): void {
    this.bank.reset(episode);
  }

  read(rows: EncodedRows, row: number, decisionStep: boolean): SlotRead {
    const key = copyRowInto(this.keyScratch, rows.queryKeys, row);
    return this.bank.query(key, decisionStep ? READ_DECISION : READ_OTHER);
  }

  write(rows: EncodedRows, row: number, step: number): void {
    this.bank.write(step, copyRowInto(this.valueScratch, rows.candidates, row));
  }
}
