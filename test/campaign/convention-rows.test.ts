/**
 * The convention check through precommit and a run, with the shipped checkpoints: the quick start's unit id (its
 * protocol hash) is what it was, a run's rows are the rows the runner gives without the preflight, every shipped lite
 * protocol passes the preflight, and a protocol whose declared conventions disagree is refused before anything is
 * written (exit 2).
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { isImepError } from '../../src/core/index.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { checkpointPolicyProvider } from '../../src/campaign/checkpoint-policy.js';
import { checkpointRuntime } from '../../src/campaign/checkpoint-runtime.js';
import { allDeclarations } from '../../src/campaign/convention-check.js';
import { runConventionPreflight } from '../../src/campaign/convention-preflight.js';
import { runPrecommitChecks } from '../../src/campaign/precommit-checks.js';
import { RowSink, type RowTarget } from '../../src/campaign/index.js';
import { runPlan } from '../../src/campaign/run-plan.js';
import { unitPaths } from '../../src/evidence/index.js';
import { buildPlan, loadProtocol, loadProtocolSync } from '../../src/protocol/index.js';
import { liteInProcessEnvs } from '../../src/sims/index.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { blackoutYaml, ROOT, sandbox, writeProtocol } from './helpers.js';

const SHA = 'ff4485d8ea32a8e9a5e861f4a58caf3d5fe6b2f3bfb409b9c11152b648cf6af6'; // checkpoints/lite-memvla/model.json

const options = (campaigns: string) => ({
  campaignsDir: campaigns,
  root: ROOT,
  batchSize: 4,
  progress: null,
  say: () => undefined,
  operator: { id: 'conventions-test', source: 'explicit' as const },
});

describe('the convention preflight changes no unit and no row', () => {
  it('the quick start precommits as shellgame-blackout-750efa7a9384', async () => {
    const box = sandbox('imep-conv-');
    const dir = await precommitCampaign(join(ROOT, 'protocols/shellgame-blackout.yaml'), options(box.campaigns));
    expect(basename(dir)).toBe('shellgame-blackout-750efa7a9384');
  }, 120_000);

  it("a run's rows are the runner's rows without the preflight (shipped lite-memvla checkpoint)", async () => {
    const box = sandbox('imep-conv-');
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 3, sha: SHA, id: 'conv-rows' }));
    const dir = await runCampaign(file, options(box.campaigns));
    const rows = readFileSync(unitPaths(dir).rows, 'utf8').trim().split('\n');

    const { protocol } = loadProtocolSync(file);
    const plan = buildPlan(protocol);
    const got: string[] = [];
    const target: RowTarget = {
      appendRow: async (r) => void got.push(JSON.stringify(r)),
      appendTiming: async () => undefined,
      appendTrace: async () => undefined,
    };
    const sink = new RowSink(
      target,
      plan.episodes.map((e) => e.seq),
    );
    await runPlan({
      protocol,
      episodes: plan.episodes,
      policies: await checkpointPolicyProvider(join(ROOT, 'checkpoints/lite-memvla'), { memory: protocol.memory }),
      envs: (t) => makeLiteEnv(t.envId, t.kwargs),
      batchSize: 4,
      sink,
    });
    await sink.drain();
    expect(rows.length).toBe(plan.episodes.length);
    expect(rows.map((r) => JSON.parse(r))).toEqual(got.map((r) => JSON.parse(r)));
  }, 180_000);

  it('every shipped lite protocol with its shipped checkpoint passes the preflight', async () => {
    const files = readdirSync(join(ROOT, 'protocols')).filter((f) => f.endsWith('.yaml'));
    let ran = 0;
    for (const f of files) {
      const file = join(ROOT, 'protocols', f);
      const { protocol } = await loadProtocol(file);
      if (protocol.simulator.kind !== 'lite' || protocol.checkpoint === undefined || protocol.policy !== undefined)
        continue;
      const ctx = { file, roots: [ROOT], checkpointRoot: ROOT, batchSize: 1 };
      const provider = await checkpointRuntime.open(protocol, ctx);
      try {
        const reports = await runConventionPreflight({
          protocol,
          file,
          declarations: await allDeclarations(protocol, file, ctx, provider),
          policy: provider,
          envs: liteInProcessEnvs,
          specs: () => undefined,
          batchSize: 1,
        });
        expect(reports.length).toBe(new Set(protocol.envs.map((e) => e.task ?? e.id)).size);
        for (const r of reports) {
          expect(r.calls).toBe(3);
          expect(r.seed).toBe(0xffff_ffff); // no shipped band reaches it
        }
        ran += 1;
      } finally {
        await provider.release();
      }
    }
    expect(ran).toBeGreaterThanOrEqual(5);
  }, 180_000);
});

describe('a protocol whose declared conventions disagree is refused before anything is written', () => {
  const yaml = (conventions: string) =>
    blackoutYaml({ n: 3, sha: SHA, id: 'conv-refused' }).replace(/^memory:/m, `conventions: ${conventions}\nmemory:`);

  it('by the static check (protocol check and precommit): a 3-entry action for the 2-entry lite env', async () => {
    const box = sandbox('imep-conv-');
    const file = writeProtocol(box, 'p.yaml', yaml('{ action: [{ name: position, dims: 3, format: delta_xyz }] }'));
    const { protocol } = await loadProtocol(file);
    const input = {
      file,
      protocol,
      roots: [ROOT],
      checkpointRoot: ROOT,
      campaignsDir: box.campaigns,
      allowLargePlan: false,
      ownPolicies: false,
      ownEnvs: false,
    };
    const line = `protocol ${file} conventions: its action components cover 3 entries (position ×3), but env ShellGameTouch-lite takes 2 (position ×2)`;
    await expect(runPrecommitChecks(input)).rejects.toThrow(line);
    const e = await precommitCampaign(file, options(box.campaigns)).catch((x: unknown) => x);
    expect(isImepError(e) && e.code).toBe('E_CONVENTION_MISMATCH');
    expect(exitCodeFor(e)).toBe(2);
    expect((e as Error).message).toBe(line);
    expect(
      existsSync(box.campaigns) ? readdirSync(box.campaigns).filter((f) => f !== 'seed-registry.json') : [],
    ).toEqual([]);
  }, 120_000);

  it('by the static check: a checkpoint whose model.json declares absolute positions (precommit and protocol check)', async () => {
    const box = sandbox('imep-conv-');
    const ckpt = join(box.dir, 'ck', 'checkpoints', 'lite-memvla');
    mkdirSync(dirname(ckpt), { recursive: true });
    cpSync(join(ROOT, 'checkpoints', 'lite-memvla'), ckpt, { recursive: true });
    const m = JSON.parse(readFileSync(join(ckpt, 'model.json'), 'utf8')) as Record<string, unknown>;
    m['conventions'] = { action: [{ name: 'position', dims: 2, format: 'absolute_xy' }], chunk: 1 };
    const text = `${JSON.stringify(m, null, 2)}\n`;
    writeFileSync(join(ckpt, 'model.json'), text);
    const sha = createHash('sha256').update(text).digest('hex');
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 3, sha, id: 'conv-model' }));
    const line =
      "checkpoint checkpoints/lite-memvla/model.json conventions: action[0:2] 'position' is absolute_xy, but env ShellGameTouch-lite declares action[0:2] 'position' delta_xy (tool displacement (dx, dy), x right, y up; scaled down to length ≤ 0.06)";
    const e = await precommitCampaign(file, { ...options(box.campaigns), root: join(box.dir, 'ck') }).catch(
      (x: unknown) => x,
    );
    expect(isImepError(e) && e.code).toBe('E_CONVENTION_MISMATCH');
    expect((e as Error).message).toBe(line);
    expect(existsSync(box.campaigns) ? readdirSync(box.campaigns) : []).toEqual([]);
  }, 120_000);

  it('by the preflight: the policy declared to return chunks of 4 returns single actions', async () => {
    const box = sandbox('imep-conv-');
    const file = writeProtocol(box, 'p.yaml', yaml('{ chunk: 4 }'));
    const e = await precommitCampaign(file, options(box.campaigns)).catch((x: unknown) => x);
    expect(isImepError(e) && e.code).toBe('E_CONVENTION_MISMATCH');
    expect((e as Error).message).toMatch(
      /^policy lite-memvla .*: returned a chunk of 1 action at call 1, but protocol .*p\.yaml conventions declares chunks of 4$/,
    );
    expect(
      existsSync(box.campaigns) ? readdirSync(box.campaigns).filter((f) => f !== 'seed-registry.json') : [],
    ).toEqual([]);
  }, 120_000);
});
