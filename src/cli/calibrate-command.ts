/**
 * `imep calibrate [--suite FILE] --out DIR [--campaigns N] [--quick] [--batch B] [--keep-units DIR]`: runs a
 * calibration suite (src/calibration) and writes calibration.json / .md / .html into DIR. Progress goes to
 * stderr; stdout gets the three paths and one line per check. Exits 1 when a check fails (the files are
 * written). The campaign-level designs' evidence units are temporary unless --keep-units names a folder.
 */
import type { Command } from 'commander';
import { ImepError } from '../core/index.js';
import { parseCount } from './args.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const DEFAULT_SUITE = 'protocols/calibration/shellgame-known-answers.yaml';

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
    .action(
      async (options: {
        suite?: string;
        out: string;
        campaigns?: string;
        quick?: boolean;
        batch: string;
        keepUnits?: string;
      }) => {
        // imported when the command runs: `imep --help` registers this command and must not load the runner
        const [{ calibrate }, { loadSuite, noisyLines }, { writeCalibration }, { PACKAGE_ROOT }] = await Promise.all([
          import('../calibration/calibrate.js'),
          import('../calibration/index.js'),
          import('../calibration/write-calibration.js'),
          import('../campaign/campaign-setup.js'),
        ]);
        const suiteFile =
          options.suite ?? (existsSync(DEFAULT_SUITE) ? DEFAULT_SUITE : join(PACKAGE_ROOT, DEFAULT_SUITE));
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
        const c = result.checks;
        for (const d of c.falsePositive.designs)
          process.stdout.write(
            `false-positive ${d.id}: UB95 ${(100 * d.upper95).toFixed(2)}% (limit ${(100 * c.falsePositive.limit).toFixed(2)}%) ${d.passed ? 'passed' : 'FAILED'}\n`,
          );
        for (const d of c.power.designs)
          process.stdout.write(
            `power ${d.id}: real ${(100 * d.real).toFixed(1)}%, simulated ${(100 * d.simulated).toFixed(1)}% ${d.passed ? 'passed' : 'FAILED'}\n`,
          );
        process.stdout.write(
          `agreement: ${c.agreement.agreeing}/${c.agreement.compared} within |z| ≤ ${c.agreement.zLimit} ${c.agreement.passed ? 'passed' : 'FAILED'}\n`,
        );
        if (c.campaignVerdicts.campaigns > 0)
          process.stdout.write(
            `IMEP verdict path: ${c.campaignVerdicts.matching}/${c.campaignVerdicts.campaigns} campaign-level verdicts match the frozen test ${c.campaignVerdicts.passed ? 'passed' : 'FAILED'}\n`,
          );
        for (const line of noisyLines(c.noisy)) process.stdout.write(`${line}\n`);
        const ok =
          c.falsePositive.designs.every((d) => d.passed) &&
          c.power.designs.every((d) => d.passed) &&
          c.agreement.passed &&
          c.campaignVerdicts.passed &&
          (c.noisy?.passed ?? true);
        if (!ok) process.exitCode = 1;
      },
    );
}
