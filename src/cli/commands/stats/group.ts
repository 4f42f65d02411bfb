/**
 * `imep stats …`: exact paired-binary statistics. Wires one file per subcommand, in the order
 * `imep stats --help` lists them:
 *
 *   imep stats paired --b B --c C --n N [--alpha a] [--level l] [--json]       paired.ts
 *   imep stats proportion --x X --n N [--level l] [--sided two|upper|lower] [--json]   proportion.ts
 *   imep stats holm P… [--json]                                                 holm.ts
 *   imep stats demo [--json]                                                    demo.ts
 *
 * Thin: parses, calls src/stats, prints JSON or a table (shared.ts).
 */
import type { Command } from 'commander';
import { registerDemo } from './demo.js';
import { registerHolm } from './holm.js';
import { registerPaired } from './paired.js';
import { registerProportion } from './proportion.js';

export function registerStats(group: Command): void {
  registerPaired(group);
  registerProportion(group);
  registerHolm(group);
  registerDemo(group);
}
