#!/usr/bin/env node
// The folder-level import graph of src/ (docs/architecture.md "Layout"): prints every folder → folder edge with its count,
// the strongly connected components (cycles), and imports that enter another folder other than through its
// index.ts ("face bypasses"). Exit 1 on a cycle, on a bypass, or on an arrow scripts/import-rules.json does not
// allow (the dependency rule set of docs/architecture.md "Layout").
//   node scripts/import-graph.mjs
import { readdirSync, readFileSync, statSync } from 'node:fs';
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
const rules = JSON.parse(readFileSync(join(root, 'scripts/import-rules.json'), 'utf8'));
// A folder's face is its index.ts, which must stay light: it may not load a heavy package (rules.heavyPackages:
// native runtimes, ZeroMQ, process supervision, the chart engine), so importing a folder never costs a process
// what it does not use. A module that does load one is entered by its own name (a second face, imported where and
// when it is needed — often dynamically).
const HEAVY = new Set(rules.heavyPackages);
const texts = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
const heavyMemo = new Map();
/** The heavy package a module loads through its static (non-type) imports, or null. */
function heavyOf(file, stack = new Set()) {
  if (heavyMemo.has(file)) return heavyMemo.get(file);
  if (stack.has(file)) return null;
  stack.add(file);
  let found = null;
  for (const m of (texts.get(file) ?? '').matchAll(
    /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm,
  )) {
    const clause = /\{([^}]*)\}/.exec(m[0]);
    if (
      clause &&
      clause[1]
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
        .every((n) => n.startsWith('type '))
    )
      continue;
    const spec = m[1];
    if (spec.startsWith('.')) found = heavyOf(resolve(dirname(file), spec.replace(/\.js$/, '.ts')), stack);
    else if (!spec.startsWith('node:')) {
      const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      if (HEAVY.has(pkg)) found = pkg;
    }
    if (found) break;
  }
  stack.delete(file);
  heavyMemo.set(file, found);
  return found;
}
const edges = new Map(); // "a→b" → count
const bypass = new Map(); // "a→b" → count of imports not through b/index.ts
const selfFace = [];
const importRe = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;
for (const f of files) {
  const text = texts.get(f);
  const from = folderOf(f);
  for (const m of text.matchAll(importRe)) {
    const spec = m[1] ?? m[2];
    if (!spec.startsWith('.')) continue;
    const target = resolve(dirname(f), spec.replace(/\.js$/, '.ts'));
    if (!target.startsWith(src)) continue;
    const to = folderOf(target);
    // a module's own folder face re-exports the module's neighbours: importing it from inside makes an ESM cycle
    if (to === from && relative(join(src, to), target) === 'index.ts' && relative(join(src, to), f) !== 'index.ts')
      selfFace.push(relative(root, f));
    if (to === from || to.endsWith('.ts')) continue;
    const k = `${from}→${to}`;
    edges.set(k, (edges.get(k) ?? 0) + 1);
    if (relative(join(src, to), target) !== 'index.ts' && heavyOf(target) === null)
      bypass.set(k, (bypass.get(k) ?? 0) + 1);
  }
}

// strongly connected components (Tarjan)
const nodes = [...new Set([...edges.keys()].flatMap((k) => k.split('→')))].sort();
const out = new Map(
  nodes.map((n) => [n, [...edges.keys()].filter((k) => k.startsWith(`${n}→`)).map((k) => k.split('→')[1])]),
);
let index = 0;
const idx = new Map(),
  low = new Map(),
  stack = [],
  on = new Set(),
  sccs = [];
function strong(v) {
  idx.set(v, index);
  low.set(v, index);
  index++;
  stack.push(v);
  on.add(v);
  for (const w of out.get(v) ?? []) {
    if (!idx.has(w)) {
      strong(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const c = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1) sccs.push(c.sort());
  }
}
for (const v of nodes) if (!idx.has(v)) strong(v);

console.log('folder → folder edges (imports):');
for (const [k, n] of [...edges].sort())
  console.log(
    `  ${k.padEnd(32)} ${String(n).padStart(4)}${bypass.has(k) ? `   (${bypass.get(k)} not through index.ts)` : ''}`,
  );
const cycleFolders = sccs.flat().length;
const bypassTotal = [...bypass.values()].reduce((a, b) => a + b, 0);
console.log(`cycles: ${sccs.length === 0 ? 'none' : sccs.map((c) => c.join(' ↔ ')).join('; ')}`);
console.log(`folders in cycles: ${cycleFolders}; imports bypassing a folder's index.ts: ${bypassTotal}`);

const allowed = rules.allowed;
const problems = [];
for (const f of files) {
  if (!f.endsWith('/index.ts')) continue;
  const pkg = heavyOf(f);
  if (pkg !== null)
    problems.push(
      `${relative(root, f)} loads ${pkg}: a face stays light — export that module's types only, and import its values from the module itself`,
    );
}
for (const n of nodes)
  if (!(n in allowed))
    problems.push(`folder src/${n} is not in scripts/import-rules.json: add it with the folders it may import`);
for (const [k, n] of [...edges].sort()) {
  const [a, b] = k.split('→');
  if (a in allowed && !allowed[a].includes(b)) problems.push(`${a} → ${b} (${n} imports) is not an allowed arrow`);
}
for (const f of selfFace) problems.push(`${f} imports its own folder's index.ts: import the module itself`);
if (sccs.length > 0) problems.push(`cycles: ${sccs.map((c) => c.join(' ↔ ')).join('; ')}`);
for (const [k, n] of [...bypass].sort())
  problems.push(
    `${k}: ${n} imports enter ${k.split('→')[1]}/ other than through its index.ts (or a module that loads a heavy package)`,
  );
if (problems.length > 0) {
  for (const p of problems.slice(0, 40)) console.error(`import-graph: ${p}`);
  if (problems.length > 40) console.error(`import-graph: … and ${problems.length - 40} more`);
  console.error(
    'import-graph: import another folder only through its index.ts, along the arrows of scripts/import-rules.json (docs/architecture.md "Layout")',
  );
  process.exit(1);
}
console.log('import-graph: every arrow allowed, no cycle, every folder entered through its index.ts');
