/**
 * The convention preflight through the policy-server runtimes (src/campaign/server-runtime.ts) with an in-process fake
 * server: what a vla-eval server declares in its HELLO reaches the check (PolicyProvider.conventions), a server's
 * chunk length is seen through ServerPolicy.lastChunkLength, and a server that agrees precommits as before.
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precommitCampaign } from '../../src/campaign/campaign.js';
import { policyRuntimeKinds, serverRuntimeKind } from '../../src/campaign/index.js';
import { isImepError } from '../../src/core/index.js';
import { explicitOperator } from '../../src/evidence/index.js';
import type { ServerSession, WireMap } from '../../src/policies/index.js';
import { FakeSession } from '../policies/servers/fake-session.js';
import { sandbox, writeProtocol } from './helpers.js';
import { ENDPOINT, historyPolicy, historyYaml } from './server-history-campaign.js';

const DELTA_XY = { name: 'position', dims: 2, format: 'delta_xy', range: [-0.06, 0.06] };
let metadata: WireMap = {};
let chunk = 1;
const answer = (obs: WireMap): WireMap => {
  const one = historyPolicy(obs)['actions'] as { data: Float32Array };
  const rows = Array.from({ length: chunk }, () => Array.from(one.data));
  const data = Float32Array.from(rows.flat());
  return { actions: { dtype: 'float32', shape: chunk === 1 ? [2] : [chunk, 2], data } };
};
let unregister: () => void = () => undefined;
beforeAll(() => {
  // each session says the current `metadata` first (the kind reads it when it connects)
  unregister = policyRuntimeKinds.override(
    serverRuntimeKind('vla-eval', async (endpoint: string): Promise<ServerSession> => {
      const s = new FakeSession(endpoint, answer);
      Object.defineProperty(s, 'metadata', { value: metadata });
      return s;
    }),
  );
});
afterAll(() => unregister());

const options = (box: ReturnType<typeof sandbox>) => ({
  campaignsDir: box.campaigns,
  root: box.root,
  batchSize: 2,
  progress: null,
  say: () => undefined,
  operator: explicitOperator('conventions-server'),
});

async function precommit(extra = '', execute = 1): Promise<{ e: unknown; written: string[] }> {
  const box = sandbox('imep-conv-server-');
  let yaml = historyYaml({ n: 3, runtime: 'vla-eval' }).replace('execute: 1', `execute: ${execute}`);
  if (extra !== '') yaml = yaml.replace(/^memory:/m, `${extra}\nmemory:`);
  const file = writeProtocol(box, 'p.yaml', yaml);
  const e = await precommitCampaign(file, options(box)).catch((x: unknown) => x);
  const written = existsSync(box.campaigns) ? readdirSync(box.campaigns).filter((f) => f !== 'seed-registry.json') : [];
  return { e, written };
}

describe('the convention preflight against a policy server', () => {
  it("refuses what the server's HELLO declares: a flipped gripper on a 3-entry action the lite env does not take", async () => {
    metadata = {
      action_spec: {
        position: { name: 'position', dims: 3, format: 'delta_xyz', range: [-1, 1] },
        gripper: { name: 'gripper', dims: 1, format: 'binary_close_negative', range: [-1, 1] },
      },
    };
    chunk = 1;
    const { e } = await precommit();
    expect(isImepError(e) && e.code).toBe('E_CONVENTION_MISMATCH');
    expect((e as Error).message).toBe(
      `policy ${ENDPOINT} (vla-eval HELLO): its action components cover 4 entries (position ×3, gripper ×1), but env ShellGameTouch-lite takes 2 (position ×2)`,
    );
  });

  it('refuses an observation the HELLO says the server needs and the env does not give (a wrist image)', async () => {
    metadata = {
      action_spec: { position: DELTA_XY },
      observation_spec: { wrist_image: { name: 'image', dims: 0, format: 'rgb_hwc_uint8' } },
    };
    const { e } = await precommit();
    expect((e as Error).message).toMatch(
      new RegExp(
        `^policy ${ENDPOINT} \\(vla-eval HELLO\\): needs observation 'wrist_image' as rgb_hwc_uint8, which env ShellGameTouch-lite does not give`,
      ),
    );
  });

  it('sees the chunk the server returns against the declared one; a server that agrees precommits', async () => {
    metadata = { action_spec: { position: DELTA_XY } };
    chunk = 4;
    const refused = await precommit('conventions: { chunk: 8 }', 2);
    expect((refused.e as Error).message).toMatch(
      /: returned a chunk of 4 actions at call 1, but protocol .*p\.yaml conventions declares chunks of 8$/,
    );
    expect(refused.written).toEqual([]);
    const ok = await precommit('conventions: { chunk: 4 }', 2);
    expect(ok.e).toMatch(/shellgame-history-server-[0-9a-f]{12}$/);
    expect(ok.written.length).toBe(1);
  });
});
