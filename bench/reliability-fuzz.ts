/**
 * Reliability figure (issue 9, bad input): the full-size fuzz campaigns of test/fuzz (malformed protocol
 * files through the loader and the CLI, chain manifests, bridge messages through the decoder and a running
 * lite server), counted by scripts/fuzz-report.ts — run as its own process because it drives worker
 * threads from its own file. Needs the built CLI (`npm run build`) for the CLI campaign.
 *
 *   npx tsx bench/reliability-fuzz.ts [fuzz-report flags, e.g. --seed 20260101]
 */
import { spawnSync } from 'node:child_process';

const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/fuzz-report.ts', ...process.argv.slice(2)], {
  stdio: ['ignore', 'inherit', 'inherit'],
});
process.exitCode = r.status ?? 1;
