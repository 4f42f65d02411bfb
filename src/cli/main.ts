#!/usr/bin/env node
import { buildProgram, isCommanderExit } from './program.js';
import { exitCodeFor, messageFor } from './exit-codes.js';
import { registerCampaign } from './campaign-commands.js';
import { registerChainbench } from './chainbench-commands.js';
import { registerCluster } from './cluster-commands.js';
import { registerReport } from './report-commands.js';
import { registerStats } from './stats-commands.js';
import { registerSim } from './sim-commands.js';

async function main(argv: string[]): Promise<number> {
  const program = buildProgram({
    campaign: registerCampaign,
    stats: registerStats,
    sim: registerSim,
    chainbench: registerChainbench,
    cluster: registerCluster,
    report: registerReport,
  });
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (isCommanderExit(e)) {
      // help and version exit 0; usage errors (commander already printed them) exit 2
      return e.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`${messageFor(e)}\n`);
    return exitCodeFor(e);
  }
}

main(process.argv).then((code) => {
  process.exitCode = code;
});
