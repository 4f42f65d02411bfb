/**
 * scripts/check-doc-links.mjs: every relative link and back-quoted repository path in README.md and docs/**\/*.md
 * exists. Played on a temp repository with good and broken references, then on this repository.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const SCRIPT = join(ROOT, 'scripts/check-doc-links.mjs');

function check(root: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, '--root', root], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** A temp repository: src/a.ts, scripts/run.sh, docs/guide.md, docs/sub/page.md, and README.md as given. */
function repo(readme: string, page = '# page\n'): string {
  const d = mkdtempSync(join(tmpdir(), 'imep-doc-links-'));
  dirs.push(d);
  mkdirSync(join(d, 'src'));
  mkdirSync(join(d, 'scripts'));
  mkdirSync(join(d, 'docs/sub'), { recursive: true });
  mkdirSync(join(d, 'node_modules/pkg'), { recursive: true });
  writeFileSync(join(d, 'src/a.ts'), 'export {};\n');
  writeFileSync(join(d, 'scripts/run.sh'), 'true\n');
  writeFileSync(join(d, 'docs/guide.md'), '# guide\n\nBack to the [map](../README.md#top); see `src/a.ts:12`.\n');
  writeFileSync(join(d, 'docs/sub/page.md'), page);
  writeFileSync(join(d, 'README.md'), readme);
  return d;
}

describe('check-doc-links', () => {
  it('passes a repository whose links and paths exist, and says what it checked', () => {
    const d = repo(
      [
        '# map',
        '[guide](docs/guide.md), [page](docs/sub/page.md#part), [site](https://example.org/x.md), [here](#map).',
        'Run `bash scripts/run.sh test` on `src/a.ts`, `src/`; not paths: `rows/run.json`, `~/.imep/keys`,',
        '`src/<stem>.ts`, `scripts/*.sh`, `node_modules/pkg/gone.js`, `tcp://src/x`.',
        '```console',
        '$ cat src/missing.ts docs/missing.md',
        '```',
      ].join('\n'),
    );
    const r = check(d);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // README: 2 relative links (not the URL nor the anchor), 3 paths (none in the fence); docs/guide.md: 1 and 1
    expect(r.stdout.trim()).toBe(
      'check-doc-links: 3 docs (README.md, docs/**/*.md), 3 relative links, 4 repository paths checked: all exist',
    );
  });

  it('names every broken link and path with its file and line, and exits 1', () => {
    const d = repo(
      '# map\n\nSee [the missing page](docs/nope.md) and `src/b.ts`; a span over a line break: `node\nsrc/c.ts --x`.\n',
      '# page\n\n[up](../guide.md) [wrong](../../docs/gone.md)\n`scripts/run.sh` `scripts/gone.sh`\n',
    );
    const r = check(d);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      'README.md:3: relative link docs/nope.md does not exist — fix the reference or the file',
      'README.md:3: repository path src/b.ts does not exist — fix the reference or the file',
      'README.md:4: repository path src/c.ts does not exist — fix the reference or the file',
      'docs/sub/page.md:3: relative link ../../docs/gone.md does not exist — fix the reference or the file',
      'docs/sub/page.md:4: repository path scripts/gone.sh does not exist — fix the reference or the file',
      'check-doc-links: 3 docs (README.md, docs/**/*.md), 4 relative links, 5 repository paths checked: 5 broken',
    ]);
  });

  it("finds nothing broken in this repository's README.md and docs/", () => {
    const r = check(ROOT);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^check-doc-links: \d+ docs .*: all exist\n$/);
  });
});
