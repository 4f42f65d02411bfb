/**
 * `imep protocol …`: wires its one subcommand,
 *
 *   imep protocol check FILE [--campaigns-dir D] [--allow-large-plan]   every problem of a protocol file   check.ts
 */
import type { Command } from 'commander';
import { registerCheck } from './check.js';

export { MAX_LISTED } from './check.js';

export function registerProtocol(group: Command): void {
  registerCheck(group);
}
