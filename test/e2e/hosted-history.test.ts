/**
 * History memory owned by IMEP for a policy hosted in Python (`policy: { runtime: remote, … }` + `memory.bank:
 * history`): the policy keeps no bank (`bank = "history"`, reported in its identity) and is given `history/rgb` and
 * `history/mask` in every observation, read through the hook. The same deterministic history policy served through
 * the policy-server runtime (a fake in-process connector, test/campaign/server-history-campaign.ts) gives the same
 * rows: same outcomes and the same action digests per (condition, seed).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../src/campaign/campaign.js';
import { policyRuntimeKinds, serverRuntimeKind } from '../../src/campaign/index.js';
import { explicitOperator } from '../../src/evidence/index.js';
import { fakeConnector } from '../policies/servers/fake-session.js';
import { historyPolicy, historyYaml } from '../campaign/server-history-campaign.js';

const SOURCE = `"""The history policy of test/campaign/server-history-campaign.ts, in Python: the cup its past frames show the ball under."""

import numpy as np

CUP_X = (-0.5, 0.0, 0.5)
CUP_Y = 0.25


class ShellHistoryPolicy:
    name = "shell-history"
    version = "1"
    bank = "history"  # no bank of its own: IMEP gives it history/<field> and history/mask

    def __init__(self, max_batch: int = 1) -> None:
        self.max_batch = max_batch

    def reset(self, slot: int, episode: str) -> None:
        pass

    def infer(self, slot, obs, memory):
        frames = np.asarray(obs["history/rgb"], np.float32)
        mask = np.asarray(obs["history/mask"], np.float32)
        state = np.asarray(obs["toolPosition"], np.float32)
        cup = 1
        for k in range(frames.shape[0] - 1):
            if mask[k] != 1:
                continue
            f = np.floor(frames[k].astype(np.float64) + 0.5)
            hit = (f[..., 0] == 230) & (f[..., 1] == 20) & (f[..., 2] == 20)
            if hit.any():
                col = float(np.nonzero(hit)[1].sum()) / float(hit.sum()) / frames.shape[2]
                cup = 0 if col < 1 / 3 else 1 if col < 2 / 3 else 2
        dx = min(0.06, max(-0.06, CUP_X[cup] - float(state[0])))
        dy = min(0.06, max(-0.06, CUP_Y - float(state[1])))
        return {"action": np.array([dx, dy], np.float32), "reads": []}


POLICIES = {ShellHistoryPolicy.name: ShellHistoryPolicy}
`;

interface Row {
  condition: string;
  seed: number;
  status: string;
  success: boolean | null;
  actionDigest?: string;
  steps: number;
}
const rowsOf = (unit: string): Row[] =>
  readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
const key = (r: Row): string => `${r.condition}/${r.seed}`;
const essence = (rows: Row[]) =>
  Object.fromEntries(rows.map((r) => [key(r), [r.status, r.success, r.steps, r.actionDigest ?? null]]));

describe('history memory for a hosted Python policy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-hosted-history-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the same rows as the same policy behind a policy server', async () => {
    const mods = join(dir, 'mods');
    mkdirSync(mods, { recursive: true });
    writeFileSync(join(mods, 'shell_history_policy.py'), SOURCE);
    const opts = (sub: string) => ({
      campaignsDir: join(dir, sub),
      root: dir,
      batchSize: 4,
      progress: null,
      say: () => undefined,
      through: 'seal' as const,
      operator: explicitOperator('history-runner'),
    });
    const hostedFile = join(dir, 'hosted.yaml');
    writeFileSync(
      hostedFile,
      historyYaml({
        n: 12,
        id: 'hosted-history',
        policy: `{ runtime: remote, name: shell-history, module: shell_history_policy, pythonPath: [${mods}] }`,
      }),
    );
    const hosted = rowsOf(await runCampaign(hostedFile, opts('hosted')));

    const off = policyRuntimeKinds.override(
      serverRuntimeKind(
        'openpi-websocket',
        fakeConnector((o) => historyPolicy(o)),
      ),
    );
    let served: Row[];
    try {
      const servedFile = join(dir, 'served.yaml');
      writeFileSync(servedFile, historyYaml({ n: 12, id: 'served-history' }));
      served = rowsOf(await runCampaign(servedFile, opts('served')));
    } finally {
      off();
    }
    expect(hosted).toHaveLength(served.length);
    expect(essence(hosted)).toEqual(essence(served));
    const ok = (c: string) => hosted.filter((r) => r.condition === c && r.success === true).length;
    expect([ok('A'), ok('N_blk'), ok('C'), ok('S'), ok('T')]).toEqual([12, 4, 12, 11, 0]);
  }, 300_000);
});
