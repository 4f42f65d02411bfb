/**
 * `imep chainbench …`: chain manifests, decision readouts and decision replay (src/chainbench). Wires one file
 * per subcommand, in the order `imep chainbench --help` lists them:
 *
 *   imep chainbench generate --chains N --K K[,K…] --seed S --out manifest.json [--rewrite-rate r] [--distractors a-b]
 *   imep chainbench validate MANIFEST [--no-simulator]
 *   imep chainbench diff OLD NEW [--json]
 *   imep chainbench decide MANIFEST --out UNIT [--seed S] [--fallback uniform|fixed] [--replicates R] [--json]
 *   imep chainbench replay MANIFEST --decisions UNIT [--out UNIT] [--executor lite|bridge --endpoint E [--env ID]] [--no-floor] [--json]
 *   imep chainbench show UNIT [--json]
 *   imep chainbench audit MANIFEST --renamings R [--seed S] [--json]
 *
 * Thin: each parses, calls src/chainbench, prints. Manifests are written through a temp file and a rename;
 * decisions and replays are sealed evidence units (src/chainbench/unit-io.ts), and every summary printed is
 * computed from a unit's verified rows after it is sealed (decision-summary.ts, replay-summary.ts).
 */
import type { Command } from 'commander';
import { registerAudit } from './audit.js';
import { registerDecide } from './decide.js';
import { registerDiff } from './diff.js';
import { registerGenerate } from './generate.js';
import { registerReplay } from './replay.js';
import { registerShow } from './show.js';
import { registerValidate } from './validate.js';

const SUBCOMMANDS: readonly ((group: Command) => void)[] = [
  registerGenerate,
  registerValidate,
  registerDiff,
  registerDecide,
  registerReplay,
  registerShow,
  registerAudit,
];

export function registerChainbench(group: Command): void {
  for (const register of SUBCOMMANDS) register(group);
}
