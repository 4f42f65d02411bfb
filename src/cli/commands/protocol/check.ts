/**
 * `imep protocol check FILE [--campaigns-dir D] [--allow-large-plan]`: validates a protocol file without running
 * anything, and lists EVERY problem the failing stage found (YAML syntax, duplicate keys, schema, cross-field rules —
 * a later stage runs once the earlier one passes), one line each, `FILE:LINE:COL: PATH: what — fix`, at most
 * MAX_LISTED of them; exit 2 when any. A protocol that loads then goes through every check a precommit makes that
 * writes and starts nothing (src/campaign/precommit-checks.ts, the same list precommit runs): the first refusal is
 * the line precommit would print (exit 2); warnings (a criterion that cannot hold at the registered n) are printed
 * and exit 0.
 */
import type { Command } from 'commander';
import { ImepError, simulatorFaces } from '../../../core/index.js';
import { ProtocolError, loadProtocol, type Protocol } from '../../../protocol/index.js';
import { checkpointSource, precommitCheckInput } from '../../../campaign/index.js';
import { runPrecommitChecks } from '../../../campaign/index.js';

export const MAX_LISTED = 100;

type Loaded = Awaited<ReturnType<typeof loadProtocol>>;

/** The protocol; a failing stage with several problems lists them on stdout and is refused with their count. */
async function loadListingEvery(file: string): Promise<Loaded> {
  try {
    return await loadProtocol(file);
  } catch (e) {
    if (!(e instanceof ProtocolError) || e.total <= 1) throw e;
    const shown = e.issues.slice(0, MAX_LISTED);
    for (const issue of shown) process.stdout.write(`${new ProtocolError(e.file, issue).oneLine()}\n`);
    const rest = e.total - shown.length;
    throw new ImepError(
      e.code,
      `${e.total} problems${rest > 0 ? ` (the first ${shown.length} listed on stdout, ${rest} more not shown)` : ' (listed on stdout)'}`,
      {
        ...(e.file === undefined ? {} : { file: e.file }),
        hint: 'fix them and check again; later checks run once these pass',
      },
    );
  }
}

/** What precommit checks only by starting it (a bridged simulator's servers, a policy host), in words; null if none. */
function startedAtPrecommit(protocol: Protocol): string | null {
  const sim = protocol.simulator;
  const parts: string[] = [];
  if (simulatorFaces.get(sim.kind)?.inProcess?.(sim) !== true)
    parts.push('the simulator servers (env ids, allowlists, seeds, declared facts)');
  if (protocol.policy !== undefined) parts.push(`the policy host's identity and memory`);
  return parts.length === 0
    ? null
    : `${parts.join('; ')} — precommit starts them and checks these before it writes anything`;
}

async function check(file: string, o: { campaignsDir: string; allowLargePlan?: boolean }): Promise<void> {
  const p = await loadListingEvery(file);
  const opts = { campaignsDir: o.campaignsDir, allowLargePlan: o.allowLargePlan === true };
  const r = await runPrecommitChecks(precommitCheckInput(p.protocol, file, opts));
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  const source = checkpointSource(p.protocol, {}, file);
  if (source !== null) out(source);
  r.notes.forEach(out);
  r.warnings.forEach((w) => out(`warning: ${w}`));
  const later = startedAtPrecommit(p.protocol);
  const warned =
    r.warnings.length === 0 ? '' : ` (${r.warnings.length} warning${r.warnings.length === 1 ? '' : 's'} above)`;
  out(`${file}: valid protocol ${p.protocol.id}, hash ${p.hash}${warned}`);
  if (later !== null) out(`not checked here: ${later}`);
}

export function registerCheck(group: Command): void {
  group
    .command('check')
    .description('validate a protocol file and list every problem found (at most 100), one line each')
    .argument('<file>', 'the protocol file (YAML)')
    .option(
      '--campaigns-dir <dir>',
      'the campaigns folder whose seed registry the bands are checked against',
      'campaigns',
    )
    .option(
      '--allow-large-plan',
      'accept a plan above the confirmation limit, as `campaign run --allow-large-plan` does',
    )
    .action(check);
}
