/**
 * Precommit's check of what the sandboxes of a run would bind (issue 32 item 1): a policy host's `policy.pythonPath`
 * and `policy.python` (or IMEP_PYTHON), a simulator server's `simulator.replayDir`, PYTHONPATH, IMEP_SANDBOX_READ,
 * LIBERO_CONFIG_PATH and MS_ASSET_DIR. A bind that is, contains or lies inside the campaigns folder, the key store,
 * IMEP's own state or one of HOME's private folders, or that is or contains HOME, is refused in one line naming the
 * field and what it would expose (src/bridges/sandbox-exposure.ts) — before anything is written or started. A declared
 * device path that exists here and is no GPU or accelerator node (a disk, a terminal, /dev/mem) is refused the same
 * way (src/bridges/sandbox-devices.ts). It writes
 * nothing and starts nothing, so it belongs with precommit's other write-free checks. The sandbox itself checks the
 * same binds again each time it starts a process (a resumed run, a changed environment).
 *
 * Nothing is checked where nothing is sandboxed on purpose (IMEP_SANDBOX=off: the run records isolation: none) or
 * where IMEP starts no process (an `endpoint`, in-process lite simulators, a caller's own policy or environments).
 */
import {
  assertNoExposure,
  deviceRefusal,
  NOT_A_NODE,
  refusedDevice,
  requestedBinds,
  simulatorBinds,
} from '../bridges/index.js';
import type { Protocol } from '../protocol/index.js';
import { remotePolicyConfig } from './remote-policy-config.js';
import { simulatorKindOf, simulatorSandboxOptions, type SimulatorContext } from './bridge-envs.js';
import type { StartedPythonServers } from './bridge-open.js';
import { policyHostSandboxRequest } from './remote-policy-provider.js';
import { resolveHostPython, resolvePythonPath } from './hosted-policy-check.js';

export interface SandboxBindsScope {
  /** Whether IMEP starts the protocol's policy host (false: a caller supplies the policy). */
  readonly policy: boolean;
  /** Whether IMEP starts the protocol's simulator servers (false: a caller supplies the environments). */
  readonly simulator: boolean;
}

/** Refuses a protocol whose sandboxed processes would be given a protected folder (E_PROTOCOL_INVALID, one line). */
export async function checkSandboxBinds(
  protocol: Protocol,
  ctx: SimulatorContext,
  scope: SandboxBindsScope = { policy: true, simulator: true },
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  if ((env['IMEP_SANDBOX'] ?? '').toLowerCase() === 'off') return;
  const config = remotePolicyConfig(protocol);
  const kind = simulatorKindOf(protocol, ctx.file);
  const source = scope.simulator ? kind.servers(protocol.simulator) : undefined;
  // the servers IMEP starts in a sandbox (a Python sim-bridge's; IMEP's own lite servers run none of a third party's code)
  const started = source !== undefined && 'start' in source && source.start === 'python' ? source : undefined;
  const hostStarted = scope.policy && config !== undefined && config.endpoint === undefined;
  const serverStarted = started !== undefined;
  if (!hostStarted && !serverStarted) return;
  // loaded only here: a protocol that starts a process pays for execa, no other
  const { bridgePython, packageRoot, pythonServerCommand } = await import('../bridges/supervisor.js');
  const root = packageRoot();
  const devices = [
    ...(hostStarted ? (config.devices ?? []).map((d, i) => [d, `policy.devices[${i}]`] as const) : []),
    ...(started?.devices ?? []).map((d, i) => [d, `simulator.devices[${i}]`] as const),
  ];
  for (const [d, field] of devices) {
    if (d === 'nvidia' || d === 'dri') continue;
    // one missing here may exist where the run starts (checked again there); one that exists must be a GPU's
    const why = deviceRefusal(d);
    if (why !== undefined && why !== NOT_A_NODE) throw refusedDevice(field, d, why, ctx.file);
  }
  if (hostStarted) {
    const pythonPath = resolvePythonPath(config, ctx);
    const request = policyHostSandboxRequest(config, ctx, pythonPath, [], root, env);
    const command = { file: resolveHostPython(config, ctx) ?? bridgePython(), args: [], label: 'policy host' };
    assertNoExposure(requestedBinds(command, request), request.protect ?? [], { who: 'policy host', file: ctx.file });
  }
  if (serverStarted) {
    // with the context: the replay folder resolved (a missing one refused as the simulator check refuses it)
    const resolved = kind.servers(protocol.simulator, ctx) as StartedPythonServers;
    const { replayDir } = resolved;
    const options = simulatorSandboxOptions(resolved, ctx, root, env);
    const command = pythonServerCommand('ipc:///nonexistent/bridge.sock', {
      adapters: [resolved.adapter],
      ...(replayDir === undefined ? {} : { replayDir }),
    });
    assertNoExposure(simulatorBinds(command, options, env), options.protect ?? [], {
      who: 'simulator server',
      file: ctx.file,
    });
  }
}
