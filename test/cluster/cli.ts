/**
 * The imep CLI as the cluster tests run it: `campaign` and `cluster` groups from sources (under tsx), so the
 * tests do not depend on main.ts wiring or on a build. SLURM tasks start this same file (the launcher below).
 *
 * TEST ONLY: IMEP_TEST_EPISODE_DELAY_MS sleeps that long before every episode reset, so a test can catch
 * an array task mid-run and scancel it. Rows do not depend on it (the environments are unchanged).
 */
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import type { EnvProvider } from '../../src/campaign/types.js';
import { registerCampaign } from '../../src/cli/commands/campaign/group.js';
import { registerCluster } from '../../src/cli/commands/cluster/group.js';
import { exitCodeFor, messageFor } from '../../src/cli/exit-codes.js';
import { buildProgram, isCommanderExit } from '../../src/cli/program.js';

const delay = Number(process.env['IMEP_TEST_EPISODE_DELAY_MS'] ?? '0');

const envs: EnvProvider = (task) => {
  const env = makeLiteEnv(task.envId, task.kwargs);
  if (!(delay > 0)) return env;
  return {
    get spec() {
      return env.spec;
    },
    reset: async (request) => {
      await sleep(delay);
      return env.reset(request);
    },
    step: (action) => env.step(action),
    close: () => env.close(),
  };
};

const launcher = [process.execPath, ...process.execArgv, fileURLToPath(import.meta.url)];

async function main(argv: string[]): Promise<number> {
  const program = buildProgram({ campaign: registerCampaign, cluster: (g) => registerCluster(g, { envs, launcher }) });
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (isCommanderExit(e)) return e.exitCode === 0 ? 0 : 2;
    process.stderr.write(`${messageFor(e)}\n`);
    return exitCodeFor(e);
  }
}

main(process.argv).then((code) => {
  process.exitCode = code;
});
