/**
 * What a reader must be told about the read-path canary (gate kind read-canary, gates.ts): whether it ran and what it
 * found, in one line, for the report's summary and gate table and the CLI's adjudication output. A protocol without a
 * read-canary gate gets a line saying so — silence would let a policy that ignores what memory.read returns (one that
 * keeps its own copy of its memory) pass every read intervention as "memory does not matter" unnoticed.
 *
 * A validity check that failed (informative-removal: the removed units differ from the kept ones; blocked-reads:
 * decisions under blocking do not follow from what the policy was given) adds one line each, after the canary's, with
 * its reason in words and what it does (withheld or qualified): the verdict lines alone would only say 'invalid'.
 */
import type { GateResult } from './types.js';

function validityLines(gates: readonly GateResult[]): string[] {
  return gates
    .filter((g) => (g.kind === 'informative-removal' || g.kind === 'blocked-reads') && !g.passed)
    .map((g) => `${g.gate} (${g.onFail === 'invalid' ? 'numbers withheld' : 'verdicts qualified'}): ${g.detail}`);
}

export function readCanaryNote(gates: readonly GateResult[]): string {
  const canaries = gates.filter((g) => g.kind === 'read-canary');
  const canary =
    canaries.length === 0
      ? 'read-path canary: NOT RUN — the protocol registers no read-canary gate, so nothing shows that the policy acts on what memory.read returns (a policy keeping its own copy of its memory would pass every read intervention unchanged)'
      : canaries.map((g) => `read-path canary ${g.gate}: ${g.passed ? 'passed' : 'FAILED'} — ${g.detail}`).join('; ');
  return [canary, ...validityLines(gates)].join('\n  ');
}
