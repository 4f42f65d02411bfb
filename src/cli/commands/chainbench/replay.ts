/**
 * `imep chainbench replay MANIFEST --decisions UNIT [--out UNIT] [--executor lite|bridge --endpoint E [--env ID]
 * [--deadline MS]] [--no-floor] [--bootstrap-seed S] [--replicates R] [--json]`: execute each distinct
 * (chain, decision) of a sealed decisions unit once and seal the replay as its own unit; prints the summary
 * computed from the sealed rows.
 */
import type { Command } from 'commander';
import { ImepError } from '../../../core/index.js';
import { loadManifest, type DecisionUnitRead } from '../../../chainbench/index.js';
import { DEFAULT_BRIDGE_ENV } from '../../../chainbench/bridge-executor.js';
import { readDecisionUnit } from '../../../chainbench/decision-unit.js';
import { readReplayUnit, writeReplayUnit } from '../../../chainbench/replay-unit.js';
import { out, parseReplicates, parseSeed } from './args.js';
import { defaultReplayDir, executorFor, EXECUTORS } from './executor.js';
import { replaySummaryOf } from './replay-summary.js';

interface ReplayOpts {
  decisions: string;
  out?: string;
  executor: string;
  endpoint?: string;
  env: string;
  deadline: string;
  floor: boolean;
  bootstrapSeed: string;
  replicates: string;
  json?: boolean;
}

/** The decisions unit, refused unless it froze this manifest. */
async function decisionsFor(file: string, unit: string): Promise<DecisionUnitRead> {
  const { hash } = await loadManifest(file, { simulator: false });
  const decisions = await readDecisionUnit(unit, '--decisions');
  if (decisions.manifestHash !== hash) {
    throw new ImepError(
      'E_MANIFEST_INVALID',
      `the decisions unit froze manifest ${decisions.manifestHash.slice(0, 12)}…, not this one (${hash.slice(0, 12)}…)`,
      {
        file,
        field: 'manifestHash',
        hint: 'replay decisions against the manifest they were decided on',
      },
    );
  }
  return decisions;
}

async function replay(file: string, o: ReplayOpts): Promise<void> {
  const bootstrapSeed = parseSeed('--bootstrap-seed', o.bootstrapSeed);
  const replicates = parseReplicates(o.replicates);
  const decisions = await decisionsFor(file, o.decisions);
  const dir = o.out ?? (await defaultReplayDir(decisions.unit.dir));
  const ex = await executorFor(o, decisions.manifest.env.executionSuccess);
  let written;
  try {
    written = await writeReplayUnit({
      dir,
      decisions,
      executor: ex.executor,
      executorIdentity: ex.identity,
      replayFloor: o.floor,
      bootstrapSeed,
      replicates,
    });
  } finally {
    await ex.close();
  }
  out(replaySummaryOf(await readReplayUnit(written.unit.dir, '--out'), o.json === true));
}

export function registerReplay(group: Command): void {
  group
    .command('replay')
    .description(
      'execute each distinct (chain, decision) of a sealed decisions unit once (conditions share executions) and seal the replay as its own unit',
    )
    .argument('<manifest>', 'manifest file (must be the one the decisions unit froze)')
    .requiredOption('--decisions <unit>', 'the sealed decisions unit (from `imep chainbench decide`)')
    .option('--out <dir>', 'the replay unit folder to create (default: <decisions unit>-replay[-N])')
    .option('--executor <kind>', `executor: ${EXECUTORS.join(' | ')}`, 'lite')
    .option('--endpoint <endpoint>', 'bridge endpoint (with --executor bridge), e.g. from `imep sim serve lite`')
    .option('--env <id>', 'environment on the bridge server that executes a choice', DEFAULT_BRIDGE_ENV)
    .option('--deadline <ms>', 'bridge call deadline (ms)', '30000')
    .option('--no-floor', 'skip the replay floor R')
    .option('--bootstrap-seed <s>', 'chain-bootstrap seed of the summary (frozen in the unit)', '0')
    .option('--replicates <R>', 'chain-bootstrap replicates of the summary (frozen in the unit)', '10000')
    .option('--json', 'print the summary, the pairing proof and the executions as JSON')
    .action(replay);
}
