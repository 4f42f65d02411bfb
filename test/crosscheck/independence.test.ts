/**
 * The cross-check is an independent recomputation: src/crosscheck may import nothing of IMEP but src/core and
 * src/evidence (no adjudication, no stats, no protocol code it could share a bug with), and no package but node's
 * own modules. Read from the source, so a new import fails here before it reaches a unit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const DIR = join(SRC, 'crosscheck');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

function importsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => (m[1] ?? m[2]) as string);
}

describe('src/crosscheck imports only core and evidence', () => {
  const files = readdirSync(DIR).filter((n) => n.endsWith('.ts'));
  it('has the cross-check modules', () => {
    expect(files).toEqual(expect.arrayContaining(['cross-check.ts', 'cross-check-math.ts', 'index.ts']));
  });
  it.each(files)('%s', (name) => {
    const file = join(DIR, name);
    const outside: string[] = [];
    for (const spec of importsOf(file)) {
      if (spec.startsWith('node:')) continue;
      if (!spec.startsWith('.')) {
        outside.push(`package ${spec}`);
        continue;
      }
      const folder = relative(SRC, resolve(dirname(file), spec)).split('/')[0];
      if (!['crosscheck', 'core', 'evidence'].includes(folder as string)) outside.push(`src/${folder} (${spec})`);
    }
    expect(outside).toEqual([]);
  });
  it('the check above sees a forbidden import (the rule can fail)', () => {
    const IMPORT_LINE = "import { holm } from '../stats/holm.js';";
    const [m] = [...`\n${IMPORT_LINE}`.matchAll(IMPORT)];
    const folder = relative(SRC, resolve(DIR, m?.[1] as string)).split('/')[0];
    expect(folder).toBe('stats');
  });
});
