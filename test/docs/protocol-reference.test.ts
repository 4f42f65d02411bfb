/**
 * docs/protocol.md documents every top-level key of the protocol and every condition kind, so the page cannot go
 * stale silently: a key added to ProtocolObjectSchema (src/protocol/schema.ts) or a condition kind registered (src/kinds)
 * fails here until the page has its entry, and an entry for a key or kind that no longer exists fails too.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { conditionFaces } from '../../src/core/index.js';
import { kindFieldInfo } from '../../src/protocol/index.js';
import { ProtocolObjectSchema } from '../../src/protocol/schema.js';

const ROOT = resolve(__dirname, '../..');
const PAGE = readFileSync(join(ROOT, 'docs/protocol.md'), 'utf8');

/** The text of the section under `## title`, to the next `## ` heading. */
function section(title: string): string {
  const start = PAGE.indexOf(`\n## ${title}\n`);
  expect(start, `docs/protocol.md has a section "## ${title}"`).toBeGreaterThanOrEqual(0);
  const next = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, next < 0 ? undefined : next);
}

describe('docs/protocol.md', () => {
  it('has one "### `key`" entry with text for each top-level key of ProtocolObjectSchema, in the schema order', () => {
    const keys = Object.keys(ProtocolObjectSchema.shape);
    expect(keys.length).toBeGreaterThan(20);
    const text = section('Top-level keys');
    const entries = [...text.matchAll(/^### `([^`]+)`\n\n(\S[^\n]*)/gm)].map((m) => m[1]);
    expect(entries).toEqual(keys);
  });

  it('has one table row for each condition kind', () => {
    const rows = [...section('Condition kinds').matchAll(/^\| `([^`]+)` \| (\S[^|]*)\|/gm)].map((m) => m[1]);
    expect(rows).toEqual(conditionFaces.names());
  });

  it('names every condition kind the schema accepts (the union over the registered kinds)', () => {
    const union = kindFieldInfo(ProtocolObjectSchema.shape.conditions.element)?.union();
    expect(union).toBeInstanceOf(z.ZodDiscriminatedUnion);
    const options = (union as z.ZodDiscriminatedUnion).options as readonly z.ZodObject[];
    const kinds = options.map((o) => (o.shape['kind'] as z.ZodLiteral).value);
    expect(kinds).toEqual(['A', 'N', 'O', 'C', 'U', 'S_pi', 'T_mu', 'S', 'T']);
    expect([...kinds].sort()).toEqual([...conditionFaces.names()].sort());
  });
});

describe('docs/protocol.md memory entry', () => {
  it('documents every memory bank kind the schema accepts, with the history fields', () => {
    const memory = PAGE.slice(PAGE.indexOf('### `memory`'), PAGE.indexOf('### `seeds`'));
    const union = ProtocolObjectSchema.shape.memory as unknown as z.ZodDiscriminatedUnion;
    const banks = (union.options as readonly z.ZodObject[]).map((o) => (o.shape['bank'] as z.ZodLiteral).value);
    expect(banks).toEqual(['episode-local', 'structured-pcmb', 'history']);
    for (const bank of banks) expect(memory).toContain(`\`bank: ${String(bank)}\``);
    for (const field of ['window', 'stride', 'keys', 'pad: first | zeros', 'history/mask', 'decisionFromStep'])
      expect(memory).toContain(field);
  });
});
