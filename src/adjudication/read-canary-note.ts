/**
 * What a reader must be told about the read-path canary (gate kind read-canary, gates.ts): whether it ran and what it
 * found, in one line, for the report's summary and gate table and the CLI's adjudication output. A protocol without a
 * read-canary gate gets a line saying so — silence would let a policy that ignores what memory.read returns (one that
 * keeps its own copy of its memory) pass every read intervention as "memory does not matter" unnoticed.
 */
import type { GateResult } from './types.js';

export function readCanaryNote(gates: readonly GateResult[]): string {
  const canaries = gates.filter((g) => g.kind === 'read-canary');
  if (canaries.length === 0) {
    return 'read-path canary: NOT RUN — the protocol registers no read-canary gate, so nothing shows that the policy acts on what memory.read returns (a policy keeping its own copy of its memory would pass every read intervention unchanged)';
  }
  return canaries.map((g) => `read-path canary ${g.gate}: ${g.passed ? 'passed' : 'FAILED'} — ${g.detail}`).join('; ');
}
