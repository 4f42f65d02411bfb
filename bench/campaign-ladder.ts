/**
 * The full blackout ladder end to end (protocols/shellgame-blackout.yaml: 400 seeds, 7 condition runs,
 * 2 attempts = 5600 episodes) through `runCampaign` — precommit, lockstep run with durable rows, seal — with
 * the lite checkpoint, into a temporary campaigns folder. Prints the wall time and its split into
 * simulator, policy, bank/intervention (sums of the timings side file) and orchestration (the rest:
 * the loop, row building, hashing, durable appends, precommit and seal), and orchestration / total.
 * Prints; asserts nothing.
 *
 *   npx tsx bench/campaign-ladder.ts [--batch B] [--n N]
 *
 * The copy binds the current checkpoint's hash (so the bench also runs while the checkpoint is rebuilt).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_BATCH, PACKAGE_ROOT } from '../src/campaign/campaign-setup.js';
import { runCampaign } from '../src/campaign/campaign.js';
import { registerBuiltinKinds } from '../src/kinds/index.js';

registerBuiltinKinds(); // the simulator, policy runtime and condition kinds a protocol names (src/kinds)

const { values } = parseArgs({
  options: { batch: { type: 'string' }, n: { type: 'string' }, keep: { type: 'boolean' } },
});
const batch = values.batch === undefined ? DEFAULT_BATCH : Number(values.batch);

const protocolFile = join(PACKAGE_ROOT, 'protocols/shellgame-blackout.yaml');
const sha = createHash('sha256')
  .update(readFileSync(join(PACKAGE_ROOT, 'checkpoints/lite-memvla/model.json')))
  .digest('hex');
let text = readFileSync(protocolFile, 'utf8').replace(/sha256: \S+/, `sha256: ${sha}`);
if (values.n !== undefined) {
  const n = Number(values.n);
  text = text
    .replace(/- \{ start: 610000, end: 610399 \}/, `- { start: 610000, end: ${610000 + n - 1} }`)
    .replace(/^n: 400$/m, `n: ${n}`);
}
const dir = mkdtempSync(join(tmpdir(), 'imep-bench-ladder-'));
const file = join(dir, 'shellgame-blackout.yaml');
writeFileSync(file, text);

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const unit = await runCampaign(file, {
  campaignsDir: join(dir, 'campaigns'),
  root: PACKAGE_ROOT,
  batchSize: batch,
  progress: null,
  say: () => undefined,
  through: 'seal',
});
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);

interface Timing {
  simMs: number;
  policyMs: number;
  bankMs: number;
  totalMs: number;
}
const timings = readFileSync(join(unit, 'rows/timings.jsonl'), 'utf8')
  .trimEnd()
  .split('\n')
  .map((l) => JSON.parse(l) as Timing);
const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
  .trimEnd()
  .split('\n')
  .map((l) => JSON.parse(l) as { steps: number });
const sum = (k: keyof Timing): number => timings.reduce((s, t) => s + t[k], 0);
const sim = sum('simMs'),
  policy = sum('policyMs'),
  bank = sum('bankMs'),
  loop = sum('totalMs');
const orchestration = wallMs - sim - policy - bank;
const steps = rows.reduce((s, r) => s + r.steps, 0);
const pct = (x: number): string => `${((100 * x) / wallMs).toFixed(1)}%`;
const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

console.log(
  `blackout ladder: ${rows.length} episodes (${steps} policy steps), batch ${batch}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()[0]?.toFixed(2)}`,
);
console.log(`wall (precommit + run + seal): ${s(wallMs)}   process CPU: ${s((cpu.user + cpu.system) / 1000)}`);
console.log(`  simulator        ${s(sim).padStart(9)}  ${pct(sim)}`);
console.log(`  policy           ${s(policy).padStart(9)}  ${pct(policy)}`);
console.log(`  bank/intervention${s(bank).padStart(9)}  ${pct(bank)}`);
console.log(`  orchestration    ${s(orchestration).padStart(9)}  ${pct(orchestration)}`);
console.log(
  `    in the episode loop (row building, digests, subscribers, scheduling)  ${s(loop - sim - policy - bank)}`,
);
console.log(`    outside it (precommit, checkpoint load, durable appends not overlapped, seal)  ${s(wallMs - loop)}`);
console.log(
  `orchestration / total = ${(orchestration / wallMs).toFixed(3)}; episodes/s = ${((rows.length * 1000) / wallMs).toFixed(1)}`,
);
if (!values.keep) rmSync(dir, { recursive: true, force: true });
else console.log(`kept ${unit}`);
