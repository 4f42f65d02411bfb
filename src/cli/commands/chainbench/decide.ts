/**
 * `imep chainbench decide MANIFEST --out UNIT [--seed S] [--fallback uniform|fixed] [--replicates R] [--json]`:
 * decide every chain under every condition, run the C/U/S/T ladder, seal it all as an evidence unit, and
 * print the summary computed from the sealed unit's verified rows.
 */
import type { Command } from 'commander';
import { buildChainRecords, FALLBACK_MODES, loadManifest } from '../../../chainbench/index.js';
import { readDecisionUnit, writeDecisionUnit } from '../../../chainbench/decision-unit.js';
import { parseChoice } from '../../args.js';
import { out, parseReplicates, parseSeed } from './args.js';
import { decisionSummaryOf } from './decision-summary.js';

interface DecideOpts {
  out: string;
  seed: string;
  fallback: string;
  replicates: string;
  json?: boolean;
}

async function decide(file: string, o: DecideOpts): Promise<void> {
  const seed = parseSeed('--seed', o.seed);
  const fallback = parseChoice('--fallback', o.fallback, FALLBACK_MODES);
  const replicates = parseReplicates(o.replicates);
  const { manifest, hash } = await loadManifest(file);
  const records = buildChainRecords(manifest);
  const { unit } = await writeDecisionUnit({
    dir: o.out,
    manifest,
    manifestHash: hash,
    records,
    seed,
    fallback,
    replicates,
  });
  out(decisionSummaryOf(await readDecisionUnit(unit.dir, '--out'), o.json === true));
}

export function registerDecide(group: Command): void {
  group
    .command('decide')
    .description(
      'decide every chain under every condition (full memory, no memory, initial fact, shuffled, stale, oracle), run the C/U/S/T ladder, and seal it all as an evidence unit',
    )
    .argument('<manifest>', 'manifest file')
    .requiredOption('--out <dir>', 'the decisions unit folder to create (must not exist)')
    .option(
      '--seed <s>',
      'decision seed (fallback draws, shuffle, ladder donors; also the summary bootstrap seed)',
      '0',
    )
    .option('--fallback <mode>', `fallback decision: ${FALLBACK_MODES.join(' | ')}`, 'uniform')
    .option('--replicates <R>', 'chain-bootstrap replicates of the summary (frozen in the unit)', '10000')
    .option('--json', 'print the summary as JSON')
    .action(decide);
}
