/**
 * Malformed protocol files: mutations of the three shipped protocols (protocols/*.yaml) — deleted keys,
 * values of the wrong type, random and hostile strings, huge numbers, deep nesting (as parsed-tree
 * edits re-written as YAML), and truncation, binary garbage, flipped bits, duplicated keys, number
 * spellings YAML cannot hold, deep flow nesting, alias bombs, cyclic aliases, tags, multiple documents
 * (as text edits). The property: `parseProtocol` (the loader's core) either loads the file or throws an
 * ImepError (E_PROTOCOL_INVALID) whose one line names the file — never another exception, never a hang.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { parseProtocol } from '../../src/protocol/load.js';
import { applyTextMutation, applyTreeMutation, nastyStringArb, textMutationArb, treeMutationArb } from './mutate.js';
import { classifyThrown, type FuzzOutcome } from './outcome.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');

export interface ShippedProtocol {
  readonly name: string;
  readonly text: string;
  readonly tree: unknown;
}

let shipped: ShippedProtocol[] | undefined;

export function shippedProtocols(): readonly ShippedProtocol[] {
  shipped ??= readdirSync(join(REPO_ROOT, 'protocols'))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const text = readFileSync(join(REPO_ROOT, 'protocols', f), 'utf8');
      return { name: f, text, tree: parseYaml(text) as unknown };
    });
  return shipped;
}

export interface ProtocolCase {
  /** The shipped protocol it was made from. */
  readonly source: string;
  readonly label: string;
  /** The file's bytes (the loader reads them as UTF-8). */
  readonly bytes: Buffer;
}

/** YAML constructs that are legal syntax but hostile input, inserted as a top-level member or document. */
export const YAML_HAZARDS: readonly { readonly name: string; readonly text: (base: string) => string }[] = [
  {
    name: 'alias bomb',
    text: (b) =>
      `${b}\nlol0: &l0 [x, x, x, x, x, x, x, x, x]\nlol1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0]\nlol2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]\nlol3: &l3 [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]\nlol4: &l4 [*l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3]\nlol5: [*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4]\n`,
  },
  { name: 'cyclic alias', text: (b) => `${b}\ncycle: &c\n  self: *c\n` },
  { name: 'cyclic alias in a known key', text: (b) => b.replace(/^conditions:/m, 'conditions: &cc\n  - *cc\nunused:') },
  { name: 'undefined alias', text: (b) => `${b}\nref: *nowhere\n` },
  { name: 'merge key', text: (b) => `base: &base { id: merged }\n${b.replace(/^id:/m, '<<: *base\nid:')}` },
  { name: 'binary tag', text: (b) => b.replace(/^id: (.*)$/m, 'id: !!binary aGVsbG8=') },
  { name: 'set tag', text: (b) => b.replace(/^n: (.*)$/m, 'n: !!set { a, b }') },
  { name: 'timestamp tag', text: (b) => b.replace(/^n: (.*)$/m, 'n: !!timestamp 2001-12-14t21:59:43.10-05:00') },
  { name: 'custom tag', text: (b) => b.replace(/^id: (.*)$/m, 'id: !custom $1') },
  { name: 'js tag', text: (b) => b.replace(/^id: (.*)$/m, 'id: !!js/function "function(){}"') },
  { name: 'two documents', text: (b) => `${b}\n---\n${b}` },
  { name: 'empty document', text: () => '' },
  { name: 'only a comment', text: () => '# nothing here\n' },
  { name: 'a scalar document', text: () => 'just a string\n' },
  { name: 'a sequence document', text: (b) => `- ${JSON.stringify(b.slice(0, 50))}\n- 2\n` },
  { name: 'null document', text: () => '~\n' },
  { name: 'directive', text: (b) => `%YAML 1.1\n---\n${b}` },
  { name: 'bad directive', text: (b) => `%YAML 9.9\n%TAG ! tag:x,2000:\n---\n${b}` },
  { name: 'byte order mark', text: (b) => `\ufeff${b}` },
  { name: 'CRLF', text: (b) => b.replaceAll('\n', '\r\n') },
  { name: 'lone CR', text: (b) => b.replaceAll('\n', '\r') },
  { name: 'tabs for indentation', text: (b) => b.replace(/^ {2}/gm, '\t') },
  { name: 'NUL bytes', text: (b) => b.replace(/^id:/m, 'id\u0000:') },
  { name: 'key with a line break', text: (b) => `"weird\\nkey": 1\n${b}` },
  { name: 'key with U+2028', text: (b) => `"weird\\Lkey": 1\n${b}` },
  { name: 'value with a line break in an enum', text: (b) => b.replace(/kind: A\b/, 'kind: "A\\nB"') },
  { name: 'complex key', text: (b) => `? [a, b]\n: 1\n${b}` },
  { name: 'very long line', text: (b) => `${b}\nlong: ${'x'.repeat(200_000)}\n` },
  { name: 'many keys', text: (b) => `${b}\n${Array.from({ length: 1000 }, (_, i) => `k${i}: ${i}`).join('\n')}\n` },
  {
    name: 'deep block nesting',
    text: (b) => `${b}\ndeep:\n${Array.from({ length: 400 }, (_, i) => `${'  '.repeat(i + 1)}a:`).join('\n')} 1\n`,
  },
  {
    name: 'huge integer id',
    text: (b) => b.replace(/^version: 1$/m, 'version: 100000000000000000000000000000000000000'),
  },
];

function yamlDeepMember(base: string) {
  return (nest: string): Buffer => Buffer.from(`${base}\nzz_deep: ${nest}\n`);
}

const nastyKeyArb = nastyStringArb.map((k) => k);

/** One malformed (or, rarely, still valid) protocol file. */
export const protocolCaseArb: fc.Arbitrary<ProtocolCase> = fc
  .record({
    source: fc.nat(),
    edit: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('tree' as const),
          m: treeMutationArb,
          m2: fc.option(treeMutationArb, { freq: 3 }),
        }),
      },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('text' as const), m: textMutationArb }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('hazard' as const), which: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('key' as const), key: nastyKeyArb }) },
    ),
  })
  .map(({ source, edit }) => {
    const all = shippedProtocols();
    const base = all[source % all.length]!;
    switch (edit.kind) {
      case 'tree': {
        const first = applyTreeMutation(base.tree, edit.m);
        const second = edit.m2 === null ? null : applyTreeMutation(first.value, edit.m2);
        const value = second?.value ?? first.value;
        let text: string;
        try {
          text = stringifyYaml(value);
        } catch {
          text = JSON.stringify(value) ?? '';
        }
        return {
          source: base.name,
          label: [first.label, second?.label].filter(Boolean).join('; '),
          bytes: Buffer.from(text),
        };
      }
      case 'text': {
        const r = applyTextMutation(Buffer.from(base.text), edit.m, yamlDeepMember(base.text));
        return { source: base.name, label: r.label, bytes: r.bytes };
      }
      case 'hazard': {
        const h = YAML_HAZARDS[edit.which % YAML_HAZARDS.length]!;
        return { source: base.name, label: h.name, bytes: Buffer.from(h.text(base.text)) };
      }
      case 'key':
        return {
          source: base.name,
          label: `top-level key ${JSON.stringify(edit.key.slice(0, 20))}`,
          bytes: Buffer.from(`${JSON.stringify(edit.key)}: 1\n${base.text}`),
        };
    }
  });

/** Runs the loader's parse on a case's bytes (decoded as the loader decodes files) and classifies the result. */
export function runProtocolCase(c: ProtocolCase, file: string): FuzzOutcome {
  try {
    parseProtocol(c.bytes.toString('utf8'), file);
    return { kind: 'accepted' };
  } catch (e) {
    return classifyThrown(e, file, ['E_PROTOCOL_INVALID']);
  }
}
