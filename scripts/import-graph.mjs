#!/usr/bin/env node
// The folder-level import graph of src/ (DESIGN.md "Layout"): prints every folder → folder edge with its count,
// the strongly connected components (cycles), and imports that enter another folder other than through its
// index.ts ("face bypasses"). Exit 1 when a cycle or a bypass count exceeds the ratchet in
// scripts/import-graph-ratchet.json (which may only shrink: lower it when the code improves).
//   node scripts/import-graph.mjs [--write-ratchet]
import { readdirSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const files = [];
(function walk(d) {
  for (const n of readdirSync(d)) {
    const p = join(d, n);
    if (statSync(p).isDirectory()) walk(p);
    else if (n.endsWith('.ts')) files.push(p);
  }
})(src);

const folderOf = (file) => relative(src, file).split('/')[0];
const edges = new Map(); // "a→b" → count
const bypass = new Map(); // "a→b" → count of imports not through b/index.ts
const importRe = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  const from = folderOf(f);
  for (const m of text.matchAll(importRe)) {
    const spec = m[1] ?? m[2];
    if (!spec.startsWith('.')) continue;
    const target = resolve(dirname(f), spec.replace(/\.js$/, '.ts'));
    if (!target.startsWith(src)) continue;
    const to = folderOf(target);
    if (to === from || to.endsWith('.ts')) continue;
    const k = `${from}→${to}`;
    edges.set(k, (edges.get(k) ?? 0) + 1);
    if (relative(join(src, to), target) !== 'index.ts') bypass.set(k, (bypass.get(k) ?? 0) + 1);
  }
}

// strongly connected components (Tarjan)
const nodes = [...new Set([...edges.keys()].flatMap((k) => k.split('→')))].sort();
const out = new Map(nodes.map((n) => [n, [...edges.keys()].filter((k) => k.startsWith(`${n}→`)).map((k) => k.split('→')[1])]));
let index = 0;
const idx = new Map(), low = new Map(), stack = [], on = new Set(), sccs = [];
function strong(v) {
  idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v);
  for (const w of out.get(v) ?? []) {
    if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))); }
    else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const c = [];
    let w;
    do { w = stack.pop(); on.delete(w); c.push(w); } while (w !== v);
    if (c.length > 1) sccs.push(c.sort());
  }
}
for (const v of nodes) if (!idx.has(v)) strong(v);

console.log('folder → folder edges (imports):');
for (const [k, n] of [...edges].sort()) console.log(`  ${k.padEnd(32)} ${String(n).padStart(4)}${bypass.has(k) ? `   (${bypass.get(k)} not through index.ts)` : ''}`);
const cycleFolders = sccs.flat().length;
const bypassTotal = [...bypass.values()].reduce((a, b) => a + b, 0);
console.log(`cycles: ${sccs.length === 0 ? 'none' : sccs.map((c) => c.join(' ↔ ')).join('; ')}`);
console.log(`folders in cycles: ${cycleFolders}; imports bypassing a folder's index.ts: ${bypassTotal}`);

const ratchetFile = join(root, 'scripts/import-graph-ratchet.json');
if (process.argv.includes('--write-ratchet')) {
  writeFileSync(ratchetFile, `${JSON.stringify({ foldersInCycles: cycleFolders, faceBypasses: bypassTotal }, null, 2)}\n`);
  console.log(`wrote ${relative(root, ratchetFile)}`);
  process.exit(0);
}
const ratchet = existsSync(ratchetFile) ? JSON.parse(readFileSync(ratchetFile, 'utf8')) : { foldersInCycles: 0, faceBypasses: 0 };
const worse = [];
if (cycleFolders > ratchet.foldersInCycles) worse.push(`${cycleFolders} folders in cycles (ratchet ${ratchet.foldersInCycles})`);
if (bypassTotal > ratchet.faceBypasses) worse.push(`${bypassTotal} index.ts bypasses (ratchet ${ratchet.faceBypasses})`);
if (worse.length > 0) {
  console.error(`import-graph: the layout got worse: ${worse.join('; ')} — import through the folder's index.ts and do not import upward (DESIGN.md "Layout")`);
  process.exit(1);
}
if (cycleFolders < ratchet.foldersInCycles || bypassTotal < ratchet.faceBypasses) console.log('import-graph: better than the ratchet — lower it: node scripts/import-graph.mjs --write-ratchet');
