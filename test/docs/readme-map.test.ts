/**
 * README.md is a map (issue #29 §5): at most 250 lines, the quick start's two commands as they are, and a link to
 * every page under docs/ — a new page must be added to the map.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

function pages(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return pages(p);
    return n.endsWith('.md') ? [relative(ROOT, p)] : [];
  });
}

describe('README.md', () => {
  it('is at most 250 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(250);
  });

  it('keeps the quick start: its two commands, and the unit name and verdict its output quotes', () => {
    const block = /## Quick start\n[\s\S]*?```bash\n([\s\S]*?)```/.exec(README)?.[1];
    expect(block).toBe(
      'ONNXRUNTIME_NODE_INSTALL=skip npm ci && npx imep campaign run protocols/shellgame-blackout.yaml --through closeout --same-operator-reason "single-operator quick start"\n' +
        'bash scripts/test-all.sh\n',
    );
    expect(README).toContain('sealed campaigns/shellgame-blackout-750efa7a9384: 5600 rows');
    expect(README).toMatch(
      /^\s+Q1: not detected — claim "D_N lies below \+10\.00 pp" excluded: D_N \[\+60\.64, \+69\.44\] pp /m,
    );
  });

  it('links every page under docs/', () => {
    const linked = new Set([...README.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]));
    const missing = pages(join(ROOT, 'docs')).filter((p) => !linked.has(p));
    expect(missing).toEqual([]);
  });
});
