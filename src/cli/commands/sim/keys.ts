/**
 * `imep sim keys DIR [--name NAME]`: write a new CurveZMQ key pair as ZeroMQ certificates DIR/NAME.key and
 * DIR/NAME.key_secret (the format the Python sim-bridge reads and writes too: src/bridges/curve-keys.ts).
 */
import type { Command } from 'commander';
import { writeCurveCertificates } from '../../../bridges/curve-keys.js';

/** Writes a new Curve key pair as ZeroMQ certificates; prints the secret, then the public file. */
export async function simKeys(dir: string, options: { name: string }): Promise<void> {
  const { publicFile, secretFile } = await writeCurveCertificates(dir, options.name);
  process.stdout.write(`${secretFile}\n${publicFile}\n`);
}

export function registerKeys(group: Command): void {
  group
    .command('keys')
    .description(
      'write a new CurveZMQ key pair as ZeroMQ certificates DIR/NAME.key (public) and DIR/NAME.key_secret (0600)',
    )
    .argument('<dir>', 'directory (created 0700 when absent)')
    .option('--name <name>', 'file name stem', 'server')
    .action((dir: string, opts: { name: string }) => simKeys(dir, opts));
}
