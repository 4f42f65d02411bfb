/**
 * How a SLURM task starts the imep CLI: the node binary that runs this process (absolute) and the CLI
 * entry of this package — `dist/cli/main.js` once built; from sources (tests, `tsx`), `src/cli/main.ts`
 * under the tsx loader, resolved to absolute paths so the task's working directory does not matter —
 * with the CLI's V8 heap flags (`CLIENT_NODE_FLAGS`, as its `#!` line gives them).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLIENT_NODE_FLAGS } from '../bridges/index.js';
import { ImepError } from '../core/index.js';

export function defaultLauncher(): string[] {
  const here = import.meta.url;
  const built = fileURLToPath(new URL(here.endsWith('.ts') ? '../../dist/cli/main.js' : '../cli/main.js', here));
  if (existsSync(built)) return [process.execPath, ...CLIENT_NODE_FLAGS, built];
  const source = fileURLToPath(new URL('../cli/main.ts', here));
  if (here.endsWith('.ts') && existsSync(source)) {
    let loader: string;
    try {
      loader = import.meta.resolve('tsx');
    } catch {
      throw new ImepError('E_CLUSTER', 'the imep CLI is not built and tsx is not installed', {
        hint: 'run `npm run build` first',
      });
    }
    return [process.execPath, ...CLIENT_NODE_FLAGS, '--import', loader, source];
  }
  throw new ImepError('E_CLUSTER', `the imep CLI entry is missing (${built})`, { hint: 'run `npm run build` first' });
}
