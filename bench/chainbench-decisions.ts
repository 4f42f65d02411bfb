/**
 * ChainBench decision evaluation at scale: 10,000 ChainDrawers-lite chains (K = 2 and 3, round-robin)
 * decided under the 6 decision conditions (full memory, no memory, initial fact, shuffled records,
 * stale records, oracle), then the C/U/S/T ladder, timed against a baseline measured in the same run:
 * generating the manifest (which renders one query frame per chain on the lite simulator) and building
 * its records; then the whole decide step written as a sealed evidence unit (one fdatasync'd row per chain,
 * seal, signature) and read back verified. Prints seconds and ratios; asserts only that full memory matches
 * the oracle and that the unit holds every chain.
 * "Seconds, not minutes."
 *
 *   npx tsx bench/chainbench-decisions.ts          (BENCH_CHAINS to change the size)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildChainRecords,
  decisionConditions,
  freezeManifest,
  generateChainManifest,
  runDecisionLadder,
} from '../src/chainbench/index.js';
import { readDecisionUnit, writeDecisionUnit } from '../src/chainbench/decision-unit.js';

const CHAINS = Number(process.env['BENCH_CHAINS'] ?? 10_000);

function seconds(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

let t = process.hrtime.bigint();
const { manifest, hash } = freezeManifest(generateChainManifest({ chains: CHAINS, K: [2, 3], seed: 20260825 }));
const records = buildChainRecords(manifest);
const baseline = seconds(t);

t = process.hrtime.bigint();
const decided = decisionConditions().map((c) => ({ name: c.name, decisions: c.decide(manifest, records, 1) }));
const decide = seconds(t);

const finals = new Map(manifest.chains.map((c) => [c.id, c.finalFact.drawer]));
const accuracy = decided.map(
  (c) =>
    `${c.name} ${(c.decisions.filter((d) => d.choice === finals.get(d.chainId)).length / c.decisions.length).toFixed(3)}`,
);
const full = decided.find((c) => c.name === 'full-memory')!.decisions;
if (full.some((d) => d.choice !== finals.get(d.chainId))) throw new Error('full memory disagrees with the oracle');

t = process.hrtime.bigint();
const ladder = runDecisionLadder(manifest, records, { seed: 'bench', archived: full });
const ladderSeconds = seconds(t);
const changed = (['C', 'U', 'S', 'T'] as const).map(
  (c) => `${c} ${ladder.rows[c].filter((r) => r.changed).length}/${ladder.rows[c].length}`,
);

// the same decisions (and ladder) written as a sealed evidence unit: one durable (fdatasync'd) row per
// chain, SHA-256 manifest + Merkle root, signature; then read back, verified and rebuilt from its rows
const unitRoot = mkdtempSync(join(tmpdir(), 'imep-bench-chainbench-'));
process.env['IMEP_KEYS_DIR'] ??= join(unitRoot, 'keys');
t = process.hrtime.bigint();
await writeDecisionUnit({ dir: join(unitRoot, 'decisions'), manifest, manifestHash: hash, records, seed: 1 });
const sealSeconds = seconds(t);
t = process.hrtime.bigint();
const reread = await readDecisionUnit(join(unitRoot, 'decisions'));
const readSeconds = seconds(t);
execFileSync('chmod', ['-R', 'u+w', unitRoot]);
rmSync(unitRoot, { recursive: true, force: true });
if (reread.rows.length !== CHAINS) throw new Error('the sealed unit lost rows');

const decisions = decided.reduce((s, c) => s + c.decisions.length, 0);
process.stdout.write(
  [
    `chains: ${CHAINS} (K = 2, 3), decision conditions: ${decided.length}, decisions: ${decisions}`,
    `baseline (generate manifest + build records): ${baseline.toFixed(2)} s`,
    `decide, 6 conditions:                         ${decide.toFixed(2)} s  (${(decide / baseline).toFixed(2)} × baseline, ${((decide / decisions) * 1e6).toFixed(1)} µs/decision)`,
    `C/U/S/T ladder:                               ${ladderSeconds.toFixed(2)} s  (${(ladderSeconds / baseline).toFixed(2)} × baseline)`,
    `decide + ladder → sealed unit:               ${sealSeconds.toFixed(2)} s  (${(sealSeconds / baseline).toFixed(2)} × baseline)`,
    `verify + rebuild from the sealed rows:        ${readSeconds.toFixed(2)} s  (${(readSeconds / baseline).toFixed(2)} × baseline)`,
    `accuracy: ${accuracy.join(', ')}`,
    `ladder changed vs archived: ${changed.join(', ')}`,
  ].join('\n') + '\n',
);
