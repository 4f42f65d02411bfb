/**
 * The static import graph of the sources, for start-up tests: what a module pulls in before any of its code
 * runs. Dynamic `import()` is not followed (that is how commands defer their heavy modules), and type-only
 * imports are skipped (TypeScript erases them).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Packages whose import costs start-up time that a short command should not pay. */
export const HEAVY_PACKAGES = [
  'onnxruntime-node',
  '@tensorflow/tfjs',
  'zeromq',
  'msgpackr',
  'execa',
  'vega',
  'vega-lite',
] as const;

/** Packages (npm names, node: builtins left out) reachable from `entry` (a path under src/) through static imports. */
export function staticPackages(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const queue = [resolve(SRC, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) queue.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!spec.startsWith('node:'))
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return packages;
}
