/**
 * `imep chainbench diff OLD NEW [--json]`: chains removed, added and changed between two manifest versions
 * (selection-bias audit).
 */
import type { Command } from 'commander';
import { diffManifests, loadManifest } from '../../../chainbench/index.js';
import { out } from './args.js';

type ManifestDiff = ReturnType<typeof diffManifests>;

function diffLines(oldFile: string, newFile: string, d: ManifestDiff): string[] {
  const lines = [
    `old ${oldFile}: ${d.oldChains} chains, sha256 ${d.oldHash}`,
    `new ${newFile}: ${d.newChains} chains, sha256 ${d.newHash}`,
    d.identical
      ? 'identical'
      : `removed ${d.removed.length}, added ${d.added.length}, changed ${d.changed.length}, unchanged ${d.unchanged}`,
  ];
  if (d.header.length > 0) lines.push(`manifest fields changed: ${d.header.join(', ')}`);
  if (d.orderChanged) lines.push('the chains both versions hold are in a different order');
  if (d.removed.length > 0) lines.push(`removed: ${d.removed.join(' ')}`);
  if (d.added.length > 0) lines.push(`added: ${d.added.join(' ')}`);
  for (const c of d.changed) lines.push(`changed: ${c.id} (${c.fields.join(', ')})`);
  return lines;
}

async function diff(oldFile: string, newFile: string, o: { json?: boolean }): Promise<void> {
  const a = await loadManifest(oldFile, { simulator: false });
  const b = await loadManifest(newFile, { simulator: false });
  const d = diffManifests(a.manifest, b.manifest);
  out(o.json ? JSON.stringify(d, null, 2) : diffLines(oldFile, newFile, d).join('\n'));
}

export function registerDiff(group: Command): void {
  group
    .command('diff')
    .description('chains removed, added and changed between two manifest versions (selection-bias audit)')
    .argument('<old>', 'old manifest')
    .argument('<new>', 'new manifest')
    .option('--json', 'print one JSON object')
    .action(diff);
}
