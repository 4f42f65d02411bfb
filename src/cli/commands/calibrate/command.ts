/**
 * `imep calibrate [--suite FILE] --out DIR [--campaigns N] [--quick] [--batch B] [--keep-units DIR]` (a top-level
 * command): runs a calibration suite (src/calibration) and writes calibration.json / .md / .html into DIR.
 * Progress goes to stderr; stdout gets the three paths and one line per check (checks.ts). Exits 1 when a check
 * fails (the files are written). The campaign-level designs' evidence units are temporary unless --keep-units
 * names a folder. The runner is imported when the command runs: `imep --help` registers this command and must
 * not load it.
 */
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ImepError } from '../../../core/index.js';
import { parseCount } from '../../args.js';
import { allPassed, checkLines } from './checks.js';

export const DEFAULT_SUITE = 'protocols/calibration/shellgame-known-answers.yaml';

interface CalibrateOpts {
  suite?: string;
  out: string;
  campaigns?: string;
  quick?: boolean;
  batch: string;
  keepUnits?: string;
}

async function calibrateCommand(options: CalibrateOpts): Promise<void> {
  // imported when the command runs: `imep --help` registers this command and must not load the runner
  const [{ calibrate }, { loadSuite, noisyLines }, { writeCalibration }, { PACKAGE_ROOT }] = await Promise.all([
    import('../../../calibration/calibrate.js'),
    import('../../../calibration/index.js'),
    import('../../../calibration/write-calibration.js'),
    import('../../../campaign/index.js'),
  ]);
  const suiteFile = options.suite ?? (existsSync(DEFAULT_SUITE) ? DEFAULT_SUITE : join(PACKAGE_ROOT, DEFAULT_SUITE));
  const loaded = await loadSuite(suiteFile);
  const batchSize = parseCount('--batch', options.batch);
  if (batchSize < 1) throw new ImepError('E_USAGE', 'must be ≥ 1', { field: '--batch' });
  const root = existsSync(resolve(loaded.suite.checkpoints[0]?.path ?? '.')) ? process.cwd() : PACKAGE_ROOT;
  const result = await calibrate(loaded, {
    root,
    batchSize,
    ...(options.campaigns === undefined ? {} : { campaigns: parseCount('--campaigns', options.campaigns) }),
    ...(options.quick ? { quick: true } : {}),
    ...(options.keepUnits === undefined ? {} : { keepUnits: options.keepUnits }),
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  const written = await writeCalibration(result, options.out);
  process.stdout.write(`${written.json}\n${written.markdown}\n${written.html}\n`);
  for (const line of checkLines(result.checks, noisyLines)) process.stdout.write(`${line}\n`);
  if (!allPassed(result.checks)) process.exitCode = 1;
}

export function registerCalibrateCommand(program: Command): void {
  program
    .command('calibrate')
    .description('known-answer calibration: power and false-positive rate of the A/S/T ladder with exact intervals')
    .option('--suite <file>', `the calibration suite (default ${DEFAULT_SUITE})`)
    .requiredOption('--out <dir>', 'where to write calibration.json, calibration.md and calibration.html')
    .option('--campaigns <n>', 'real campaigns (seed bands) per design, at most the suite’s bands.count')
    .option('--quick', 'the suite’s quick design (small n, few campaigns; not the registered design)')
    .option('--batch <b>', 'lockstep batch size (results do not depend on it)', '32')
    .option(
      '--keep-units <dir>',
      'keep the campaign-level designs’ evidence units in this new or empty folder (default: temporary, removed)',
    )
    .action(calibrateCommand);
}
