/**
 * The runner's simulator selection (src/campaign/bridge-envs.ts): which environments a protocol's
 * `simulator` gives, and the refusals before anything runs — a method-visible field the bridged
 * simulator declares evaluator-only (E_ALLOWLIST_OVERLAP), a method-visible field it does not show, an
 * env the server cannot make, a replay adapter without its files. Against the Python sim-bridge serving
 * sim-bridge/tests/fixtures/replay (env replay/tiny: shows image, state; keeps reward, success, oracle,
 * seed for the evaluator).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { privateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { bridgePython, pythonServerCommand, ServerSupervisor } from '../../src/bridges/supervisor.js';
import type { TaskEntry } from '../../src/campaign/types.js';
import { inProcessLiteEnvs, openSimulators } from '../../src/campaign/bridge-envs.js';
import { taskEntries } from '../../src/campaign/run-plan.js';
import { ImepError } from '../../src/core/errors.js';
import { parseProtocol } from '../../src/protocol/load.js';
import { SimulatorSchema, type Protocol } from '../../src/protocol/schema.js';
import { ROOT } from './helpers.js';

const FILE = '/protocols/p.yaml';
const ROOTS = [ROOT];
const REPLAY = 'sim-bridge/tests/fixtures/replay';

function protocol(
  simulator: string,
  envId: string,
  methodVisible: string,
  evaluatorOnly = '[reward, success, oracle, seed]',
): Protocol {
  const text = `version: 1
id: sims
title: simulator selection
simulator: ${simulator}
envs: [{ id: ${envId} }]
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: "${'0'.repeat(64)}" }
memory: { bank: episode-local, banks: [perceptual], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 0, end: 1 }] }
n: 2
attempts: { count: 1, registered: 1 }
conditions: [{ id: A, kind: A }]
waves: [{ id: 1, conditions: [A], anchor: A }]
estimands: [{ id: SR_A, kind: successRate, condition: A }]
executionFailures: { policy: record }
allowlists: { methodVisible: ${methodVisible}, evaluatorOnly: ${evaluatorOnly} }
`;
  return parseProtocol(text, FILE).protocol;
}

async function refusal(p: Promise<unknown>): Promise<ImepError> {
  try {
    const sims = (await p) as { close(): Promise<void> };
    await sims.close();
  } catch (e) {
    if (e instanceof ImepError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

const replaySim = `{ kind: sim-bridge, adapter: replay, replayDir: ${REPLAY} }`;

describe('openSimulators', () => {
  it('lite without transport (or in-process): the in-process lite environments, nothing started', async () => {
    for (const sim of ['{ kind: lite }', '{ kind: lite, transport: in-process }']) {
      const sims = await openSimulators(protocol(sim, 'ShellGameTouch-lite', '[rgb, toolPosition]', '[success]'), {
        file: FILE,
        roots: ROOTS,
      });
      expect(sims.envs).toBe(inProcessLiteEnvs);
      expect(sims.description).toBeNull();
      expect(sims.summary()).toBeNull();
      await sims.close();
    }
  });

  it('refuses more than one server where IMEP starts none (in-process lite, an attached endpoint), naming --servers', async () => {
    const lite = await refusal(
      openSimulators(
        protocol('{ kind: lite }', 'ShellGameTouch-lite', '[rgb, toolPosition]', '[success]'),
        { file: FILE, roots: ROOTS },
        { servers: 3 },
      ),
    );
    expect([lite.code, lite.field, lite.message]).toEqual([
      'E_USAGE',
      '--servers',
      "3 simulator servers asked for, but the protocol's simulator runs the lite simulators in process: there are no servers to start",
    ]);
    const endpoint = 'ipc:///nonexistent/imep-test.sock';
    const attached = await refusal(
      openSimulators(
        protocol(`{ kind: sim-bridge, adapter: replay, endpoint: "${endpoint}" }`, 'replay/tiny', '[image, state]'),
        { file: FILE, roots: ROOTS },
        { servers: 2 },
      ),
    );
    expect([attached.code, attached.field, attached.message]).toEqual([
      'E_USAGE',
      '--servers',
      `2 simulator servers asked for, but the protocol's simulator connects to the one server you started at ${endpoint}: IMEP starts none`,
    ]);
    // one server is what those simulators have: accepted
    const one = await openSimulators(
      protocol('{ kind: lite }', 'ShellGameTouch-lite', '[rgb, toolPosition]', '[success]'),
      { file: FILE, roots: ROOTS },
      { servers: 1 },
    );
    expect(one.envs).toBe(inProcessLiteEnvs);
  });

  it('lite over the bridge with servers: 2: two servers started; their environments reset as in process', async () => {
    const p = protocol('{ kind: lite, transport: bridge }', 'ShellGameTouch-lite', '[rgb, toolPosition]', '[success]');
    const sims = await openSimulators(p, { file: FILE, roots: ROOTS }, { servers: 2 });
    try {
      expect(sims.description).toBe('lite simulators over the bridge: 2 `imep sim serve lite` servers started by IMEP');
      const task = taskEntries(p).get('ShellGameTouch-lite') as TaskEntry;
      const envs = [0, 1, 2].map((slot) => sims.envs(task, slot));
      const firsts = await Promise.all(envs.map((e, slot) => e.reset({ seed: slot })));
      const local = await Promise.all([0, 1, 2].map((slot) => inProcessLiteEnvs(task, slot).reset({ seed: slot })));
      expect(firsts.map((r) => r.firstFrameHash)).toEqual(local.map((r) => r.firstFrameHash));
      expect(firsts.every((r) => typeof r.firstFrameHash === 'string' && r.firstFrameHash.length === 64)).toBe(true);
      expect(firsts.map((r) => r.evaluator['seed'])).toEqual([0, 1, 2]);
      for (const e of envs) await e.close();
      expect(sims.summary()).toBe('0 restarts, failed calls: none');
    } finally {
      await sims.close();
    }
  }, 30_000);

  it('sim-bridge replay: one supervised python3 -m imep_sim_bridge server; envs carry the spec the server declared', async () => {
    const p = protocol(replaySim, 'replay/tiny', '[image, state]');
    const sims = await openSimulators(p, { file: FILE, roots: ROOTS });
    try {
      expect(sims.description).toBe(
        `sim-bridge adapter replay: 1 server started by IMEP (${bridgePython()} -m imep_sim_bridge serve --endpoint ipc://… --adapters replay --replay-dir ${join(ROOT, REPLAY)})`,
      );
      const task = taskEntries(p).get('replay/tiny');
      const env = sims.envs(task as NonNullable<typeof task>, 0);
      expect(env.spec.methodVisible).toEqual(['image', 'state']);
      expect(env.spec.evaluatorOnly).toEqual(['reward', 'success', 'oracle', 'seed']);
      const r = await env.reset({ seed: 1 });
      expect(Object.keys(r.obs).sort()).toEqual(['image', 'state']);
      expect(r.evaluator['seed']).toBe(1);
      await env.close();
      expect(sims.summary()).toBe('0 restarts, failed calls: none');
    } finally {
      await sims.close();
    }
  }, 30_000);

  it('sim-bridge with endpoint: attaches to the server the user started; refuses one without the adapter', async () => {
    const ipc = await privateIpcEndpoint();
    const sup = new ServerSupervisor(
      pythonServerCommand(ipc.endpoint, { adapters: ['replay'], replayDir: join(ROOT, REPLAY) }),
      { endpoint: ipc.endpoint, readyTimeoutMs: 30_000 },
    );
    try {
      await sup.start();
      const p = protocol(
        `{ kind: sim-bridge, adapter: replay, endpoint: "${ipc.endpoint}" }`,
        'replay/tiny',
        '[image, state]',
      );
      const sims = await openSimulators(p, { file: FILE, roots: ROOTS });
      try {
        expect(sims.description).toBe(
          `sim-bridge adapter replay at ${ipc.endpoint} (started outside IMEP; never restarted by it)`,
        );
        const env = sims.envs(taskEntries(p).get('replay/tiny') as TaskEntry, 3);
        expect((await env.reset({ seed: 0 })).evaluator['seed']).toBe(0);
        await env.close();
        expect(sims.summary()).toBe('0 reconnects, failed calls: none');
      } finally {
        await sims.close();
      }
      expect(sup.running).toBe(true); // closing the simulators leaves a server IMEP did not start alone
      const wrong = await refusal(
        openSimulators(
          protocol(`{ kind: sim-bridge, adapter: mikasa, endpoint: "${ipc.endpoint}" }`, 'replay/tiny', '[image]'),
          { file: FILE, roots: ROOTS },
        ),
      );
      expect(wrong.field).toBe('simulator.adapter');
      expect(wrong.message).toBe(`the simulator server at ${ipc.endpoint} has no 'mikasa' adapter (it has: replay)`);
    } finally {
      await sup.dispose();
      await ipc.dispose();
    }
  }, 30_000);

  it('refuses a method-visible field the simulator keeps for the evaluator, and one it does not show', async () => {
    const overlap = await refusal(
      openSimulators(protocol(replaySim, 'replay/tiny', '[image, oracle]', '[reward, success, seed]'), {
        file: FILE,
        roots: ROOTS,
      }),
    );
    expect(overlap.code).toBe('E_ALLOWLIST_OVERLAP');
    expect(overlap.file).toBe(FILE);
    expect(overlap.field).toBe('allowlists.methodVisible[1]');
    expect(overlap.message).toMatch(
      /^field "oracle" is evaluator-only in replay\/tiny \(as the server at ipc:\/\/\S+ declares it\) but on the protocol's method-visible allowlist$/,
    );

    const unseen = await refusal(
      openSimulators(protocol(replaySim, 'replay/tiny', '[image, rgb]'), { file: FILE, roots: ROOTS }),
    );
    expect(unseen.code).toBe('E_PROTOCOL_INVALID');
    expect(unseen.field).toBe('allowlists.methodVisible[1]');
    expect(unseen.message).toBe('replay/tiny does not show "rgb" to the policy');
    expect(unseen.hint).toBe('method-visible fields of replay/tiny: image, state');
  }, 30_000);

  it('refuses an env the server cannot make, naming what it hosts; a replay adapter without its files', async () => {
    const missing = await refusal(
      openSimulators(protocol(replaySim, 'replay/nothing', '[image]'), { file: FILE, roots: ROOTS }),
    );
    expect(missing.field).toBe('envs[0].id');
    expect(missing.message).toContain('cannot make replay/nothing');
    expect(missing.hint).toBe('it hosts: replay/tiny');

    const noDir = await refusal(
      openSimulators(protocol('{ kind: sim-bridge, adapter: replay }', 'replay/tiny', '[image]'), {
        file: FILE,
        roots: ROOTS,
      }),
    );
    expect(noDir.code).toBe('E_PROTOCOL_INVALID');
    expect(noDir.field).toBe('simulator.replayDir');
    const badDir = await refusal(
      openSimulators(
        protocol('{ kind: sim-bridge, adapter: replay, replayDir: no/such/dir }', 'replay/tiny', '[image]'),
        { file: FILE, roots: ROOTS },
      ),
    );
    expect(badDir.message).toBe(`replay directory no/such/dir does not exist (looked in ${ROOT})`);
  }, 30_000);

  it('slot 0 of each environment adopts the one the check made (no second make); the rest make their own; unadopted ones close with the simulators', async () => {
    const ipc = await privateIpcEndpoint();
    const made: string[] = [];
    let closed = 0;
    const server = await BridgeServer.bind({
      endpoint: ipc.endpoint,
      envIds: ['ShellGameTouch-lite'],
      adapters: ['replay'],
      factory: (id, kwargs) => {
        made.push(id);
        const env = makeLiteEnv(id, kwargs);
        return {
          spec: env.spec,
          reset: (r) => env.reset(r),
          step: (a) => env.step(a),
          close: async () => void (closed += 1),
        };
      },
    });
    try {
      const p = protocol(
        `{ kind: sim-bridge, adapter: replay, endpoint: "${ipc.endpoint}" }`,
        'ShellGameTouch-lite',
        '[rgb, toolPosition]',
        '[success]',
      );
      const task = taskEntries(p).get('ShellGameTouch-lite') as TaskEntry;
      const sims = await openSimulators(p, { file: FILE, roots: ROOTS });
      expect(made).toHaveLength(1); // the check's make
      const slot0 = sims.envs(task, 0);
      const first = await slot0.reset({ seed: 3 });
      expect(made).toHaveLength(1); // adopted: no second make
      expect(first.firstFrameHash).toBe((await inProcessLiteEnvs(task, 0).reset({ seed: 3 })).firstFrameHash);
      const slot1 = sims.envs(task, 1);
      await slot1.reset({ seed: 4 });
      expect(made).toHaveLength(2); // slot 1 makes its own
      await slot0.close();
      await slot1.close();
      expect(closed).toBe(2);
      await sims.close();
      expect(closed).toBe(2); // nothing left to close

      // a check whose environment no slot adopts: closed when the simulators close
      const unused = await openSimulators(p, { file: FILE, roots: ROOTS });
      expect(made).toHaveLength(3);
      await unused.close();
      expect(closed).toBe(3);
    } finally {
      await server.close();
      await ipc.dispose();
    }
  }, 30_000);
});
