/**
 * `imep report UNIT [--out DIR]` (the group is the command; it has no subcommands): writes report.html
 * (self-contained, offline), report.md and rows.csv for an adjudicated (or cross-checked, or closed) evidence
 * unit; the unit is verified first. Default DIR: <campaigns dir>/reports/<unit folder name> — the folder
 * `campaign run --through closeout` writes (one default). When the protocol recorded rollout frames, the
 * filmstrips' PNG files go under DIR/frames/. Prints the three paths and the size a reader opens (report.html
 * plus its frames).
 */
import type { Command } from 'commander';
import { writeReport } from '../../../report/write-report.js';
import { defaultReportDir } from '../../../app/index.js';

async function report(unit: string, options: { out?: string }): Promise<void> {
  const outDir = options.out ?? defaultReportDir(unit);
  const written = await writeReport(unit, { outDir });
  process.stdout.write(`${written.html}\n${written.markdown}\n${written.csv}\n${written.sizeLine}\n`);
}

export function registerReport(group: Command): void {
  group
    .argument('<unit>', 'the evidence unit folder (adjudicated, cross-checked or closed)')
    .option(
      '--out <dir>',
      'the folder to write report.html, report.md and rows.csv into (default: reports/<unit> next to the unit, where `campaign run --through closeout` writes it)',
    )
    .action(report);
}
