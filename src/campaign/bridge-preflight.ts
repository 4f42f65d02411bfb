/**
 * What a bridged simulator is asked before a campaign writes anything (bridge-envs.ts calls these while it
 * opens the simulators, and a new unit opens them before its precommit): every refusal is one line naming the
 * protocol field or the package, and exits 2 (src/cli/exit-codes.ts).
 *
 *   the adapter cannot run here (hello.unavailable: a package, a renderer missing) → E_SIM_UNAVAILABLE
 *   an env id the server does not host (wire E_UNKNOWN_ENV)                        → E_PROTOCOL_INVALID envs[k].id
 *   an env the adapter refuses to make (wire E_ADAPTER: bad kwargs, no such suite) → E_PROTOCOL_INVALID envs[k]
 *   a missing package or renderer found only at make (wire E_SIM_UNAVAILABLE)      → E_SIM_UNAVAILABLE envs[k].id
 *   registered seeds outside the ranges the env declares it takes (EnvSpec.seeds)  → E_PROTOCOL_INVALID seeds
 *
 * A server that dies or does not answer stays E_BRIDGE_REMOTE / E_BRIDGE_TIMEOUT (exit 4: not the user's input).
 */
import type { EnvSpec } from '../runtime/index.js';
import type { HelloReply } from '../bridges/index.js';
import { ImepError, isImepError } from '../core/index.js';
import { firstSeeds, type Protocol } from '../protocol/index.js';

/** Refuses an adapter the server reports it cannot run here, with the server's reason (it names the package). */
export function assertAdapterAvailable(hello: HelloReply, adapter: string, where: string, file: string): void {
  const reason = hello.unavailable?.[adapter];
  if (reason === undefined) return;
  throw new ImepError('E_SIM_UNAVAILABLE', `the simulator adapter '${adapter}' cannot run ${where}: ${reason}`, {
    file,
    field: 'simulator.adapter',
    hint: `install the simulator stack (bash scripts/setup-sims.sh ${adapter}) and point IMEP_PYTHON at its python`,
  });
}

function hostsHint(hosts: readonly string[]): string {
  return `it hosts: ${hosts.slice(0, 12).join(', ')}${hosts.length > 12 ? `, … (${hosts.length} in all)` : ''}`;
}

/** The refusal for a preflight `make` of `envs[k]` that failed with `e`. */
export function makeRefusal(
  e: unknown,
  envId: string,
  at: (sub: string) => string,
  hosts: readonly string[],
  where: string,
  file: string,
): unknown {
  if (!isImepError(e)) return e;
  // BridgeCallError's wire code, read without importing bridges/ at run time (in-process lite runs never load it)
  const wire = 'wireCode' in e ? (e as { wireCode: unknown }).wireCode : undefined;
  const message = `the simulator server ${where} cannot make ${envId}: ${e.message}`;
  if (wire === 'E_UNKNOWN_ENV') {
    return new ImepError('E_PROTOCOL_INVALID', message, {
      file,
      field: at('.id'),
      hint: hosts.length > 0 ? hostsHint(hosts) : 'check the adapter and the env id',
      cause: e,
    });
  }
  if (wire === 'E_ADAPTER') {
    return new ImepError('E_PROTOCOL_INVALID', message, {
      file,
      field: at(''),
      hint: 'check the env id and its kwargs against the adapter (sim-bridge/imep_sim_bridge/adapters)',
      cause: e,
    });
  }
  if (e.code === 'E_SIM_UNAVAILABLE') {
    return new ImepError('E_SIM_UNAVAILABLE', message, {
      file,
      field: at('.id'),
      hint: e.hint ?? 'install what the message names into the python IMEP_PYTHON points at',
      cause: e,
    });
  }
  return new ImepError(e.code, message, {
    file,
    field: at('.id'),
    ...(e.hint === undefined ? {} : { hint: e.hint }),
    cause: e,
  });
}

function describeRanges(ranges: readonly { start: number; end: number }[]): string {
  const shown = ranges.slice(0, 8).map((r) => (r.start === r.end ? `${r.start}` : `${r.start}–${r.end}`));
  return `${shown.join(', ')}${ranges.length > 8 ? `, … (${ranges.length} ranges)` : ''}`;
}

/** Refuses registered seeds outside the ranges `spec` declares the environment takes (none declared: any). */
export function assertSeedsTaken(protocol: Protocol, spec: EnvSpec, envId: string, file: string): void {
  const ranges = spec.seeds;
  if (ranges === undefined) return;
  const seeds = firstSeeds(protocol.seeds, protocol.n);
  const outside = seeds.filter((s) => !ranges.some((r) => r.start <= s && s <= r.end));
  if (outside.length === 0) return;
  const first = outside.slice(0, 5).join(', ') + (outside.length > 5 ? ', …' : '');
  throw new ImepError(
    'E_PROTOCOL_INVALID',
    `${outside.length} of the ${seeds.length} registered seeds (${first}) are outside the seeds ${envId} takes: ${describeRanges(ranges)}`,
    {
      file,
      field: 'seeds',
      hint: `register seeds inside ${describeRanges(ranges)}`,
    },
  );
}
