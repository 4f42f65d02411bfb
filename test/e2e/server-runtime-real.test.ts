/**
 * The policy-server runtime with the REAL openpi connector (connectOpenpi) against openpi's WebsocketPolicyServer
 * (openpi-server 0.1.0, unmodified) serving examples/servers/openpi_bank_server.py — a policy that keeps its own bank
 * and routes each read through IMEP's bank hook (`bankHook: true`, memory.bank: episode-local): a lite campaign
 * through the seal. A finds the ball, N_blk (every read answered []) falls to cup 0, C's rows equal A's.
 * Registered from the test (src/kinds registers the real connectors at merge). Needs .venvs/policies; skipped without.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../src/campaign/campaign.js';
import { registerPolicyRuntimeKind, serverRuntimeKind } from '../../src/campaign/index.js';
import { explicitOperator } from '../../src/evidence/index.js';
import { connectOpenpi } from '../../src/policies/index.js';
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
      off = registerPolicyRuntimeKind(serverRuntimeKind('openpi-websocket', connectOpenpi));
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
