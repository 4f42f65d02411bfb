/** `imep campaign smoke FILE --n K [--campaigns-dir D] [--batch B]`: a small run (small-run.ts) stored apart from formal evidence. */
import type { Command } from 'commander';
import { registerSmallRun } from './small-run.js';

export function registerSmoke(group: Command): void {
  registerSmallRun(group, 'smoke');
}
