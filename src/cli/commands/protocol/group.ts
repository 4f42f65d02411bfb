/**
 * `imep protocol …`: wires its subcommands,
 *
 *   imep protocol check FILE [--campaigns-dir D] [--allow-large-plan]   every problem of a protocol file   check.ts
 *   imep protocol example [NAME] [--out FILE]       the shipped protocols; copy one out for editing   example.ts
 */
import type { Command } from 'commander';
import { registerCheck } from './check.js';
import { registerExample } from './example.js';

export { MAX_LISTED } from './check.js';

export function registerProtocol(group: Command): void {
  registerCheck(group);
  registerExample(group);
}
