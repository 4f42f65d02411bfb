/**
 * docs/architecture.md's layout table says what scripts/import-rules.json says: one row per src/ folder, listing
 * exactly the folders it may import. A new arrow (or folder) in the rules fails here until the page says it too.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const PAGE = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
const RULES = JSON.parse(readFileSync(join(ROOT, 'scripts/import-rules.json'), 'utf8')) as {
  about: string;
  allowed: Record<string, string[]>;
};

/** The layout table's rows: folder (without src/) → the folders of its last cell ('—' = none). */
function layoutRows(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const m of PAGE.matchAll(/^\| `src\/([a-z-]+)` \|.*\| ([^|]+) \|$/gm)) {
    const cell = (m[2] as string).trim();
    rows.set(m[1] as string, cell === '—' ? [] : cell.split(',').map((s) => s.trim()));
  }
  return rows;
}

describe('docs/architecture.md', () => {
  it('lists every folder of scripts/import-rules.json with exactly its allowed imports', () => {
    const rows = layoutRows();
    expect([...rows.keys()].sort()).toEqual(Object.keys(RULES.allowed).sort());
    for (const [folder, allowed] of Object.entries(RULES.allowed)) {
      expect([...(rows.get(folder) ?? [])].sort(), `row src/${folder}`).toEqual([...allowed].sort());
    }
  });

  it('is the page the rules and the import check point to (DESIGN.md is not in the repository)', () => {
    expect(RULES.about).toContain('docs/architecture.md');
    expect(readFileSync(join(ROOT, 'scripts/import-graph.mjs'), 'utf8')).not.toContain('DESIGN.md');
  });
});
