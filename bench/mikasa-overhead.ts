/**
 * IMEP's overhead on real MIKASA-Robo: the same env (RememberColor3-VLA-v0, PhysX CPU, state observations),
 * the same seeds and the same policy (remember-color-memory) run
 *   plain   MIKASA's evaluation-style Python loop in one process (bench/mikasa_plain_loop.py): gym.make once,
 *           env.reset(seed) / env.step until the time limit, the policy called in-process, its bank read directly
 *   IMEP    `imep campaign run` of a one-condition protocol (A) through `seal`: the sim-bridge server and the policy
 *           host started and supervised by IMEP, every step over ZeroMQ, every bank read through memory.read and
 *           IMEP's read hook, rows written durably
 * IMEP's cost per episode is the difference of two campaign runs (N_SMALL and N seeds) divided by N − N_SMALL, so
 * process start-up, the env's make (Vulkan/lavapipe initialisation) and precommit cancel; the plain loop times its
 * episodes alone; CPU seconds (all processes) per episode come from the same two-run difference for both arms,
 * a figure less sensitive than wall time to other work on a shared machine. Prints both, their ratio (target ≤ 1.10), the simulator's own step time, and checks that both
 * arms scored the same seeds as successes. IMEP runs with `--batch 1` (BATCH=…): like the plain loop, one env.
 * With a batch of B slots one server process holds B ManiSkill envs, and ManiSkill's reset (reconfiguration_freq=1,
 * MIKASA's evaluation setting) runs gc.collect() over all of them: measured here, 16 envs in one server made
 * a 16-episode run 2.3× slower than --batch 1 (rows identical); use --batch 1 or --servers K on CPU. Needs IMEP_PYTHON from `bash scripts/setup-sims.sh mikasa`; prints one
 * line and exits 0 without it.
 *
 *   IMEP_PYTHON=… npx tsx bench/mikasa-overhead.ts        [N=24 N_SMALL=8]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { imep } from '../test/campaign/cli-support.js';
import { mikasaAOnlyProtocol } from './mikasa-a-only.js';
import { ROOT } from '../test/campaign/helpers.js';

const N = Number(process.env['N'] ?? 24);
const N_SMALL = Number(process.env['N_SMALL'] ?? 8);
const BATCH = Number(process.env['BATCH'] ?? 1);
const START = 650000;
const PY = process.env['IMEP_PYTHON'];

/** CPU seconds (user + system) of this process's waited-for children so far (Linux /proc; NaN elsewhere). */
function childCpu(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[13]) + Number(fields[14])) / 100; // cutime, cstime (fields 16, 17) in clock ticks
  } catch {
    return Number.NaN;
  }
}

async function imepRun(dir: string, n: number): Promise<{ wall: number; cpu: number; success: Map<number, boolean> }> {
  const file = join(dir, `p${n}.yaml`);
  writeFileSync(file, mikasaAOnlyProtocol({ id: `mikasa-overhead-${n}`, start: START, n }));
  const t0 = performance.now();
  const c0 = childCpu();
  const r = await imep(
    ['campaign', 'run', file, '--through', 'seal', '--batch', String(BATCH), '--campaigns-dir', `c${n}`],
    dir,
  );
  const wall = (performance.now() - t0) / 1000;
  const cpu = childCpu() - c0;
  if (r.code !== 0) throw new Error(`imep campaign run (n=${n}) exited ${r.code}: ${r.stderr.trim()}`);
  const units = join(dir, `c${n}`);
  const unit = readdirSync(units).find((d) => d.startsWith('mikasa-overhead'));
  const rows = readFileSync(join(units, unit as string, 'rows/rows.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { seed: number; success: boolean });
  return { wall, cpu, success: new Map(rows.map((x) => [x.seed, x.success])) };
}

async function main(): Promise<void> {
  if (!PY) {
    console.log('mikasa-overhead: skipped — IMEP_PYTHON is not set (bash scripts/setup-sims.sh mikasa prints it)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'imep-bench-mikasa-'));
  try {
    const plainRun = (n: number) => {
      const c0 = childCpu();
      const out = spawnSync(PY, [join(ROOT, 'bench/mikasa_plain_loop.py'), String(START), String(n)], {
        encoding: 'utf8',
      });
      if (out.status !== 0) throw new Error(`plain loop failed: ${out.stderr.trim().split('\n').slice(-1)[0]}`);
      const result = JSON.parse(out.stdout.trim().split('\n').slice(-1)[0] as string) as {
        make_s: number;
        episodes_s: number;
        env_step_s: number;
        steps: number;
        success: Record<string, boolean>;
      };
      return { cpu: childCpu() - c0, ...result };
    };
    const plainSmall = plainRun(N_SMALL);
    const plain = plainRun(N);
    const plainCpu = plain.cpu - plainSmall.cpu;
    const small = await imepRun(dir, N_SMALL);
    const large = await imepRun(dir, N);
    const imepPerEpisode = (large.wall - small.wall) / (N - N_SMALL);
    const plainPerEpisode = plain.episodes_s / N;
    const same = [...large.success].every(([seed, ok]) => plain.success[String(seed)] === ok);
    const wins = [...large.success.values()].filter(Boolean).length;
    console.log(
      `mikasa-overhead: RememberColor3-VLA-v0 (PhysX CPU, state), remember-color-memory, seeds ${START}…${START + N - 1}, ${plain.steps} steps`,
    );
    console.log(
      `simulator's own step time (inside env.step, plain loop): ${((plain.env_step_s / plain.steps) * 1000).toFixed(2)} ms/step`,
    );
    console.log(`plain loop: ${plainPerEpisode.toFixed(3)} s/episode (make ${plain.make_s.toFixed(1)} s, not counted)`);
    console.log(
      `IMEP (--batch ${BATCH}): ${imepPerEpisode.toFixed(3)} s/episode  ((run of ${N} ${large.wall.toFixed(1)} s − run of ${N_SMALL} ${small.wall.toFixed(1)} s) / ${N - N_SMALL})`,
    );
    console.log(`ratio IMEP / plain per episode = ${(imepPerEpisode / plainPerEpisode).toFixed(3)}  (target ≤ 1.10)`);
    const imepCpu = (large.cpu - small.cpu) / (N - N_SMALL);
    const plainCpuPerEpisode = plainCpu / (N - N_SMALL);
    console.log(
      `CPU seconds per episode, all processes, from the same two-run difference: plain ${plainCpuPerEpisode.toFixed(3)}, IMEP ${imepCpu.toFixed(3)}; ratio ${(imepCpu / plainCpuPerEpisode).toFixed(3)}`,
    );
    console.log(
      `same successes per seed: ${same ? 'yes' : 'NO'} (${wins}/${N}); 1-min load ${loadavg()[0]?.toFixed(2)}`,
    );
    if (!same) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
