/**
 * `imep campaign …`: protocol file → sealed (and, with --through closeout, adjudicated and closed-out)
 * evidence unit. Wires one file per subcommand, in the order `imep campaign --help` lists them:
 *
 *   imep campaign run FILE [--through seal|closeout] [--campaigns-dir D] [--batch B] [--shard i/N]   run.ts
 *   imep campaign resume UNIT [--through seal|closeout] [--batch B]                                  resume.ts
 *   imep campaign precommit FILE [--campaigns-dir D]                                                precommit.ts
 *   imep campaign probe FILE --n K [--campaigns-dir D] [--batch B]   (stored apart from formal evidence)  probe.ts
 *   imep campaign smoke FILE --n K [--campaigns-dir D] [--batch B]                                      smoke.ts
 *   imep campaign fail-run UNIT --reason TEXT   (rows kept under failed-runs/; the unit precommitted again)  fail-run.ts
 *   imep campaign seal UNIT · verify UNIT · status UNIT · amend UNIT --text T [--affects F,…]
 *   imep campaign adjudicate UNIT [--allow-same-operator REASON] · cross-check UNIT · closeout UNIT
 *
 * Thin: each parses, calls src/campaign, src/evidence or app/pipeline, prints. UNIT is a unit folder
 * (campaigns/<protocol id>-<hash12>; unit-arg.ts). Progress goes to stderr (one live line on a TTY, plain lines
 * otherwise); results to stdout. Refusals: one line, non-zero exit (exit-codes.ts). Shared options: options.ts.
 */
import type { Command } from 'commander';
import { registerAdjudicate } from './adjudicate.js';
import { registerAmend } from './amend.js';
import { registerCloseout } from './closeout.js';
import { registerCrossCheck } from './cross-check.js';
import { registerFailRun } from './fail-run.js';
import { registerPrecommit } from './precommit.js';
import { registerProbe } from './probe.js';
import { registerResume } from './resume.js';
import { registerRun } from './run.js';
import { registerSeal } from './seal.js';
import { registerSmoke } from './smoke.js';
import { registerStatus } from './status.js';
import { registerVerify } from './verify.js';

const SUBCOMMANDS: readonly ((group: Command) => void)[] = [
  registerRun,
  registerResume,
  registerPrecommit,
  registerProbe,
  registerSmoke,
  registerFailRun,
  registerSeal,
  registerVerify,
  registerStatus,
  registerAmend,
  registerAdjudicate,
  registerCrossCheck,
  registerCloseout,
];

export function registerCampaign(group: Command): void {
  for (const register of SUBCOMMANDS) register(group);
}
