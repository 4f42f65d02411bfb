/**
 * ServerPolicy (src/policies/servers/server-policy.ts) over fake sessions: which steps call, which chunk rows run
 * (open loop), decision attribution over [step, step + execute), the action refusals (no key, H < execute, wrong
 * dimension, not an array), float32 conversion, what an episode start tells the server, and errors as ImepErrors.
 */
import { describe, expect, it } from 'vitest';
import type { ReadContext } from '../../../src/banks/index.js';
import { ImepError, isImepError } from '../../../src/core/index.js';
import { HistoryMemory, ServerPolicy, type ServerPolicyOptions, type WireMap } from '../../../src/policies/index.js';
import type { NdArray, Observation } from '../../../src/runtime/index.js';
import { FakeSession } from './fake-session.js';

const EP = 'ws://127.0.0.1:8000';
const obsAt = (t: number): Observation => ({ state: Float32Array.of(t, -t), rgb: 5, instruction: 'go' });
const nd = (shape: number[], values: number[], dtype = 'float32'): NdArray => ({
  dtype,
  shape,
  data: dtype === 'float64' ? Float64Array.from(values) : Float32Array.from(values),
});
/** A chunk [H, 2] whose row r of call c is (c, r). */
const chunkOf = (h: number) => (_obs: WireMap, call: number) => ({
  actions: nd([h, 2], Array.from({ length: h }, (_, r) => [call, r]).flat()),
});

function policyWith(answer: ConstructorParameters<typeof FakeSession>[1], over: Partial<ServerPolicyOptions> = {}) {
  const session = new FakeSession(EP, answer);
  // stride 3 = execute: records are kept at call steps (the protocol refuses another stride)
  const memory = new HistoryMemory({ window: 2, stride: 3, keys: ['state'], pad: 'first' }, 1);
  const contexts: ReadContext[] = [];
  const policy = new ServerPolicy({
    endpoint: EP,
    sessions: [session],
    memory,
    observation: { 'observation/state': 'state', prompt: '$instruction', past: 'history/state', level: 'rgb' },
    action: { key: 'actions', execute: 3 },
    envId: 'Toy-lite',
    instruction: 'touch the cup',
    actionDim: 2,
    decisionFromStep: 5,
    ...over,
  });
  policy.setReadHook((items, ctx) => (contexts.push(ctx), items));
  return { policy, session, contexts };
}

async function steps(policy: ServerPolicy, n: number) {
  const out = [];
  for (let t = 0; t < n; t++) out.push((await policy.inferBatch([{ slot: 0, obs: obsAt(t) }]))[0]!);
  return out;
}

async function refusal(p: Promise<unknown>): Promise<ImepError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  if (!isImepError(e)) throw new Error(`expected an ImepError, got ${String(e)}`);
  return e;
}

describe('ServerPolicy', () => {
  it('executes `execute` rows of each chunk open loop: calls at 0, 3, 6; rows 0..2 of each; reads on call steps only', async () => {
    const { policy, session, contexts } = policyWith(chunkOf(4));
    await policy.resetSlot(0, { episode: 'ep-secret', seed: 42, task: 't', attempt: 1 });
    const out = await steps(policy, 8);
    expect(session.calls).toHaveLength(3);
    expect(out.map((o) => [...(o.action.data as Float32Array)])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
      [2, 0],
      [2, 1],
    ]);
    expect(out.map((o) => o.action.shape)).toEqual(Array(8).fill([2]));
    expect(out.map((o) => o.readouts.reads?.length)).toEqual([1, 0, 0, 1, 0, 0, 1, 0]);
    // decision: the call at 0 covers 0..2 (no decision step), at 3 covers 3..5 (5 is one), at 6 covers 6..8
    expect(contexts.map((c) => [c.queryIndex, c.decisionStep])).toEqual([
      [1, false],
      [4, true],
      [7, true],
    ]);
    expect(out[3]!.readouts.reads![0]!.ctx.decisionStep).toBe(true);
    // the observation: mapped keys, numbers as numbers, typed arrays as ndarrays, the instruction, the history
    const sent = session.calls[1]!;
    expect(sent['prompt']).toBe('touch the cup');
    expect(sent['level']).toBe(5);
    expect(sent['observation/state']).toEqual({ dtype: 'float32', shape: [2], data: Float32Array.of(3, -3) });
    expect((sent['past'] as NdArray).shape).toEqual([2, 2]);
    expect([...((sent['past'] as NdArray).data as Float32Array)]).toEqual([0, -0, 3, -3]); // steps 0 and 3 (call steps)
    expect([...((sent['history/mask'] as NdArray).data as Float32Array)]).toEqual([1, 1]);
    expect([...((session.calls[0]!['history/mask'] as NdArray).data as Float32Array)]).toEqual([0, 1]);
    // the episode start tells the env id and instruction only (never seed, task, attempt or the episode id)
    expect(session.starts).toEqual([{ envId: 'Toy-lite', instruction: 'touch the cup' }]);
    expect(JSON.stringify(session.calls)).not.toMatch(/ep-secret|42/);
    await policy.resetSlot(0, { episode: 'ep-2' });
    expect(session.ends).toEqual([{ success: false, steps: 8 }]);
  });

  it('execute 1 with an [A] reply calls every step; float64 actions become float32 exactly', async () => {
    const { policy, session } = policyWith(() => ({ actions: nd([2], [0.1, -1e-40], 'float64') }), {
      action: { key: 'actions', execute: 1 },
    });
    await policy.resetSlot(0, { episode: 'e' });
    const out = await steps(policy, 3);
    expect(session.calls).toHaveLength(3);
    expect(out[0]!.action.dtype).toBe('float32');
    expect([...(out[0]!.action.data as Float32Array)]).toEqual([Math.fround(0.1), Math.fround(-1e-40)]);
    // a plain list reply is accepted too
    const { policy: listy } = policyWith(() => ({
      actions: [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
    }));
    await listy.resetSlot(0, { episode: 'e' });
    expect((await steps(listy, 2)).map((o) => [...(o.action.data as Float32Array)])).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('refuses, in one line naming the endpoint, a reply without the key, a short chunk, a wrong dimension, a non-array', async () => {
    const cases: [ConstructorParameters<typeof FakeSession>[1], RegExp, string][] = [
      [
        () => ({ action: nd([2], [0, 0]) }),
        /the server at ws:\/\/127\.0\.0\.1:8000 replied without the action key "actions" \(keys: action\)/,
        'E_BRIDGE_PROTOCOL',
      ],
      [
        () => ({ actions: nd([2, 2], [0, 0, 0, 0]) }),
        /replied "actions" of shape \[2, 2\]: 2 action\(s\), but policy\.action\.execute is 3/,
        'E_BRIDGE_PROTOCOL',
      ],
      [
        () => ({ actions: nd([4, 7], Array(28).fill(0)) }),
        /replied "actions" of shape \[4, 7\] \(action dimension 7\), but the environment Toy-lite's action is \[2\]/,
        'E_BRIDGE_PROTOCOL',
      ],
      [
        () => ({ actions: 'Traceback (most recent call last)' }),
        /replied "actions" that is not a numeric array/,
        'E_BRIDGE_PROTOCOL',
      ],
      [
        () => ({ actions: nd([1, 4, 2], Array(8).fill(0)) }),
        /replied "actions" of shape \[1, 4, 2\]; an action is \[A\] or a chunk \[H, A\]/,
        'E_BRIDGE_PROTOCOL',
      ],
    ];
    for (const [answer, line, code] of cases) {
      const { policy } = policyWith(answer);
      await policy.resetSlot(0, { episode: 'e' });
      const e = await refusal(policy.inferBatch([{ slot: 0, obs: obsAt(0) }]));
      expect(e.code).toBe(code);
      expect(e.message).toMatch(line);
      expect(e.message).not.toContain('\n');
    }
  });

  it('session failures reach the loop as ImepErrors: their own code kept, anything else E_BRIDGE_REMOTE naming the endpoint', async () => {
    const { policy } = policyWith(() => {
      throw new ImepError('E_BRIDGE_TIMEOUT', `${EP}: no reply within 30000 ms`);
    });
    await policy.resetSlot(0, { episode: 'e' });
    expect((await refusal(policy.inferBatch([{ slot: 0, obs: obsAt(0) }]))).code).toBe('E_BRIDGE_TIMEOUT');
    const { policy: dying, session } = policyWith(() => {
      throw new Error('socket hang up');
    });
    await dying.resetSlot(0, { episode: 'e' });
    const e = await refusal(dying.inferBatch([{ slot: 0, obs: obsAt(0) }]));
    expect([e.code, e.message]).toEqual(['E_BRIDGE_REMOTE', `the server at ${EP} failed: socket hang up`]);
    expect(session.calls).toHaveLength(1);
    // the failed call's read was taken off the memory (the step is not counted): the next call's readouts hold one read
    const { policy: flaky } = policyWith((_o, call) => {
      if (call === 0) throw new Error('once');
      return { actions: nd([3, 2], Array(6).fill(0)) };
    });
    await flaky.resetSlot(0, { episode: 'e' });
    await refusal(flaky.inferBatch([{ slot: 0, obs: obsAt(0) }]));
    const [next] = await flaky.inferBatch([{ slot: 0, obs: obsAt(1) }]);
    expect(next!.readouts.reads!.map((r) => r.ctx.queryIndex)).toEqual([1]);
  });

  it('a policy made later on the same session ends the episode an earlier one left open', async () => {
    const session = new FakeSession(EP, chunkOf(3));
    const make = () =>
      new ServerPolicy({
        endpoint: EP,
        sessions: [session],
        memory: new HistoryMemory({ window: 1, stride: 3, keys: ['state'], pad: 'zeros' }, 1),
        observation: { s: 'state' },
        action: { key: 'actions', execute: 3 },
        envId: 'Toy-lite',
        decisionFromStep: 0,
      });
    const first = make();
    await first.resetSlot(0, { episode: 'a' });
    await steps(first, 4);
    await make().resetSlot(0, { episode: 'b' });
    expect(session.ends).toEqual([{ success: false, steps: 4 }]);
    expect(session.starts).toEqual([{ envId: 'Toy-lite' }, { envId: 'Toy-lite' }]);
  });

  it('slots step concurrently on their own sessions', async () => {
    let inFlight = 0;
    let most = 0;
    const slow = async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      return { actions: nd([3, 2], [1, 1, 2, 2, 3, 3]) };
    };
    const sessions = [new FakeSession(EP, slow), new FakeSession(EP, slow)];
    const policy = new ServerPolicy({
      endpoint: EP,
      sessions,
      memory: new HistoryMemory({ window: 1, stride: 1, keys: ['state'], pad: 'zeros' }, 2),
      observation: { s: 'state' },
      action: { key: 'actions', execute: 3 },
      envId: 'Toy-lite',
      decisionFromStep: 0,
    });
    await policy.resetSlot(0, { episode: 'a' });
    await policy.resetSlot(1, { episode: 'b' });
    const out = await policy.inferBatch([
      { slot: 1, obs: obsAt(0) },
      { slot: 0, obs: obsAt(0) },
    ]);
    expect(most).toBe(2);
    expect(sessions.map((s) => s.calls.length)).toEqual([1, 1]);
    expect(out.map((o) => [...(o.action.data as Float32Array)])).toEqual([
      [1, 1],
      [1, 1],
    ]);
  });
});
