/**
 * The policy-server runtime with the REAL openpi connector (connectOpenpi) against openpi's WebsocketPolicyServer
 * (openpi-server 0.1.0, unmodified) serving examples/servers/openpi_bank_server.py — a policy that keeps its own bank
 * and routes each read through IMEP's bank hook (`bankHook: true`, memory.bank: episode-local): a lite campaign
 * through the seal. A finds the ball, N_blk (every read answered []) falls to cup 0, C's rows equal A's.
 * Registered from the test (src/kinds registers the real connectors at merge). And ServerPolicy over connectVlaEval
 * against vla-eval 0.8.0's PredictModelServer (examples/servers/vla_eval_echo_server.py: actions[h] = state + h, H = 4):
 * the chunk's rows run open loop, one call per `execute` steps. Needs .venvs/policies; skipped without.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../src/campaign/campaign.js';
import { policyRuntimeKinds, serverRuntimeKind } from '../../src/campaign/index.js';
import { explicitOperator } from '../../src/evidence/index.js';
import type { ReadContext } from '../../src/banks/index.js';
import { connectOpenpi, connectVlaEval, HistoryMemory, ServerPolicy } from '../../src/policies/index.js';
import {
  POLICIES_VENV_MISSING,
  REPO_ROOT,
  startPolicyServer,
  type RunningPolicyServer,
} from '../helpers/policy-server.js';

const N = 6;

function yaml(endpoint: string): string {
  return `version: 1
id: openpi-bank-hook
title: ShellGame-lite against an unmodified openpi server whose bank reads go through IMEP
simulator: { kind: lite }
envs:
  - { id: ShellGameTouch-lite, kwargs: { blackoutFromStep: 6, strict: true, toolStart: home } }
policy: { runtime: openpi-websocket, endpoint: "${endpoint}", deadlineMs: 30000, observation: { rgb: rgb, toolPosition: toolPosition }, action: { key: actions, execute: 1 }, bankHook: true }
memory: { bank: episode-local, banks: [perceptual], capacity: 96, k: 4, consolidation: fifo }
seeds: { bands: [{ start: 630000, end: ${630000 + N - 1} }] }
n: ${N}
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: N_blk, kind: N, variant: block }
  - { id: C, kind: C }
waves:
  - { id: 1, conditions: [A, N_blk, C], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`;
}

interface Row {
  condition: string;
  seed: number;
  status: string;
  success: boolean | null;
  firstVisit: number | null;
  steps: number;
  actionDigest: string;
  reads: { total: number; empty: number; withHistory: number };
}

describe.skipIf(POLICIES_VENV_MISSING !== undefined)(
  'the openpi-websocket runtime against a real openpi server',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-openpi-runtime-'));
    let server: RunningPolicyServer | undefined;
    let off: () => void = () => undefined;
    beforeAll(async () => {
      server = await startPolicyServer(join(REPO_ROOT, 'examples/servers/openpi_bank_server.py'), {
        healthPath: '/healthz',
      });
      off = policyRuntimeKinds.override(serverRuntimeKind('openpi-websocket', connectOpenpi));
    }, 60_000);
    afterAll(async () => {
      off();
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('runs a campaign whose reads go through IMEP: N_blk heads for cup 0, C = A', async () => {
      const file = join(dir, 'bank.yaml');
      writeFileSync(file, yaml((server as RunningPolicyServer).endpoint));
      const unit = await runCampaign(file, {
        campaignsDir: join(dir, 'campaigns'),
        root: dir,
        batchSize: 3,
        progress: null,
        say: () => undefined,
        through: 'seal',
        operator: explicitOperator('openpi-runner'),
      });
      const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Row);
      const of = (c: string) => rows.filter((r) => r.condition === c).sort((a, b) => a.seed - b.seed);
      expect(rows).toHaveLength(3 * N);
      expect(rows.every((r) => r.status === 'ok')).toBe(true);
      // every step's bank read came back through IMEP's hook: recorded for A, all emptied under N_blk
      expect(of('A').every((r) => r.reads.total === r.steps && r.reads.withHistory > 0)).toBe(true);
      expect(of('N_blk').every((r) => r.reads.empty === r.reads.total && r.reads.total === r.steps)).toBe(true);
      expect(of('A').some((r) => r.firstVisit !== 0)).toBe(true); // the ball is not under cup 0 on every seed
      expect(of('A').every((r) => r.success === true)).toBe(true);
      expect(of('N_blk').every((r) => r.firstVisit === 0)).toBe(true);
      const same = (r: Row) => [r.seed, r.success, r.steps, r.actionDigest];
      expect(of('C').map(same)).toEqual(of('A').map(same));
    }, 300_000);
  },
);

describe.skipIf(POLICIES_VENV_MISSING !== undefined)('ServerPolicy against a real vla-eval model server', () => {
  let server: RunningPolicyServer | undefined;
  beforeAll(async () => {
    server = await startPolicyServer(join(REPO_ROOT, 'examples/servers/vla_eval_echo_server.py'), {
      healthPath: '/health',
    });
  }, 60_000);
  afterAll(async () => server?.stop());

  it('executes 4 rows of each chunk open loop (calls at steps 0 and 4), decision from the chunk covering step 5', async () => {
    const endpoint = (server as RunningPolicyServer).endpoint;
    const make = async (actionDim: number) => {
      const policy = new ServerPolicy({
        endpoint,
        sessions: [await connectVlaEval(endpoint, { deadlineMs: 10_000 })],
        memory: new HistoryMemory({ window: 2, stride: 4, keys: ['state'], pad: 'first' }, 1),
        observation: { state: 'state', task_description: '$instruction' },
        action: { key: 'actions', execute: 4 },
        envId: 'Echo-lite',
        instruction: 'echo the state',
        actionDim,
        decisionFromStep: 5,
      });
      const contexts: ReadContext[] = [];
      policy.setReadHook((items, ctx) => (contexts.push(ctx), items));
      await policy.resetSlot(0, { episode: 'e' });
      return { policy, contexts };
    };
    const { policy, contexts } = await make(3);
    const actions: number[][] = [];
    for (let t = 0; t < 8; t++) {
      const [out] = await policy.inferBatch([{ slot: 0, obs: { state: Float32Array.of(t, 2 * t, 3 * t) } }]);
      actions.push([...(out!.action.data as Float32Array)]);
    }
    expect(actions).toEqual([
      [0, 0, 0],
      [1, 1, 1],
      [2, 2, 2],
      [3, 3, 3],
      [4, 8, 12],
      [5, 9, 13],
      [6, 10, 14],
      [7, 11, 15],
    ]);
    expect(contexts.map((c) => [c.queryIndex, c.decisionStep, c.candidateCount])).toEqual([
      [1, false, 0],
      [5, true, 1],
    ]);
    await policy.close();
    const { policy: wrong } = await make(2);
    await expect(wrong.inferBatch([{ slot: 0, obs: { state: Float32Array.of(0, 0, 0) } }])).rejects.toThrow(
      `the server at ${endpoint} replied "actions" of shape [4, 3] (action dimension 3), but the environment Echo-lite's action is [2]`,
    );
    await wrong.close();
  }, 120_000);
});
