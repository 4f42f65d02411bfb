/**
 * The external-memory policy's slot memories, one per bank kind a checkpoint declares, behind one interface.
 *   slot-memory.ts             SlotMemory: scopes, read with a query key, write a candidate
 *   episode-slot-memory.ts     `episode` banks (EpisodeBank, every step written)
 *   structured-slot-memory.ts  `structured-pcmb` banks (StructuredBank, scopes, gated writes)
 */
import type { BankSpec } from '../manifest.js';
import { EpisodeSlotMemory } from './episode-slot-memory.js';
import type { SlotMemory } from './slot-memory.js';
import { StructuredSlotMemory, type Persistence } from './structured-slot-memory.js';

export type { EncodedRows, SlotMemory, SlotRead } from './slot-memory.js';
export { EpisodeSlotMemory } from './episode-slot-memory.js';
export { StructuredSlotMemory, type Persistence } from './structured-slot-memory.js';

/** A slot's memory for the bank a checkpoint declares (keys of keyDim values, write candidates of d). */
export function slotMemoryFor(spec: BankSpec, persistence: Persistence, keyDim: number, d: number): SlotMemory {
  return spec.kind === 'episode'
    ? new EpisodeSlotMemory(spec, keyDim, d)
    : new StructuredSlotMemory(spec, persistence, keyDim, d);
}
