/**
 * `imep chainbench validate MANIFEST [--no-simulator]`: validate a chain manifest (schema, K, ids, exactly one
 * deciding write, query identical across hidden facts) and print its chains by K.
 */
import type { Command } from 'commander';
import { loadManifest } from '../../../chainbench/index.js';
import { out } from './args.js';

async function validate(file: string, o: { simulator: boolean }): Promise<void> {
  const { manifest, hash } = await loadManifest(file, { simulator: o.simulator });
  const byK = new Map<number, number>();
  for (const c of manifest.chains) byK.set(c.K, (byK.get(c.K) ?? 0) + 1);
  const ks = [...byK]
    .sort((a, b) => a[0] - b[0])
    .map(([k, n]) => `K=${k}: ${n}`)
    .join(', ');
  const rewritten = manifest.chains.filter((c) => c.rewrite).length;
  out(
    `ok: ${file}: ${manifest.chains.length} chains (${ks}), ${rewritten} rewritten${o.simulator ? ', query frames identical across hidden facts' : ''}; sha256 ${hash}`,
  );
}

export function registerValidate(group: Command): void {
  group
    .command('validate')
    .description(
      'validate a chain manifest (schema, K, ids, exactly one deciding write, query identical across hidden facts)',
    )
    .argument('<manifest>', 'manifest file')
    .option('--no-simulator', 'skip the simulator checks (objects, query frame hashes)')
    .action(validate);
}
