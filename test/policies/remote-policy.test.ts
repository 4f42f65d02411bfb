/**
 * RemotePolicy against the Python policy host (`python3 -m imep_sim_bridge.policy_host`, policy
 * `shell-game-memory`) on ShellGameTouch-lite under blackout from step 6, strict: the hosted policy's reads
 * come back through memory.read and get IMEP's interventions (N_block changes its behaviour as it would a
 * local policy's), the hook sees every read the host reports, and a dead or stopped host is a typed error
 * within the deadline.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/hash.js';
import type { ReadContext, ReadHook } from '../../src/banks/record.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import type { SimEnvironment } from '../../src/runtime/environment.js';
import { ImepError } from '../../src/core/errors.js';
import { blockHook } from '../../src/interventions/no-access.js';
import { runLockstep, type EpisodeOutcome, type LockstepEpisode } from '../../src/runtime/lockstep.js';
import { privateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { packageRoot, ServerSupervisor } from '../../src/bridges/supervisor.js';
import { policyHostCommand, RemotePolicy } from '../../src/policies/remote-policy.js';

const SEEDS = Array.from({ length: 12 }, (_, i) => 100 + i);
const KWARGS = { blackoutFromStep: 6, strict: true };

function episodes(tag: string): LockstepEpisode[] {
  return SEEDS.map((seed) => ({ info: { episode: `${tag}-${seed}`, seed }, reset: { seed } }));
}

async function run(
  policy: RemotePolicy,
  tag: string,
  hook: ReadHook,
): Promise<{ outcomes: EpisodeOutcome[]; hookCalls: ReadContext[]; reportedReads: number }> {
  const hookCalls: ReadContext[] = [];
  policy.setReadHook((items, ctx) => {
    hookCalls.push(ctx);
    return hook(items, ctx);
  });
  const envs = new Map<number, SimEnvironment>();
  let reportedReads = 0;
  const outcomes = await runLockstep(
    policy,
    (slot) => {
      const env = makeLiteEnv('ShellGameTouch-lite', KWARGS);
      envs.set(slot, env);
      return env;
    },
    episodes(tag),
    { subscribers: [{ onStep: (_s, _e, _b, out) => void (reportedReads += out.readouts.reads?.length ?? 0) }] },
  );
  for (const env of envs.values()) await env.close();
  return { outcomes, hookCalls, reportedReads };
}

const success = (o: EpisodeOutcome): boolean => o.last.evaluator['success'] === true;
const ballCup = (o: EpisodeOutcome): number => o.last.evaluator['ballCup'] as number;

describe('RemotePolicy over the Python policy host', () => {
  let policy: RemotePolicy;
  beforeAll(async () => {
    policy = await RemotePolicy.spawn({
      policy: 'shell-game-memory',
      maxBatch: 4,
      deadlineMs: 10_000,
      readDeadlineS: 5,
    });
  }, 30_000);
  afterAll(async () => {
    await policy?.close();
  });

  it('advertises the policy ops and refuses a policy the host does not serve', async () => {
    expect(policy.hello.policies).toEqual(['shell-game-memory']);
    expect(policy.hello.ops).toEqual(expect.arrayContaining(['policy.reset', 'policy.infer']));
    const wrong = RemotePolicy.connect({ endpoint: policy.endpoint, policy: 'nope', maxBatch: 1, deadlineMs: 5000 });
    await expect(wrong).rejects.toMatchObject({ code: 'E_USAGE', field: 'policy' });
    await expect(wrong).rejects.toThrow(/serves policies \[shell-game-memory\], not 'nope'/);
  });

  it('N_block changes the hosted policy from success to its memoryless default, and the hook sees every read', async () => {
    const withMemory = await run(policy, 'mem', (items) => items);
    const blocked = await run(policy, 'blk', blockHook);

    // with its reads intact it finds the ball cup on every seed
    expect(withMemory.outcomes.filter(success).length).toBe(SEEDS.length);
    // blocked, it goes to cup 0: success exactly where the ball is under cup 0 (chance level: 1/3 in expectation)
    const cup0 = withMemory.outcomes.filter((o) => ballCup(o) === 0).length;
    expect(blocked.outcomes.map(success)).toEqual(blocked.outcomes.map((o) => ballCup(o) === 0));
    expect(blocked.outcomes.filter(success).length).toBe(cup0);
    expect(cup0).toBeLessThan(SEEDS.length / 2);
    expect(cup0).toBeGreaterThan(0);

    for (const r of [withMemory, blocked]) {
      const steps = r.outcomes.reduce((n, o) => n + o.steps, 0);
      // one read per policy step: the hook answered each, and the host reported exactly those
      expect(r.hookCalls.length).toBe(steps);
      expect(r.reportedReads).toBe(steps);
      // the hook got the host's ReadContext: per episode, query clock 1, 2, … and candidates 0, 1, …
      const ep = r.outcomes[0]?.episode.info.episode as string;
      const ctxs = r.hookCalls.filter((c) => c.episode === ep);
      expect(ctxs.map((c) => c.queryIndex)).toEqual(ctxs.map((_, i) => i + 1));
      expect(ctxs.map((c) => c.candidateCount)).toEqual(ctxs.map((_, i) => i));
      expect(ctxs.every((c) => c.bank === 'perceptual' && c.scope === ep && c.decisionStep)).toBe(true);
    }
    expect(policy.readsSeen).toBe(withMemory.hookCalls.length + blocked.hookCalls.length);
  }, 40_000);

  it('readouts carry the identities the hook returned', async () => {
    policy.setReadHook((items) => items.slice(0, 1));
    await policy.resetSlot(0, { episode: 'ids' });
    const env = makeLiteEnv('ShellGameTouch-lite', KWARGS);
    let r = await env.reset({ seed: 7 });
    let out;
    for (let t = 0; t < 6; t += 1) {
      [out] = await policy.inferBatch([{ slot: 0, obs: r.obs }]);
      r = await env.step((out as NonNullable<typeof out>).action);
    }
    await env.close();
    const reads = out?.readouts.reads ?? [];
    expect(reads).toHaveLength(1);
    expect(reads[0]?.identities.map((i) => i.timestep)).toEqual([0]);
    expect(reads[0]?.ctx.queryIndex).toBe(6);
    expect(out?.readouts.decisionLogits).toBeInstanceOf(Float32Array);
  });

  it('reports the hosted policy identity from hello (version, memory, source file SHA-256)', () => {
    const id = policy.identity;
    expect(id?.version).toBe('1');
    expect(id?.memory).toEqual({ bank: 'episode-local', banks: ['perceptual'], k: 4 });
    const source = readFileSync(join(packageRoot(), 'sim-bridge/imep_sim_bridge/policy_host.py'));
    expect(id?.files).toEqual([
      { path: 'imep_sim_bridge/policy_host.py', bytes: source.length, sha256: sha256Hex(source) },
    ]);
  });
});

describe('RemotePolicy with the evaluator decision-step rule', () => {
  it('relabels ctx.decisionStep by elapsed step before the hook, and still audits the host report', async () => {
    const policy = await RemotePolicy.spawn({
      policy: 'shell-game-memory',
      maxBatch: 1,
      deadlineMs: 10_000,
      decisionStep: (step) => step >= 5,
    });
    try {
      const seen: boolean[] = [];
      policy.setReadHook((items, ctx) => {
        seen.push(ctx.decisionStep);
        return items;
      });
      const env = makeLiteEnv('ShellGameTouch-lite', KWARGS);
      for (const episode of ['d1', 'd2']) {
        await policy.resetSlot(0, { episode });
        let r = await env.reset({ seed: 3 });
        for (let t = 0; t < 7; t += 1) {
          const [out] = await policy.inferBatch([{ slot: 0, obs: r.obs }]);
          expect(out?.readouts.reads?.[0]?.ctx.decisionStep).toBe(t >= 5);
          r = await env.step((out as NonNullable<typeof out>).action);
        }
      }
      await env.close();
      // the host labels every read a decision step; the evaluator's rule wins, reset restarts the count
      expect(seen).toEqual([...[0, 1, 2, 3, 4, 5, 6].map((t) => t >= 5), ...[0, 1, 2, 3, 4, 5, 6].map((t) => t >= 5)]);
    } finally {
      await policy.close();
    }
  }, 30_000);
});

describe('RemotePolicy when the host dies or stalls', () => {
  it('a killed host fails the next call with E_BRIDGE_REMOTE at once; a stopped one with E_BRIDGE_TIMEOUT by the deadline', async () => {
    const policy = await RemotePolicy.spawn({ policy: 'shell-game-memory', maxBatch: 1, deadlineMs: 600 });
    try {
      await policy.resetSlot(0, { episode: 'stall' });
      const env = makeLiteEnv('ShellGameTouch-lite', KWARGS);
      const first = await env.reset({ seed: 1 });
      await env.close();

      policy.supervisor?.signal('SIGSTOP');
      let t0 = performance.now();
      const stalled = await policy.inferBatch([{ slot: 0, obs: first.obs }]).catch((e: unknown) => e);
      let waited = performance.now() - t0;
      expect(stalled).toBeInstanceOf(ImepError);
      expect((stalled as ImepError).code).toBe('E_BRIDGE_TIMEOUT');
      expect(waited).toBeGreaterThanOrEqual(500);
      expect(waited).toBeLessThan(5000);

      policy.supervisor?.signal('SIGCONT');
      policy.supervisor?.signal('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 200));
      t0 = performance.now();
      const dead = await policy.resetSlot(0, { episode: 'dead' }).catch((e: unknown) => e);
      waited = performance.now() - t0;
      expect(dead).toBeInstanceOf(ImepError);
      expect((dead as ImepError).code).toBe('E_BRIDGE_REMOTE');
      expect((dead as ImepError).message).toMatch(/policy host .* was killed by SIGKILL/);
      expect(waited).toBeLessThan(600);
    } finally {
      await policy.close();
    }
  }, 20_000);
});

/** A hosted policy that calls memory.read but acts on (and reports) the items it selected, not the answer. */
const IGNORES_ANSWER = `
import sys
from imep_sim_bridge import policy_host as ph

class IgnoresAnswer(ph.ShellGameMemoryPolicy):
    name = "ignores-answer"

    def infer(self, slot, obs, memory):
        class Proxy:
            reads = 0
            def read(_self, bank, ctx, items):
                memory.read(bank, ctx, items)
                return [dict(i) for i in items]
        return super().infer(slot, obs, Proxy())

ph.POLICIES[IgnoresAnswer.name] = IgnoresAnswer
sys.exit(ph.main(sys.argv[1:]))
`;

describe('RemotePolicy audits the host', () => {
  it('a host that does not use what the read hook returned is E_BRIDGE_PROTOCOL', async () => {
    const ipc = await privateIpcEndpoint('policy.sock');
    const base = policyHostCommand(ipc.endpoint, { policy: 'ignores-answer', maxBatch: 1 });
    const supervisor = new ServerSupervisor(
      { ...base, args: ['-c', IGNORES_ANSWER, ...base.args.slice(2)] },
      { endpoint: ipc.endpoint },
    );
    await supervisor.start();
    const policy = await RemotePolicy.connect({
      endpoint: ipc.endpoint,
      policy: 'ignores-answer',
      maxBatch: 1,
      deadlineMs: 5000,
      liveness: supervisor,
    });
    try {
      policy.setReadHook(blockHook);
      await policy.resetSlot(0, { episode: 'audit' });
      const env = makeLiteEnv('ShellGameTouch-lite', KWARGS);
      const first = await env.reset({ seed: 3 });
      const [out0] = await policy.inferBatch([{ slot: 0, obs: first.obs }]);
      expect(out0?.readouts.reads?.[0]?.identities).toEqual([]);
      const second = await env.step((out0 as NonNullable<typeof out0>).action);
      await env.close();
      // step 0 read nothing (empty bank), so the reports agree; step 1 selected f0 and the hook blocked it
      const err = await policy.inferBatch([{ slot: 0, obs: second.obs }]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ImepError);
      expect((err as ImepError).code).toBe('E_BRIDGE_PROTOCOL');
      expect((err as ImepError).message).toMatch(/slot 0 read 0 differs from what the read hook returned/);
      expect(policy.readsSeen).toBe(2);
    } finally {
      await policy.close();
      await supervisor.dispose();
      await ipc.dispose();
    }
  }, 20_000);
});

describe('RemotePolicy against a server that hosts no policies', () => {
  it('is refused from hello (E_USAGE naming the missing ops), and that server refuses the policy ops itself', async () => {
    const ipc = await privateIpcEndpoint();
    const server = await BridgeServer.bind({
      endpoint: ipc.endpoint,
      factory: (id, kw) => makeLiteEnv(id, kw),
      envIds: ['ShellGameTouch-lite'],
      name: 'lite',
    });
    try {
      const refused = RemotePolicy.connect({
        endpoint: ipc.endpoint,
        policy: 'shell-game-memory',
        maxBatch: 1,
        deadlineMs: 5000,
      });
      await expect(refused).rejects.toMatchObject({ code: 'E_USAGE', field: 'policy' });
      await expect(refused).rejects.toThrow(/does not serve policy\.reset, policy\.infer/);
      const { BridgeClient } = await import('../../src/bridges/client.js');
      const client = new BridgeClient({ endpoint: ipc.endpoint, heartbeatMs: 0 });
      const hello = await client.connect({ deadlineMs: 5000 });
      expect(hello.policies).toBeUndefined();
      const err = await client
        .call('policy.reset', { policy: 'x', slot: 0, episode: { episode: 'e' } }, { deadlineMs: 5000 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ImepError);
      expect(err).toMatchObject({ code: 'E_BRIDGE_PROTOCOL', wireCode: 'E_UNKNOWN_OP', op: 'policy.reset' });
      await client.close();
    } finally {
      await server.close();
      await ipc.dispose();
    }
  }, 20_000);
});
