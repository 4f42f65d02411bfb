/**
 * Property: a malformed protocol file either loads (when the mutation left it valid) or is refused with
 * an ImepError (E_PROTOCOL_INVALID) whose one line names the file — never another exception type,
 * never a hang (each case is bounded in time). Seeded; `IMEP_FUZZ_SEED` / `IMEP_FUZZ_RUNS` explore more.
 * The report script (scripts/fuzz-report.ts) runs thousands of cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseProtocol } from '../../src/protocol/load.js';
import { isImepError } from '../../src/core/errors.js';
import { KNOWN_PROTOCOL_FINDINGS, knownFinding } from './known-findings.js';
import { emptyTally, formatTally, record } from './outcome.js';
import {
  protocolCaseArb,
  runProtocolCase,
  shippedProtocols,
  YAML_HAZARDS,
  type ProtocolCase,
} from './protocol-cases.js';

const SEED = Number(process.env['IMEP_FUZZ_SEED'] ?? 20260101);
const RUNS = Number(process.env['IMEP_FUZZ_RUNS'] ?? 250);
const FILE = 'protocols/fuzzed-protocol.yaml';
const CASE_MS = 5000;

function check(c: ProtocolCase, tally: ReturnType<typeof emptyTally>): void {
  const t0 = performance.now();
  const o = runProtocolCase(c, FILE);
  const ms = performance.now() - t0;
  const known = knownFinding(o, KNOWN_PROTOCOL_FINDINGS);
  record(tally, o, ms, `${c.source}: ${c.label}`, known);
  if (o.kind === 'crash' && known === null) throw new Error(`${c.source}: ${c.label}: ${o.reason}`);
  if (ms > CASE_MS) throw new Error(`${c.source}: ${c.label}: took ${ms.toFixed(0)} ms (bound ${CASE_MS})`);
}

describe('protocol files under fuzzing', () => {
  it('the shipped protocols load', () => {
    for (const p of shippedProtocols()) expect(() => parseProtocol(p.text, p.name)).not.toThrow();
  });

  it('every YAML hazard, on every shipped protocol, loads or is refused in one line naming the file', () => {
    const tally = emptyTally();
    for (const p of shippedProtocols()) {
      for (const h of YAML_HAZARDS) check({ source: p.name, label: h.name, bytes: Buffer.from(h.text(p.text)) }, tally);
    }
    console.log(formatTally('protocol hazards', tally));
    expect(tally.crashes + tally.hangs).toBe(0);
    expect(tally.refused).toBeGreaterThan(0);
  });

  it(`${RUNS} seeded mutations (deleted keys, wrong types, strings, duplicates, truncation, garbage, nesting, huge numbers) load or are refused cleanly`, () => {
    const tally = emptyTally();
    fc.assert(
      fc.property(protocolCaseArb, (c) => check(c, tally)),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    console.log(formatTally(`protocol mutations (seed ${SEED})`, tally));
    expect(tally.refused).toBeGreaterThan(tally.cases / 2);
  });

  // Formerly known findings of the fuzzers, fixed; kept as regression tests.
  it('an undefined YAML alias is refused as E_PROTOCOL_INVALID', () => {
    const base = shippedProtocols()[0]!.text;
    let error: unknown;
    try {
      parseProtocol(`${base}\nref: *nowhere\n`, FILE);
    } catch (e) {
      error = e;
    }
    expect(isImepError(error) && error.code).toBe('E_PROTOCOL_INVALID');
  });

  it('a key with a line break is refused in ONE line', () => {
    let line = '';
    try {
      parseProtocol(`"a\\nb": 1\n${shippedProtocols()[0]!.text}`, FILE);
    } catch (e) {
      line = isImepError(e) ? e.oneLine() : String(e);
    }
    expect(line).toContain(FILE);
    expect(line).not.toMatch(/[\r\n\u2028\u2029]/);
  });
});
