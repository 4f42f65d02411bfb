import type { Command } from 'commander';

export function registerStats(group: Command): void {
  void group;
}
