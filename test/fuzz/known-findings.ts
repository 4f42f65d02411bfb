/**
 * Defects the fuzzers found in code this suite does not own, with where the fix belongs. Outcomes that
 * match a known finding are counted apart (`known`) instead of failing the properties; each finding
 * also has a minimal reproduction run as `it.fails` in the fuzz tests, which starts FAILING (i.e. the
 * test reports "expected to fail") the day the defect is fixed — then delete the entry here and turn
 * that `it.fails` into `it`.
 */
import type { FuzzOutcome } from './outcome.js';

export interface KnownFinding {
  readonly id: string;
  /** Where the defect is and how it shows. */
  readonly where: string;
  readonly matches: (o: Extract<FuzzOutcome, { kind: 'crash' }>) => boolean;
}

/** Line breaks (\n, \r, U+2028, U+2029) echoed raw from the input into an error's one line. */
export const LINE_BREAK_IN_MESSAGE: KnownFinding = {
  id: 'line-break-in-message',
  where:
    'src/core/errors.ts ImepError.oneLine() (and ProtocolError.oneLine in src/protocol/issues.ts) print keys/values/JSON.parse snippets raw: a key "a\\nb" or a truncated manifest gives a multi-line message — escape line breaks in oneLine()',
  matches: (o) => o.category === 'multiline',
};

/** YAML alias problems thrown by yaml's toJS as ReferenceError instead of a protocol error. */
export const YAML_ALIAS_THROWS: KnownFinding = {
  id: 'yaml-alias-throws',
  where:
    'src/protocol/load.ts parseProtocol: doc.toJS({ maxAliasCount }) throws ReferenceError for an undefined alias ("*nowhere") or an alias bomb — wrap toJS and refuse with E_PROTOCOL_INVALID',
  matches: (o) => o.category === 'type' && /ReferenceError.*alias/i.test(o.reason),
};

/** A manifest string holding a lone surrogate passes the schema, then canonical hashing refuses it as E_INTERNAL. */
export const MANIFEST_LONE_SURROGATE: KnownFinding = {
  id: 'manifest-lone-surrogate',
  where:
    'src/chainbench/manifest-io.ts freezeManifest/manifestHash: a string with a lone surrogate ("\\ud800" in the JSON) is refused by canonical JSON with E_INTERNAL — hash with { code: \'E_MANIFEST_INVALID\' } (or refuse such strings in the schema)',
  matches: (o) => o.category === 'code' && /E_INTERNAL.*lone surrogate/.test(o.reason),
};

/** yaml's toJS prints a Node warning on stderr for a collection used as a key: the CLI's stderr is then 3 lines. */
export const YAML_WARNING_ON_STDERR: KnownFinding = {
  id: 'yaml-warning-on-stderr',
  where:
    'src/protocol/load.ts parseProtocol: a complex key ("? [a, b]") makes yaml emit "Warning: Keys with collection values will be stringified" on stderr — parse with { logLevel: \'error\' } or refuse non-scalar keys before toJS',
  matches: (o) => o.category === 'multiline' && /Keys with collection values/.test(o.reason),
};

// All four findings below were fixed (src/protocol/load.ts, ImepError.oneLine, src/chainbench/manifest-io.ts);
// the lists are empty so any recurrence counts as a crash. The definitions stay to document them.
export const FIXED_FINDINGS: readonly KnownFinding[] = [
  YAML_ALIAS_THROWS,
  LINE_BREAK_IN_MESSAGE,
  YAML_WARNING_ON_STDERR,
  MANIFEST_LONE_SURROGATE,
];
export const KNOWN_PROTOCOL_FINDINGS: readonly KnownFinding[] = [];
export const KNOWN_CLI_FINDINGS: readonly KnownFinding[] = [];
export const KNOWN_MANIFEST_FINDINGS: readonly KnownFinding[] = [];

export function knownFinding(o: FuzzOutcome | { kind: 'hang' }, known: readonly KnownFinding[]): KnownFinding | null {
  return o.kind === 'crash' ? (known.find((k) => k.matches(o)) ?? null) : null;
}
