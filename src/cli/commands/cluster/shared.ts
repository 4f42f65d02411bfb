/** What the `imep cluster …` subcommands share: the dependencies tests inject, the stdout printer, a positive count. */
import { asTyped, ImepError } from '../../../core/index.js';
import type { EnvProvider } from '../../../campaign/index.js';
import { parseCount } from '../../args.js';

/** What tests may inject (the production CLI passes nothing). */
export interface ClusterDeps {
  /** Environments of shard runs (tests slow episodes down to catch a task mid-run). */
  readonly envs?: EnvProvider;
  /** argv prefix SLURM tasks run the CLI with (default: this node + this package's CLI). */
  readonly launcher?: readonly string[];
}

export function out(line: string): void {
  process.stdout.write(`${asTyped(line)}\n`);
}

/** A count flag, at least 1. */
export function positive(flag: string, raw: string): number {
  const n = parseCount(flag, raw);
  if (n < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: flag });
  return n;
}
