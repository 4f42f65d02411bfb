/**
 * Real MIKASA-Robo on CPU with more than one environment at a time (#21). ManiSkill 3.0.0b15 refuses a vectorised
 * env on the CPU backend ("Cannot set the sim backend to 'cpu' and have multiple environments"), so IMEP's way
 * to run environments side by side on CPU is what it already has: B lockstep slots (`--batch B`), each its own
 * single-env handle, on K server processes (`--servers K`; slot s on server s mod K). This bench runs the same
 * one-condition protocol (RememberColor3-VLA-v0, PhysX CPU, state observations, hosted remember-color-memory, A
 * only, N seeds) through `seal` these ways, in one command:
 *   base      --servers 1 --batch 1   one env at a time (what the CI campaign runs)
 *   1×2       --servers 1 --batch 2   two single envs in one server process, one message per step
 *   2×2       --servers 2 --batch 2   two single envs, one per server process
 *   vec 1×2   --servers 1 --batch 2   vectorised hosting (`simulator.vectorize: true`): one server, each slot's env
 *                                     in a worker process of its own, one makeBatch and one stepBatch per tick
 *   1×4, vec 1×4                      the same with four slots
 * and prints each run's wall time, environment steps per second (rows' steps ÷ wall, start-up included), the
 * ratio to base and, for a vectorised arm, to the same batch with one message per step; and checks that every
 * run's rows are identical (rows never depend on batch, servers or hosting).
 * On 2 cores shared with other work the figures move with the load (printed). Needs IMEP_PYTHON from
 * `bash scripts/setup-sims.sh mikasa`; prints one line and exits 0 without it.
 *
 *   IMEP_PYTHON=… npx tsx bench/mikasa-servers.ts        [N=8]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { imep } from '../test/campaign/cli-support.js';
import { mikasaAOnlyProtocol } from './mikasa-a-only.js';

const N = Number(process.env['N'] ?? 8);
const START = 660000;
const PY = process.env['IMEP_PYTHON'];

interface Arm {
  readonly name: string;
  readonly servers: number;
  readonly batch: number;
  readonly vectorize: boolean;
}

const ARMS: readonly Arm[] = [
  { name: 'base', servers: 1, batch: 1, vectorize: false },
  { name: '1×2', servers: 1, batch: 2, vectorize: false },
  { name: '2×2', servers: 2, batch: 2, vectorize: false },
  { name: 'vec 1×2', servers: 1, batch: 2, vectorize: true },
  { name: '1×4', servers: 1, batch: 4, vectorize: false },
  { name: 'vec 1×4', servers: 1, batch: 4, vectorize: true },
];

async function run(dir: string, arm: Arm): Promise<{ wall: number; steps: number; rows: string; load: number }> {
  const load = loadavg()[0] ?? Number.NaN;
  const t0 = performance.now();
  const campaigns = `c-${arm.servers}-${arm.batch}${arm.vectorize ? '-vec' : ''}`;
  const r = await imep(
    [
      'campaign',
      'run',
      arm.vectorize ? 'p-vec.yaml' : 'p.yaml',
      '--through',
      'seal',
      '--servers',
      String(arm.servers),
      '--batch',
      String(arm.batch),
      '--campaigns-dir',
      campaigns,
    ],
    dir,
  );
  const wall = (performance.now() - t0) / 1000;
  if (r.code !== 0)
    throw new Error(`imep campaign run (${arm.name}) exited ${r.code}: ${r.stderr.trim().split('\n').at(-1)}`);
  const unit = readdirSync(join(dir, campaigns)).find((d) => d.startsWith('mikasa-servers')) as string;
  const rows = readFileSync(join(dir, campaigns, unit, 'rows/rows.jsonl'), 'utf8');
  const steps = rows
    .trimEnd()
    .split('\n')
    .reduce((n, l) => n + (JSON.parse(l) as { steps: number }).steps, 0);
  return { wall, steps, rows, load };
}

async function main(): Promise<void> {
  if (!PY) {
    console.log('mikasa-servers: skipped — IMEP_PYTHON is not set (bash scripts/setup-sims.sh mikasa prints it)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'imep-bench-mikasa-servers-'));
  try {
    writeFileSync(join(dir, 'p.yaml'), mikasaAOnlyProtocol({ id: 'mikasa-servers', start: START, n: N }));
    writeFileSync(
      join(dir, 'p-vec.yaml'),
      mikasaAOnlyProtocol({ id: 'mikasa-servers', start: START, n: N, vectorize: true }),
    );
    console.log(
      `mikasa-servers: RememberColor3-VLA-v0 (PhysX CPU, state), remember-color-memory, A on seeds ${START}…${START + N - 1}, through seal`,
    );
    const results: { arm: Arm; wall: number; steps: number; rows: string; load: number }[] = [];
    for (const arm of ARMS) results.push({ arm, ...(await run(dir, arm)) });
    const base = results[0] as (typeof results)[number];
    const spsOf = (r: (typeof results)[number]): number => r.steps / r.wall;
    for (const r of results) {
      const sps = spsOf(r);
      const plain = r.arm.vectorize
        ? results.find((p) => !p.arm.vectorize && p.arm.servers === r.arm.servers && p.arm.batch === r.arm.batch)
        : undefined;
      const vsPlain = plain === undefined ? '' : `; ÷ ${plain.arm.name} = ${(sps / spsOf(plain)).toFixed(3)}`;
      console.log(
        `${r.arm.name.padEnd(7)} --servers ${r.arm.servers} --batch ${r.arm.batch}${r.arm.vectorize ? ' vectorize' : ''}: ${r.wall.toFixed(1)} s, ${r.steps} steps, ${sps.toFixed(2)} steps/s; steps/s ÷ base = ${(sps / spsOf(base)).toFixed(3)}${vsPlain}; 1-min load at start ${r.load.toFixed(2)}`,
      );
    }
    const same = results.every((r) => r.rows === base.rows);
    console.log(`rows identical across the ${results.length} runs: ${same ? 'yes' : 'NO'}`);
    if (!same) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
