/** Argument parsers and the stdout printer the `imep chainbench …` subcommands share. */
import { ImepError } from '../../../core/index.js';
import { parseCount } from '../../args.js';

/** A uint32 seed. */
export function parseSeed(flag: string, raw: string): number {
  const v = parseCount(flag, raw);
  if (v > 0xffffffff) throw new ImepError('E_USAGE', `must be a uint32, got ${raw}`, { field: flag });
  return v;
}

/** `--K 2,3,4`. */
export function parseKList(raw: string): number[] {
  return raw.split(',').map((p) => parseCount('--K', p));
}

/** `N` or `MIN-MAX`. */
export function parseRange(flag: string, raw: string): { min: number; max: number } {
  const m = /^(\d+)(?:-(\d+))?$/.exec(raw.trim());
  if (m === null) throw new ImepError('E_USAGE', `expected N or MIN-MAX, got '${raw}'`, { field: flag });
  const min = Number(m[1]);
  return { min, max: m[2] === undefined ? min : Number(m[2]) };
}

/** `--replicates R`, at least 1. */
export function parseReplicates(raw: string): number {
  const replicates = parseCount('--replicates', raw);
  if (replicates < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--replicates' });
  return replicates;
}

/** Text on stdout, ending in one line break. */
export function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
