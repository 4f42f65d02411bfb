/**
 * `imep chainbench generate --chains N --K K[,K…] --seed S --out FILE [--rewrite-rate r] [--distractors a-b]
 * [--execution-success p]`: write a seeded ChainDrawers-lite chain manifest (through a temp file and a rename).
 */
import type { Command } from 'commander';
import { generateChainManifest, writeManifest } from '../../../chainbench/index.js';
import { parseCount, parseProbability } from '../../args.js';
import { out, parseKList, parseRange, parseSeed } from './args.js';

interface GenerateOpts {
  chains: string;
  K: string;
  seed: string;
  out: string;
  rewriteRate: string;
  distractors: string;
  executionSuccess: string;
}

async function generate(o: GenerateOpts): Promise<void> {
  const manifest = generateChainManifest({
    chains: parseCount('--chains', o.chains),
    K: parseKList(o.K),
    seed: parseSeed('--seed', o.seed),
    rewriteRate: parseProbability('--rewrite-rate', o.rewriteRate, { open: false }),
    distractors: parseRange('--distractors', o.distractors),
    executionSuccess: parseProbability('--execution-success', o.executionSuccess, { open: false }),
  });
  const hash = await writeManifest(o.out, manifest);
  const rewritten = manifest.chains.filter((c) => c.rewrite).length;
  out(`wrote ${o.out}: ${manifest.chains.length} chains (K ${o.K}), ${rewritten} rewritten; sha256 ${hash}`);
}

export function registerGenerate(group: Command): void {
  group
    .command('generate')
    .description('generate a seeded ChainDrawers-lite chain manifest (balanced final facts, optional rewrites)')
    .requiredOption('--chains <n>', 'number of chains')
    .requiredOption('--K <K>', 'drawers per chain (2–4), or a comma list assigned round-robin')
    .requiredOption('--seed <s>', 'generator seed (uint32)')
    .requiredOption('--out <file>', 'manifest file to write')
    .option('--rewrite-rate <r>', 'fraction of chains whose initial fact is overwritten', '0.5')
    .option('--distractors <a-b>', 'distractor episodes per chain', '1-3')
    .option('--execution-success <p>', 'lite executor execution probability', '0.8')
    .action(generate);
}
