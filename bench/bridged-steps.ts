/**
 * Bridged simulators stepping together: the campaign's episode loop sends every slot's step before it awaits any
 * (sendSteps, src/campaign/episode-loop.ts), so simulators on different servers step at the same time.
 * The same bridged campaign — the blackout ladder on lite simulators behind K `imep sim serve lite` servers, slot s
 * on server s mod K — runs alternately in two arms in this process:
 *   in turn    every environment's step waits until the step sent before it has answered (a wrapper queueing the
 *              steps): one step in flight, what the loop did when it awaited each step before sending the next
 *   together   the loop as it is: a batch's steps all sent at once, each server taking one call at a time
 *              (BridgeServerPool.inTurn: a step's deadline times that step, not its wait behind other slots')
 * Prints slot-steps/s of each (best of the passes), their ratio, the servers' and the orchestrator's CPU seconds,
 * and checks that both arms wrote the rows of the in-process run byte for byte. Lite servers answer in ~0.2 ms
 * of CPU each, so on a machine with few cores the gain is bounded by the cores the servers can run on; simulators
 * that take milliseconds per step (MIKASA, SimplerEnv, LIBERO) on servers with cores of their own gain up to K×.
 *
 *   npx tsx bench/bridged-steps.ts        [N=8 SERVERS=4 BATCH=16 PASSES=3]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NdArray, SimEnvironment, StepResult } from '../src/runtime/environment.js';
import { runCampaign } from '../src/campaign/campaign.js';
import { registerBuiltinKinds } from '../src/kinds/index.js';
import { type EnvProvider } from '../src/campaign/index.js';
import { BridgePool } from '../test/reliability/support/bridge-pool.js';
import { RELIABILITY_KEYS_DIR, smallBlackoutYaml } from '../test/reliability/support/cli.js';

registerBuiltinKinds(); // the simulator, policy runtime and condition kinds a protocol names (src/kinds)

const N = Number(process.env['N'] ?? 8);
const SERVERS = Number(process.env['SERVERS'] ?? 4);
const BATCH = Number(process.env['BATCH'] ?? 16);
const PASSES = Number(process.env['PASSES'] ?? 3);

/** Queues every step behind the one sent before it (all environments of the provider share the queue). */
function inTurn(envs: EnvProvider): EnvProvider {
  let last: Promise<unknown> = Promise.resolve();
  return (task, slot) => {
    const inner = envs(task, slot);
    const env: SimEnvironment = {
      spec: inner.spec,
      reset: (r) => inner.reset(r),
      step: (a: NdArray): Promise<StepResult> => {
        const p = last.then(() => inner.step(a));
        last = p.catch(() => undefined);
        return p;
      },
      close: () => inner.close(),
    };
    return env;
  };
}

process.env['IMEP_KEYS_DIR'] ??= RELIABILITY_KEYS_DIR;
const quiet = { progress: null, say: () => undefined, operator: { id: 'bench', source: 'explicit' as const } };
const dir = mkdtempSync(join(tmpdir(), 'imep-bench-bridged-'));
const file = join(dir, 'p.yaml');
writeFileSync(file, smallBlackoutYaml(N));
const rowsOf = (unit: string): string => readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8');
const cpuOf = (pid: number | undefined): number => {
  if (pid === undefined) return 0;
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, clock ticks of 10 ms
};
const pool = await BridgePool.start(SERVERS, { stepMs: 30_000 });
/** CPU seconds of every server process so far. */
const serversCpu = (): number => pool.pids().reduce<number>((sum, pid) => sum + cpuOf(pid), 0);
try {
  const reference = rowsOf(await runCampaign(file, { ...quiet, campaignsDir: join(dir, 'ref'), batchSize: BATCH }));
  const steps = reference
    .trimEnd()
    .split('\n')
    .reduce((n, l) => n + (JSON.parse(l) as { steps: number }).steps, 0);
  const best = new Map<string, { seconds: number; serverCpu: number; selfCpu: number }>();
  const identical = new Map<string, boolean>();
  const load0 = loadavg()[0] as number;
  for (let pass = 0; pass < PASSES; pass++) {
    for (const [arm, envs] of [
      ['in turn', inTurn(pool.envs())],
      ['together', pool.envs()],
    ] as const) {
      const server0 = serversCpu();
      const self0 = process.cpuUsage();
      const t0 = performance.now();
      const unit = await runCampaign(file, {
        ...quiet,
        campaignsDir: join(dir, `${arm}-${pass}`),
        batchSize: BATCH,
        envs,
      });
      const seconds = (performance.now() - t0) / 1000;
      const self = process.cpuUsage(self0);
      const r = { seconds, serverCpu: serversCpu() - server0, selfCpu: (self.user + self.system) / 1e6 };
      if ((best.get(arm)?.seconds ?? Infinity) > seconds) best.set(arm, r);
      identical.set(arm, (identical.get(arm) ?? true) && rowsOf(unit) === reference);
    }
  }
  console.log(
    `bridged campaign: blackout ladder n=${N} (${reference.trimEnd().split('\n').length} rows, ${steps} steps), ${SERVERS} lite servers, batch ${BATCH}, best of ${PASSES} passes per arm (precommit, run and seal included)`,
  );
  for (const [arm, r] of best) {
    console.log(
      `  ${arm.padEnd(8)}: ${(steps / r.seconds).toFixed(0).padStart(6)} slot-steps/s  (${r.seconds.toFixed(2)} s; CPU: orchestrator ${r.selfCpu.toFixed(2)} s, servers ${r.serverCpu.toFixed(2)} s; rows byte-identical to the in-process run: ${identical.get(arm) === true ? 'yes' : 'NO'})`,
    );
  }
  const a = best.get('in turn'),
    b = best.get('together');
  if (a !== undefined && b !== undefined)
    console.log(
      `  ratio together / in turn: ${(a.seconds / b.seconds).toFixed(2)}× on ${availableParallelism()} cores (1-min load ${load0.toFixed(2)} → ${(loadavg()[0] as number).toFixed(2)})`,
    );
  if ([...identical.values()].some((x) => !x)) process.exitCode = 1;
} finally {
  await pool.dispose();
  rmSync(dir, { recursive: true, force: true });
}
