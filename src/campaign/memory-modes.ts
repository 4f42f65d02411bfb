/**
 * The compile-time link between the protocol's list of consolidation modes (src/protocol/schema.ts
 * MEMORY_CONSOLIDATION_MODES, which keeps protocol depending on core only) and the banks' own (src/banks
 * token-merge.ts CONSOLIDATION_MODES): adding or removing a mode on either side fails to compile here until the
 * other follows.
 */
import type { CONSOLIDATION_MODES } from '../banks/index.js';
import type { MemoryConfig } from '../protocol/index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type ProtocolModes = Extract<MemoryConfig, { bank: 'episode-local' }>['consolidation'];
type BankModes = (typeof CONSOLIDATION_MODES)[number];
const MODES_MATCH: Same<ProtocolModes, BankModes> = true;
void MODES_MATCH;
