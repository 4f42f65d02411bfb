/**
 * The convention check (issue #30 item 5): every refusal class with a fake policy — wrong dimension, out of range,
 * flipped gripper, rotation format, chunk length, missing observation — each ONE line naming both sides, exit 2;
 * the preflight seed outside every band; a vla-eval server's HELLO specs read as its declaration.
 */
import { describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { isImepError, type PolicyConventions } from '../../src/core/index.js';
import { envSpecSchema } from '../../src/bridges/op-schemas.js';
import { preflightSeed } from '../../src/campaign/convention-check.js';
import { runConventionPreflight } from '../../src/campaign/convention-preflight.js';
import type { PolicyProvider, RunnerPolicy } from '../../src/campaign/types.js';
import type { Protocol } from '../../src/protocol/index.js';
import {
  actionClash,
  type DeclaredConventions,
  type EnvSpec,
  type EpisodeInfo,
  type NdArray,
  type SimEnvironment,
  type StepResult,
} from '../../src/runtime/index.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { vlaEvalConventions } from '../../src/policies/index.js';

/** robosuite OSC_POSE as sim-bridge/imep_sim_bridge/conventions.py declares it for LIBERO. */
const LIBERO_SPEC: EnvSpec = {
  id: 'libero-fake',
  maxSteps: 10,
  action: { shape: [7], dtype: 'float32', low: -1, high: 1 },
  observation: {
    image: { shape: [4, 4, 3], dtype: 'uint8' },
    state: { shape: [8], dtype: 'float32' },
    instruction: { shape: [], dtype: 'string' },
    success: { shape: [], dtype: 'bool' },
  },
  methodVisible: ['image', 'state', 'instruction'],
  evaluatorOnly: ['success'],
  seeds: [{ start: 0, end: 999_999 }],
  conventions: {
    action: [
      { name: 'position', dims: 3, format: 'delta_xyz', range: [-1, 1], description: 'robosuite OSC_POSE: ×0.05 m' },
      {
        name: 'rotation',
        dims: 3,
        format: 'axis_angle',
        range: [-1, 1],
        description: 'robosuite OSC_POSE: delta axis-angle ×0.5 rad',
      },
      {
        name: 'gripper',
        dims: 1,
        format: 'binary_close_positive',
        range: [-1, 1],
        description: 'robosuite: −1 open, +1 close',
      },
    ],
    observation: [
      { name: 'image', field: 'image', dims: 0, format: 'rgb_hwc_uint8' },
      { name: 'state', field: 'state', dims: 8, format: 'eef_pos3_axisangle3_gripper2' },
      { name: 'language', field: 'instruction', dims: 0, format: 'language' },
    ],
  },
};

class FakeLibero implements SimEnvironment {
  readonly spec = LIBERO_SPEC;
  resets: number[] = [];
  steps = 0;
  closed = false;
  private result(done: boolean): StepResult {
    return {
      obs: {
        image: { dtype: 'uint8', shape: [4, 4, 3], data: new Uint8Array(48) },
        state: new Float32Array(8),
        instruction: 'open the drawer',
      },
      evaluator: { success: false },
      done,
      step: this.steps,
    };
  }
  async reset(r: { seed: number }): Promise<StepResult> {
    this.resets.push(r.seed);
    this.steps = 0;
    return this.result(false);
  }
  async step(): Promise<StepResult> {
    this.steps += 1;
    return this.result(this.steps >= this.spec.maxSteps);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A runner policy returning `act(call)` (shape `shape`), recording what it was told. */
function fakeRunner(act: (call: number) => number[], shape?: number[], chunk?: number) {
  const resets: EpisodeInfo[] = [];
  let calls = 0;
  const runner: RunnerPolicy & { lastChunkLength?: (slot: number) => number | undefined } = {
    maxBatch: 1,
    resetSlot: async (_slot, info) => void resets.push(info),
    inferBatch: async () => {
      calls += 1;
      const values = act(calls);
      const action: NdArray = { dtype: 'float32', shape: shape ?? [values.length], data: Float32Array.from(values) };
      return [{ action, readouts: {} }];
    },
    setReadHook: () => undefined,
    slotMemory: () => ({ target: null, beginScope: () => undefined, endScope: () => undefined }),
    ...(chunk === undefined ? {} : { lastChunkLength: () => chunk }),
  };
  return { runner, resets, calls: () => calls };
}

const provider = (runner: RunnerPolicy, conventions?: DeclaredConventions): PolicyProvider => ({
  description: 'ws://127.0.0.1:9/ (fake)',
  policyFor: async () => runner,
  release: async () => undefined,
  ...(conventions === undefined ? {} : { conventions }),
});

function protocolFor(
  envId: string,
  conventions?: PolicyConventions,
  methodVisible = ['image', 'state', 'instruction'],
) {
  return {
    envs: [{ id: envId }],
    seeds: { bands: [{ start: 999_000, end: 999_999 }] },
    allowlists: { methodVisible, evaluatorOnly: ['success'] },
    ...(conventions === undefined ? {} : { conventions }),
  } as unknown as Protocol;
}

const FILE = 'p.yaml';

async function refusal(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (e) {
    if (!isImepError(e)) throw e;
    expect(e.code).toBe('E_CONVENTION_MISMATCH');
    expect(exitCodeFor(e)).toBe(2);
    expect(e.message).not.toContain('\n');
    return e.message;
  }
  throw new Error('not refused');
}

const zeros7 = () => [0, 0, 0, 0, 0, 0, -1];

/** The preflight of `runner` on the fake LIBERO env with the protocol's and the provider's declarations. */
function liberoPreflight(
  runner: RunnerPolicy,
  opts: { protocol?: PolicyConventions; declared?: DeclaredConventions; env?: FakeLibero } = {},
) {
  const env = opts.env ?? new FakeLibero();
  const protocol = protocolFor('libero-fake', opts.protocol);
  const declarations = [
    ...(opts.protocol === undefined ? [] : [{ source: `protocol ${FILE} conventions`, conventions: opts.protocol }]),
    ...(opts.declared === undefined ? [] : [opts.declared]),
  ];
  return runConventionPreflight({
    protocol,
    file: FILE,
    declarations,
    policy: provider(runner, opts.declared),
    envs: () => env,
    specs: () => undefined,
    batchSize: 1,
  });
}

const POS = { name: 'position', dims: 3, format: 'delta_xyz', range: [-1, 1] as [number, number] };
const AA = { name: 'rotation', dims: 3, format: 'axis_angle', range: [-3.15, 3.15] as [number, number] };
const CLOSE_POS = { name: 'gripper', dims: 1, format: 'binary_close_positive', range: [-1, 1] as [number, number] };
const CLOSE_NEG = { ...CLOSE_POS, format: 'binary_close_negative' };

describe('the convention preflight refuses each class of mismatch in one line naming both sides', () => {
  it('passes a policy that agrees: 3 calls on a seed outside the band, nothing else done', async () => {
    const env = new FakeLibero();
    const { runner, resets, calls } = fakeRunner(zeros7);
    const reports = await liberoPreflight(runner, { env, protocol: { action: [POS, AA, CLOSE_POS], chunk: 1 } });
    expect(calls()).toBe(3);
    expect(env.steps).toBe(3);
    expect(env.closed).toBe(true);
    // the highest seed the env takes (0 … 999,999) outside the band 999,000 … 999,999
    expect(env.resets).toEqual([998_999]);
    expect(resets[0]?.seed).toBe(998_999);
    expect(reports).toEqual([{ task: 'libero-fake', seed: 998_999, calls: 3, maxAbs: [0, 0, 0, 0, 0, 0, 1] }]);
  });

  it('wrong dimension: an 8-entry action for a 7-entry env', async () => {
    const { runner } = fakeRunner(() => [0, 0, 0, 0, 0, 0, 0, 1]);
    const msg = await refusal(() => liberoPreflight(runner));
    expect(msg).toBe(
      'policy ws://127.0.0.1:9/ (fake): returned an action of shape [8] at call 1, but env libero-fake takes [7] (position delta_xyz ×3, rotation axis_angle ×3, gripper binary_close_positive ×1)',
    );
  });

  it('out of range: a gripper value of 3 (vla-eval tolerance 0.01: 1.005 passes)', async () => {
    const ok = fakeRunner(() => [0, 0, 0, 0, 0, 0, 1.005]);
    await liberoPreflight(ok.runner);
    const { runner } = fakeRunner((call) => [0, 0, 0, 0, 0, 0, call === 2 ? 3 : 1]);
    const msg = await refusal(() => liberoPreflight(runner));
    expect(msg).toBe(
      "policy ws://127.0.0.1:9/ (fake): action[6] ('gripper') = 3 at call 2 is outside [-1, 1], the range env libero-fake declares for binary_close_positive (robosuite: −1 open, +1 close)",
    );
  });

  it('a NaN is refused as not finite', async () => {
    const { runner } = fakeRunner(() => [Number.NaN, 0, 0, 0, 0, 0, 1]);
    expect(await refusal(() => liberoPreflight(runner))).toContain("action[0:3] 'position' is NaN at call 1");
  });

  it('flipped gripper: a vla-eval server that declares binary_close_negative', async () => {
    const { runner, calls } = fakeRunner(zeros7);
    const declared = vlaEvalConventions(
      {
        harness_version: '0.8.0',
        action_spec: { position: POS, rotation: AA, gripper: CLOSE_NEG },
      },
      'ws://127.0.0.1:8000',
    );
    expect(declared).not.toBeNull();
    const msg = await refusal(() => liberoPreflight(runner, { declared: declared ?? undefined }));
    expect(msg).toBe(
      "policy ws://127.0.0.1:8000 (vla-eval HELLO): action[6] 'gripper' is binary_close_negative, but env libero-fake declares action[6] 'gripper' binary_close_positive (robosuite: −1 open, +1 close)",
    );
    expect(calls()).toBe(0); // refused from the declarations, before any call
  });

  it('rotation format: euler_xyz where the env takes axis-angle', async () => {
    const { runner } = fakeRunner(zeros7);
    const msg = await refusal(() =>
      liberoPreflight(runner, { protocol: { action: [POS, { ...AA, format: 'euler_xyz' }, CLOSE_POS] } }),
    );
    expect(msg).toBe(
      "protocol p.yaml conventions: action[3:6] 'rotation' is euler_xyz, but env libero-fake declares action[3:6] 'rotation' axis_angle (robosuite OSC_POSE: delta axis-angle ×0.5 rad)",
    );
    // a consumer that accepts it passes (vla-eval's `accepts`)
    expect(
      actionClash([{ ...AA, format: 'euler_xyz' }], [{ ...AA, accepts: ['axis_angle', 'euler_xyz'] }], 'e'),
    ).toBeNull();
    // a quaternion (4 entries) where 3 are taken: the layout
    expect(actionClash([POS, { ...AA, dims: 4, format: 'quaternion_xyzw' }], [POS, AA, CLOSE_POS], 'e')).toBe(
      "action[3:7] 'rotation' is quaternion_xyzw ×4, but env e has action[3:6] 'rotation' (axis_angle ×3) at those entries",
    );
  });

  it('chunk length: an [H, A] chunk, or a runtime reporting its server chunk, against the declared chunk', async () => {
    const chunked = fakeRunner(() => new Array(4 * 7).fill(0), [4, 7]);
    expect(await refusal(() => liberoPreflight(chunked.runner, { protocol: { chunk: 1 } }))).toBe(
      'policy ws://127.0.0.1:9/ (fake): returned a chunk of 4 actions at call 1, but protocol p.yaml conventions declares chunks of 1',
    );
    await liberoPreflight(fakeRunner(() => new Array(4 * 7).fill(0), [4, 7]).runner, { protocol: { chunk: 4 } });
    const server = fakeRunner(zeros7, undefined, 10);
    expect(await refusal(() => liberoPreflight(server.runner, { protocol: { chunk: 8 } }))).toContain(
      'returned a chunk of 10 actions at call 1, but protocol p.yaml conventions declares chunks of 8',
    );
    // two declarations that disagree
    expect(
      await refusal(() =>
        liberoPreflight(fakeRunner(zeros7).runner, {
          protocol: { chunk: 1 },
          declared: { source: 'policy ws://x (vla-eval HELLO)', conventions: { chunk: 5 } },
        }),
      ),
    ).toBe('policy ws://x (vla-eval HELLO): declares chunks of 5 actions, but protocol p.yaml conventions declares 1');
  });

  it('missing observation: a wrist image the env does not give, a state of another format, a field not allowed', async () => {
    const { runner } = fakeRunner(zeros7);
    const declared = vlaEvalConventions(
      {
        action_spec: { position: POS, rotation: AA, gripper: CLOSE_POS },
        observation_spec: {
          image: { name: 'image', dims: 0, format: 'rgb_hwc_uint8' },
          wrist_image: { name: 'image', dims: 0, format: 'rgb_hwc_uint8' },
        },
      },
      'ws://127.0.0.1:8000',
    );
    expect(await refusal(() => liberoPreflight(runner, { declared: declared ?? undefined }))).toBe(
      "policy ws://127.0.0.1:8000 (vla-eval HELLO): needs observation 'wrist_image' as rgb_hwc_uint8, which env libero-fake does not give (it gives: image=image rgb_hwc_uint8, state=state eef_pos3_axisangle3_gripper2, language=instruction language)",
    );
    expect(
      await refusal(() =>
        liberoPreflight(runner, {
          protocol: { observation: [{ name: 'state', dims: 8, format: 'eef_pos3_quat4_gripper1' }] },
        }),
      ),
    ).toBe(
      "protocol p.yaml conventions: needs observation 'state' as eef_pos3_quat4_gripper1 ×8, but env libero-fake gives state (field state) as eef_pos3_axisangle3_gripper2 ×8",
    );
    const lite = makeLiteEnv('ShellGameTouch-lite');
    const msg = await refusal(() =>
      runConventionPreflight({
        protocol: protocolFor(
          'ShellGameTouch-lite',
          { observation: [{ name: 'state', field: 'toolPosition', dims: 2, format: 'tool_xy' }] },
          ['rgb', 'instruction'],
        ),
        file: FILE,
        declarations: [
          {
            source: 'protocol p.yaml conventions',
            conventions: { observation: [{ name: 'state', field: 'toolPosition', dims: 2, format: 'tool_xy' }] },
          },
        ],
        policy: provider(fakeRunner(() => [0, 0]).runner),
        envs: () => lite,
        specs: () => undefined,
        batchSize: 1,
      }),
    );
    expect(msg).toBe(
      "protocol p.yaml conventions: needs observation 'state' from field toolPosition, which the protocol's allowlists.methodVisible does not list",
    );
  });

  it('a lite env: the tool displacement range (±0.06) and shape [2]', async () => {
    const run = (act: () => number[]) =>
      runConventionPreflight({
        protocol: protocolFor('ShellGameTouch-lite', undefined, ['rgb', 'toolPosition', 'instruction']),
        file: FILE,
        declarations: [],
        policy: provider(fakeRunner(act).runner),
        envs: () => makeLiteEnv('ShellGameTouch-lite'),
        specs: () => undefined,
        batchSize: 1,
      });
    expect((await run(() => [0.05, -0.06]))[0]?.seed).toBe(0xffff_ffff);
    expect(await refusal(() => run(() => [0.5, 0]))).toBe(
      "policy ws://127.0.0.1:9/ (fake): action[0] ('position') = 0.5 at call 1 is outside [-0.06, 0.06], the range env ShellGameTouch-lite declares for delta_xy (tool displacement (dx, dy), x right, y up; scaled down to length ≤ 0.06)",
    );
  });
});

describe('what the preflight does not refuse', () => {
  it('preflightCalls: 0 makes no call, yet still checks the declarations', async () => {
    const env = new FakeLibero();
    const { runner, calls } = fakeRunner(zeros7);
    expect(await liberoPreflight(runner, { env, protocol: { preflightCalls: 0 } })).toEqual([]);
    expect(calls()).toBe(0);
    expect(env.resets).toEqual([]);
    const msg = await refusal(() =>
      liberoPreflight(runner, { protocol: { preflightCalls: 0, action: [POS, AA, CLOSE_NEG] } }),
    );
    expect(msg).toContain("action[6] 'gripper' is binary_close_negative");
  });

  it('a policy that fails (a timeout) stops the episode and is reported, not refused: the run records failures', async () => {
    const { runner } = fakeRunner((call) => {
      if (call === 2) throw new Error('policy.infer #2: no reply within 2000 ms');
      return zeros7();
    });
    const env = new FakeLibero();
    const reports = await liberoPreflight(runner, { env });
    expect(reports).toEqual([
      {
        task: 'libero-fake',
        seed: 998_999,
        calls: 1,
        maxAbs: [0, 0, 0, 0, 0, 0, 1],
        stopped: 'policy.infer #2: no reply within 2000 ms',
      },
    ]);
    expect(env.closed).toBe(true);
  });
});

describe('the preflight seed and the declarations', () => {
  it('is the highest seed the env takes outside every band', () => {
    expect(preflightSeed([])).toBe(0xffff_ffff);
    expect(preflightSeed([{ start: 0xffff_fff0, end: 0xffff_ffff }])).toBe(0xffff_ffef);
    expect(
      preflightSeed(
        [
          { start: 90, end: 99 },
          { start: 80, end: 89 },
        ],
        [{ start: 0, end: 99 }],
      ),
    ).toBe(79);
    expect(preflightSeed([{ start: 0, end: 9 }], [{ start: 0, end: 9 }])).toBeNull();
  });

  it('a vla-eval HELLO without specs declares nothing; a malformed one is a protocol error naming the endpoint', () => {
    expect(vlaEvalConventions({ harness_version: '0.8.0' }, 'ws://h:1')).toBeNull();
    expect(() => vlaEvalConventions({ action_spec: { gripper: 'close' } }, 'ws://h:1')).toThrow(
      'the vla-eval server at ws://h:1 sent action_spec.gripper that is not a map',
    );
  });

  it('the lite specs declare conventions that cover their action and pass the wire schema', () => {
    for (const id of ['ShellGameTouch-lite', 'RememberColor3-lite', 'ChainDrawers-lite']) {
      const spec = makeLiteEnv(id).spec;
      const dims = spec.conventions?.action.reduce((n, c) => n + c.dims, 0);
      expect(dims).toBe(spec.action.shape.reduce((n, d) => n * d, 1));
      const wire = envSpecSchema.parse(JSON.parse(JSON.stringify(spec)));
      expect(wire.conventions).toEqual(spec.conventions);
    }
  });
});
