/**
 * connectOpenpi / connectVlaEval against the REAL, unmodified upstream servers from .venvs/policies:
 * openpi-server 0.1.0's WebsocketPolicyServer (examples/servers/openpi_echo_server.py) and a vla-eval 0.8.0
 * PredictModelServer served by vla-eval's own run_server CLI (examples/servers/vla_eval_echo_server.py), both serving
 * the known-answer policy actions[h, a] = state[a] + h (float32 [4, 3]). Connect, metadata, an episode of 3 calls
 * whose arrays equal the expected values exactly, the servers' own error paths, a deadline, and a server killed
 * while a call is pending (E_BRIDGE_REMOTE at once). Skips with the reason when .venvs/policies is absent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkOpenpiHealth,
  connectOpenpi,
  connectVlaEval,
  type OpenpiSession,
  type WireMap,
} from '../../../src/policies/servers/index.js';
import { POLICIES_VENV_MISSING, startPolicyServer, type RunningPolicyServer } from '../../helpers/policy-server.js';
import { expectImepError, timeToSettle } from './fake-server.js';
import { comparable, f32 } from './wire-cases.js';

const SKIP = POLICIES_VENV_MISSING !== undefined;
const REASON = SKIP ? ` (skipped: ${POLICIES_VENV_MISSING})` : '';
const H = 4;
const STATES = [
  [0.5, -1.25, 2],
  [0.1, 0.2, 0.3],
  [-7, 1e-3, 123.456],
];

/** The echo policy's answer, computed as numpy does it in float32. */
function expected(state: readonly number[]): WireMap {
  const s = state.map(Math.fround);
  const rows = Array.from({ length: H }, (_, h) => s.map((x) => Math.fround(x + h))).flat();
  return { actions: f32([H, s.length], rows) };
}

async function killDuringCall(server: RunningPolicyServer, call: Promise<unknown>): Promise<number> {
  setTimeout(() => void server.kill(), 300);
  const ms = await timeToSettle(call);
  await server.kill(); // resolves once the process has exited
  return ms;
}

describe.skipIf(SKIP)(`openpi-server 0.1.0 WebsocketPolicyServer, unmodified${REASON}`, () => {
  let server: RunningPolicyServer;
  beforeAll(async () => {
    server = await startPolicyServer('examples/servers/openpi_echo_server.py', { healthPath: '/healthz' });
  });
  afterAll(async () => server?.stop());

  it('health, metadata, an episode of 3 exact calls, close', async () => {
    await checkOpenpiHealth(server.endpoint, 5000);
    const session = (await connectOpenpi(server.endpoint, { deadlineMs: 10_000 })) as OpenpiSession;
    expect(session.metadata).toEqual({ policy: 'openpi-echo', action_horizon: H });
    await session.startEpisode({ envId: 'Echo-lite', instruction: 'echo the state' });
    for (const s of STATES) {
      const reply = await session.infer({ state: f32([3], s), prompt: 'echo the state' });
      expect(Object.keys(reply)).toEqual(['actions']);
      expect(comparable(reply)).toEqual(comparable(expected(s)));
      expect(typeof session.lastServerTiming?.['infer_ms']).toBe('number');
    }
    await session.endEpisode({ success: true, steps: 3 });
    await session.close();
  });
  it("the policy raises: the server's traceback text frame is one E_BRIDGE_PROTOCOL line with its last line", async () => {
    const session = await connectOpenpi(server.endpoint, { deadlineMs: 10_000 });
    await expectImepError(
      session.infer({ state: f32([3], [1, 2, 3]), raise: 'boom' }),
      'E_BRIDGE_PROTOCOL',
      server.endpoint,
      /the server sent a traceback instead of an action: ValueError: echo policy asked to raise: boom$/,
    );
    await session.close();
  });
  it('slower than the deadline: E_BRIDGE_TIMEOUT', async () => {
    const session = await connectOpenpi(server.endpoint, { deadlineMs: 500 });
    await expectImepError(
      session.infer({ state: f32([3], [1, 2, 3]), sleep: 1.5 }),
      'E_BRIDGE_TIMEOUT',
      server.endpoint,
      /no reply to infer within 500 ms/,
    );
    await session.close();
  });
  it('killed while a call is pending (last: it kills the server): E_BRIDGE_REMOTE at once', async () => {
    const session = await connectOpenpi(server.endpoint, { deadlineMs: 30_000 });
    await session.startEpisode({ envId: 'Echo-lite' });
    await session.infer({ state: f32([3], [1, 2, 3]) });
    const call = session.infer({ state: f32([3], [1, 2, 3]), sleep: 20 });
    const ms = await killDuringCall(server, call);
    await expectImepError(call, 'E_BRIDGE_REMOTE', server.endpoint, /closed the connection|connection lost/);
    expect(ms).toBeLessThan(3000);
    await session.close();
    await expectImepError(
      checkOpenpiHealth(server.endpoint, 2000),
      'E_BRIDGE_REMOTE',
      server.endpoint,
      /not listening/,
    );
  });
});

describe.skipIf(SKIP)(`vla-eval 0.8.0 PredictModelServer served by run_server, unmodified${REASON}`, () => {
  let server: RunningPolicyServer;
  beforeAll(async () => {
    server = await startPolicyServer('examples/servers/vla_eval_echo_server.py', { healthPath: '/health' });
  });
  afterAll(async () => server?.stop());

  it('HELLO metadata, two episodes (step restarts), 3 exact calls each, an ERROR that leaves the session usable', async () => {
    const session = await connectVlaEval(server.endpoint, { deadlineMs: 10_000 });
    expect(session.metadata).toMatchObject({
      protocol_version: 1,
      model_server: 'EchoModelServer',
      capabilities: {},
      action_spec: { actions: { name: 'actions', dims: 3, format: 'echo_state_plus_step' } },
      observation_spec: { state: { name: 'state', dims: 3, format: 'float32' } },
    });
    expect(typeof session.metadata['harness_version']).toBe('string');
    for (const envId of ['Echo-lite', 'Echo-lite-2']) {
      await session.startEpisode({ envId, instruction: 'echo the state' });
      for (const [i, s] of STATES.entries()) {
        const reply = await session.infer({ state: f32([3], s), task_description: 'echo the state' });
        expect(comparable(reply)).toEqual(comparable({ ...expected(s), step: i, task: envId }));
      }
      await session.endEpisode({ success: true, steps: 3 });
    }
    await session.startEpisode({ envId: 'Echo-lite' });
    await expectImepError(
      session.infer({ state: f32([3], [1, 2, 3]), raise: 'boom' }),
      'E_BRIDGE_PROTOCOL',
      server.endpoint,
      /the server answered ERROR: observation_failed: ValueError: echo model server asked to raise: boom$/,
    );
    const after = await session.infer({ state: f32([3], STATES[0]!) });
    expect(comparable(after)).toEqual(comparable({ ...expected(STATES[0]!), step: 0, task: 'Echo-lite' }));
    await session.close();
  });
  it('killed while a call is pending: E_BRIDGE_REMOTE at once', async () => {
    const session = await connectVlaEval(server.endpoint, { deadlineMs: 30_000 });
    await session.startEpisode({ envId: 'Echo-lite' });
    await session.infer({ state: f32([3], [1, 2, 3]) });
    const call = session.infer({ state: f32([3], [1, 2, 3]), sleep: 20 });
    const ms = await killDuringCall(server, call);
    await expectImepError(call, 'E_BRIDGE_REMOTE', server.endpoint, /closed the connection|connection lost/);
    expect(ms).toBeLessThan(3000);
    await session.close();
  });
});
