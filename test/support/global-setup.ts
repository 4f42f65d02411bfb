import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Newest modification time under a folder (files only). */
function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * CLI tests run the built `dist/cli/main.js`; rebuild it once when any source is newer. tsc emits
 * even when it reports type errors, and type errors are the typecheck step's business (see
 * scripts/test-all.sh), so its exit status is not fatal here; a missing output is.
 */
export default function setup(): void {
  const main = 'dist/cli/main.js';
  if (!existsSync(main) || newest('src') > newest('dist')) {
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'ignore' });
    } catch {
      // reported by `npm run typecheck`
    }
    if (!existsSync(main)) throw new Error(`global setup: ${main} was not built; run npm run build to see why`);
  }
}
