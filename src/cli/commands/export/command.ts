/**
 * `imep export UNIT [--out DIR]` (a top-level command): writes a sealed unit's rows as rows.parquet (every field
 * of rows/rows.jsonl) and episodes.parquet (one flat row per episode, with its timings), each carrying the unit's
 * id, stage, Merkle root, protocol hash and IMEP version in its key-value metadata (src/export). The unit is
 * verified first: a tampered unit is refused (exit 3), an unsealed one too (exit 2). Prints the two paths and a
 * line naming what was exported.
 */
import type { Command } from 'commander';
import { unitArg } from '../campaign/unit-arg.js';

async function exportCommand(unit: string, options: { out?: string }): Promise<void> {
  // imported when the command runs: `imep --help` registers this command and must not load the exporter
  const { exportUnit } = await import('../../../export/index.js');
  const r = await exportUnit(await unitArg(unit), options.out === undefined ? {} : { outDir: options.out });
  process.stdout.write(
    `${r.rowsFile}\n${r.episodesFile}\nexported ${r.rows} rows of unit ${r.unitId} (${r.stage}, root ${r.root.slice(0, 12)}…) as Parquet\n`,
  );
}

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('write a sealed unit’s rows and per-episode summaries as Parquet files')
    .argument('<unit>', 'the evidence unit folder (sealed, adjudicated or closed; verified first)')
    .option(
      '--out <dir>',
      'the folder to write rows.parquet and episodes.parquet into (default: exports/<unit> next to the unit)',
    )
    .action(exportCommand);
}
