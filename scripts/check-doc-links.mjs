#!/usr/bin/env node
// Every relative link and every repository path the docs name must exist (issue #29 §5).
//   node scripts/check-doc-links.mjs [--root DIR]
// Checks README.md and docs/**/*.md under the root (default: this repository). Exit 0 and one line saying what it
// checked; exit 1 with one line per broken reference (file:line, the reference, why).
//
// What counts (docs/architecture.md "Docs and their check" says the same):
// - a markdown link [text](target) whose target has no URL scheme (http:, https:, mailto:, …) and is not only an
//   #anchor: the target, without its #fragment, resolved against the folder of the doc that names it;
// - a repository path: a whitespace-separated token inside a `back-quoted` span that contains a slash and whose first
//   segment is a top-level folder of the repository (a folder at the root that is not hidden and not node_modules or
//   dist, the build outputs) — so `src/campaign/run-plan.ts`, `scripts/sims/libero.sh`, `sim-bridge/` count, and
//   `rows/run.json` (a path inside a unit), `~/.imep/keys` or `.venvs/libero` do not. Such a path is read from the
//   repository root. A trailing :LINE or #anchor is dropped, and so are quotes and brackets around the token and
//   , ; : . ) after it.
// - Skipped: fenced code blocks (transcripts, whose paths are a run's output), tokens holding a placeholder or a
//   pattern (< > * … { } $ | or a URL's ://): write a placeholder inside a path as <name> (`scripts/sims/<name>.sh`).
// Code spans are matched per paragraph, so a span may run over a line break.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUILD_OUTPUTS = new Set(['node_modules', 'dist']);
const PLACEHOLDER = /[<>*…{}$|]|:\/\//;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** The docs the check reads: README.md and every .md under docs/, as paths relative to root, sorted. */
export function docFiles(root) {
  const out = existsSync(join(root, 'README.md')) ? ['README.md'] : [];
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.md')) out.push(relative(root, p));
    }
  };
  walk(join(root, 'docs'));
  return out;
}

/** The top-level folders a back-quoted path may start with. */
export function topFolders(root) {
  return new Set(
    readdirSync(root).filter(
      (n) => !n.startsWith('.') && !BUILD_OUTPUTS.has(n) && statSync(join(root, n)).isDirectory(),
    ),
  );
}

/**
 * The paragraphs of a markdown text outside fenced code blocks, as [firstLineNumber, text]: a code span may run over
 * a line break inside its paragraph, so spans are matched per paragraph, not per line.
 */
function proseBlocks(text) {
  const out = [];
  let fence = null;
  let block = null;
  const flush = () => {
    if (block !== null) out.push([block.start, block.lines.join('\n')]);
    block = null;
  };
  text.split('\n').forEach((line, i) => {
    const m = /^\s*(```+|~~~+)/.exec(line);
    if (m) {
      flush();
      if (fence === null) fence = m[1][0];
      else if (m[1][0] === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    if (line.trim() === '') return flush();
    if (block === null) block = { start: i + 1, lines: [] };
    block.lines.push(line);
  });
  flush();
  return out;
}

/** A token of a code span stripped to the path it names, or null when it is no repository path. */
export function pathOf(token, tops) {
  let t = token.replace(/^["'(\[]+/, '').replace(/["')\],;:.]+$/, '');
  t = t.replace(/(:\d+(-\d+)?|#.*)$/, '');
  if (!t.includes('/') || PLACEHOLDER.test(t)) return null;
  const first = t.split('/')[0];
  return tops.has(first) ? t : null;
}

/** Every reference in one doc: { line, ref, kind: 'link' | 'path', target } (target: absolute path to test). */
export function referencesOf(root, file, tops) {
  const refs = [];
  const text = readFileSync(join(root, file), 'utf8');
  for (const [first, block] of proseBlocks(text)) {
    const lineAt = (index) => first + (block.slice(0, index).match(/\n/g)?.length ?? 0);
    const spanPattern = /(`+)([^`]+?)\1/g;
    const prose = block.replace(spanPattern, (m) => m.replace(/[^\n]/g, ' '));
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (SCHEME.test(target) || target.startsWith('#')) continue;
      const bare = decodeURIComponent(target.replace(/#.*$/, ''));
      refs.push({ line: lineAt(m.index), ref: target, kind: 'link', target: resolve(root, dirname(file), bare) });
    }
    for (const m of block.matchAll(spanPattern)) {
      const start = m.index + m[1].length;
      for (const t of m[2].matchAll(/\S+/g)) {
        const p = pathOf(t[0], tops);
        if (p !== null) refs.push({ line: lineAt(start + t.index), ref: p, kind: 'path', target: resolve(root, p) });
      }
    }
  }
  return refs;
}

/** Check every doc under root: the files read, the counts and the broken references. */
export function checkDocLinks(root) {
  const tops = topFolders(root);
  const files = docFiles(root);
  let links = 0;
  let paths = 0;
  const broken = [];
  for (const file of files) {
    for (const r of referencesOf(root, file, tops)) {
      if (r.kind === 'link') links++;
      else paths++;
      if (!existsSync(r.target)) broken.push({ file, line: r.line, ref: r.ref, kind: r.kind });
    }
  }
  return { files, links, paths, broken };
}

function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf('--root');
  const root = at >= 0 ? resolve(args[at + 1] ?? '.') : resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const { files, links, paths, broken } = checkDocLinks(root);
  for (const b of broken) {
    const what = b.kind === 'link' ? 'relative link' : 'repository path';
    console.error(`${b.file}:${b.line}: ${what} ${b.ref} does not exist — fix the reference or the file`);
  }
  const summary = `check-doc-links: ${files.length} docs (README.md, docs/**/*.md), ${links} relative links, ${paths} repository paths checked`;
  if (broken.length > 0) {
    console.error(`${summary}: ${broken.length} broken`);
    process.exit(1);
  }
  console.log(`${summary}: all exist`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
