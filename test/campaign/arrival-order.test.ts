/**
 * Issue #24: the order in which units reach a hosted policy must carry no information about the plan.
 *
 * The attack: the protocol is public, so a host can rebuild the plan and replay the public simulator for every
 * planned seed; if resets arrive in plan order, the j-th new unit of a segment is plan unit j, and its hidden fact
 * is known before the cue (the paper's attack predicted 144/144). The reset-order predictor below does exactly that
 * and sees nothing but what a host sees (slot, resets, method-visible observations); the harness scores it against
 * the unit that really arrived. Without an arrival-order key it is right every time; with the unit's keyed
 * permutation (src/evidence/arrival-order.ts) its hit count lies inside the exact binomial acceptance region of a
 * policy that guesses with the band's fact frequencies (p = Σ_f p_f², the chance that a random unit of the segment
 * has the predicted unit's fact), at one-sided α = 0.001 each way.
 */
import { createHash } from 'node:crypto';
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeLiteEnv, makeLiteEnvSync } from '../../src/sims/lite/registry.js';
import { arrivalOrder, newArrivalKey } from '../../src/evidence/arrival-order.js';
import { ARRIVAL_ORDER_FILE } from '../../src/evidence/records/arrival-order-record.js';
import { readPrecommit } from '../../src/evidence/transitions/precommit.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { arrivalOrderIssues } from '../../src/evidence/verify/arrival-order.js';
import { canonicalBytes } from '../../src/core/canonical-json.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { RowSink, type PolicyProvider, type RunnerPolicy } from '../../src/campaign/index.js';
import { runPlan, segmentsOf } from '../../src/campaign/run-plan.js';
import type { HostedPolicyRecord } from '../../src/evidence/records/hosted-policy-record.js';
import type { EpisodeInfo, SlotObservation } from '../../src/runtime/policy.js';
import { buildPlan, parseProtocol, type Protocol } from '../../src/protocol/index.js';
import type { PlannedEpisode } from '../../src/protocol/plan.js';
import { exactBinomialTailNumber } from '../../src/stats/binomial-exact.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';
import { ShellScriptedPolicy } from './scripted-policies.js';
import { registerBuiltinKinds } from '../../src/kinds/index.js';

// this file reads protocols while it loads (before the setup file's beforeAll registers the kinds)
registerBuiltinKinds();

const ALPHA = 0.001;

/** The hidden fact of a seed, as the public simulator draws it (what the attacker replays). */
function factOf(protocol: Protocol, seed: number): number {
  const env = protocol.envs[0];
  const r = makeLiteEnvSync(env?.id ?? '', env?.kwargs ?? {}).resetSync({ seed });
  return r.evaluator['ballCup'] as number;
}

/**
 * A host-side reset-order predictor around the scripted policy: it knows the public plan, counts the first-attempt
 * resets of each segment (per slot, attempts alternate), and predicts that the j-th is plan unit j. It records
 * its prediction against the opaque episode id it was given; the harness (never the policy) scores it.
 */
function predictorProvider(protocol: Protocol, predictions: [string, number][], arrivals: string[]): PolicyProvider {
  const plan = buildPlan(protocol);
  const segments = segmentsOf(plan.episodes);
  const attempts = protocol.attempts?.count ?? 1;
  const facts = new Map<number, number>();
  const fact = (seed: number): number =>
    facts.get(seed) ?? (facts.set(seed, factOf(protocol, seed)), factOf(protocol, seed));
  let newUnits = 0;
  const resetsInSlot = new Map<number, number>();
  return {
    description: 'reset-order predictor',
    async policyFor(task, batch): Promise<RunnerPolicy> {
      const inner = new ShellScriptedPolicy(batch, task.facts.decisionFromStep);
      return {
        maxBatch: inner.maxBatch,
        setReadHook: (h) => inner.setReadHook(h),
        slotMemory: (s) => inner.slotMemory(s),
        resetSlot: async (slot: number, info: EpisodeInfo) => {
          const k = resetsInSlot.get(slot) ?? 0;
          resetsInSlot.set(slot, k + 1);
          if (k % attempts === 0) {
            // a new unit arrives in this slot: the predictor's guess is the plan's next unit of the current segment
            const perSegment = segments[0]?.units.length ?? 1;
            const seg = segments[Math.floor(newUnits / perSegment)];
            const unit = seg?.units[newUnits % perSegment];
            if (unit !== undefined) predictions.push([info.episode, fact(unit.seed)]);
            arrivals.push(info.episode);
            newUnits += 1;
          }
          await inner.resetSlot(slot, info);
        },
        inferBatch: (reqs: readonly SlotObservation[]) => inner.inferBatch(reqs),
      };
    },
    release: async () => undefined,
  };
}

async function playAttack(
  protocol: Protocol,
  key: string | null,
  batchSize: number,
): Promise<{ hits: number; trials: number; p: number; arrivals: string[] }> {
  const plan = buildPlan(protocol);
  const byEpisode = new Map<string, PlannedEpisode>(plan.episodes.map((e) => [e.episodeId, e]));
  const predictions: [string, number][] = [];
  const arrivals: string[] = [];
  const sink = new RowSink(
    { appendRow: async () => undefined, appendTiming: async () => undefined, appendTrace: async () => undefined },
    plan.episodes.map((e) => e.seq),
  );
  await runPlan({
    protocol,
    episodes: plan.episodes,
    policies: predictorProvider(protocol, predictions, arrivals),
    envs: (t) => makeLiteEnv(t.envId, t.kwargs),
    batchSize,
    sink,
    arrivalKey: key,
  });
  await sink.drain();
  let hits = 0;
  for (const [episode, predicted] of predictions)
    if (factOf(protocol, (byEpisode.get(episode) as PlannedEpisode).seed) === predicted) hits++;
  const counts = [0, 0, 0];
  const units = segmentsOf(plan.episodes)[0]?.units ?? [];
  for (const u of units) counts[factOf(protocol, u.seed)]! += 1;
  const p = counts.reduce((s, c) => s + (c / units.length) ** 2, 0);
  return { hits, trials: predictions.length, p, arrivals };
}

function acceptance(n: number, p: number): [number, number] {
  let lo = Math.round(n * p);
  while (lo > 0 && exactBinomialTailNumber(lo - 1, n, p, 'lower') >= ALPHA) lo--;
  let hi = Math.round(n * p);
  while (hi < n && exactBinomialTailNumber(hi + 1, n, p, 'upper') >= ALPHA) hi++;
  return [lo, hi];
}

describe('arrival order (issue #24)', () => {
  const { protocol } = parseProtocol(blackoutYaml({ n: 60, sha: 'ab'.repeat(32) }), 'p.yaml');

  it('without a key the reset-order predictor names the hidden fact of every unit (plan order leaks)', async () => {
    const { hits, trials } = await playAttack(protocol, null, 4);
    expect(trials).toBe(7 * 60); // 7 segments (wave 1: A S_pi T_mu U; wave 2: A N_blk C) × 60 units
    expect(hits).toBe(trials);
  }, 60_000);

  it('under a keyed arrival order the predictor scores at chance (exact binomial acceptance region, α = 0.001 each way)', async () => {
    for (const batch of [1, 4]) {
      const key = createHash('sha256').update(`arrival-order test key ${batch}`).digest('hex'); // fixed: the test is deterministic
      const { hits, trials, p } = await playAttack(protocol, key, batch);
      expect(trials).toBe(7 * 60);
      const [lo, hi] = acceptance(trials, p);
      if (process.env['IMEP_PRINT_ATTACK'])
        console.log(`batch ${batch}: ${hits}/${trials} hits, p = ${p.toFixed(4)}, acceptance [${lo}, ${hi}]`);
      expect(hits).toBeGreaterThanOrEqual(lo);
      expect(hits).toBeLessThanOrEqual(hi);
    }
  }, 60_000);

  it('the permutation is a keyed function of (key, segment, unit): reproducible, a permutation, different per key and segment', () => {
    const units = Array.from({ length: 50 }, (_, i) => ({ scopeId: `u${i}` }));
    const key = newArrivalKey().key;
    const seg = { wave: 1, condition: 'A', task: 'T' };
    const a = arrivalOrder(key, seg, units);
    expect(arrivalOrder(key, seg, units)).toEqual(a);
    expect(arrivalOrder(key, seg, [...units].reverse())).toEqual(a); // the given order does not matter
    expect([...a].map((u) => u.scopeId).sort()).toEqual(units.map((u) => u.scopeId).sort());
    expect(a).not.toEqual(units);
    expect(arrivalOrder(newArrivalKey().key, seg, units)).not.toEqual(a);
    expect(arrivalOrder(key, { ...seg, condition: 'N' }, units)).not.toEqual(a);
    expect(arrivalOrder(null, seg, units)).toEqual(units);
  });
});

describe('arrival order in a formal run of a hosted policy', () => {
  const hostedRecord: HostedPolicyRecord = {
    runtime: 'remote',
    name: 'spy',
    host: { name: 'test-host', version: '1' },
    version: '1',
    memory: { bank: 'episode-local' },
    files: [],
    digest: 'a'.repeat(64),
  };

  function setup(hosted: boolean): { file: string; arrivals: string[]; opts: Parameters<typeof runCampaign>[1] } {
    const box = sandbox();
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 12, sha: box.checkpointSha }));
    const arrivals: string[] = [];
    const provider: PolicyProvider & { record?: HostedPolicyRecord } = {
      description: 'spy',
      ...(hosted ? { record: hostedRecord } : {}),
      async policyFor(task, batch): Promise<RunnerPolicy> {
        const inner = new ShellScriptedPolicy(batch, task.facts.decisionFromStep);
        return {
          maxBatch: inner.maxBatch,
          setReadHook: (h) => inner.setReadHook(h),
          slotMemory: (s) => inner.slotMemory(s),
          resetSlot: async (slot, info) => {
            arrivals.push(info.episode);
            await inner.resetSlot(slot, info);
          },
          inferBatch: (reqs) => inner.inferBatch(reqs),
        };
      },
      release: async () => undefined,
    };
    return {
      file,
      arrivals,
      opts: {
        ...scriptedOptions(box, 'shell', { batchSize: 1 }),
        policies: async () => provider,
        through: 'seal',
      } as Parameters<typeof runCampaign>[1],
    };
  }

  async function run(hosted: boolean): Promise<{ dir: string; arrivals: string[]; rows: string }> {
    const { file, arrivals, opts } = setup(hosted);
    const dir = await runCampaign(file, opts);
    return { dir, arrivals, rows: readFileSync(join(dir, 'rows/rows.jsonl'), 'utf8') };
  }

  it('precommit commits a key for a hosted policy only; rows stay byte-identical and in plan order; the sealed key reproduces the order', async () => {
    const plain = await run(false);
    const hosted = await run(true);
    expect(existsSync(join(plain.dir, ARRIVAL_ORDER_FILE))).toBe(false);
    expect((await readPrecommit(plain.dir)).arrivalOrder).toBeUndefined();
    const keyBytes = readFileSync(join(hosted.dir, ARRIVAL_ORDER_FILE));
    const commitment = (await readPrecommit(hosted.dir)).arrivalOrder;
    expect(commitment?.sha256).toBe(createHash('sha256').update(keyBytes).digest('hex'));
    const seal = JSON.parse(readFileSync(join(hosted.dir, 'seal.json'), 'utf8')) as { files: { path: string }[] };
    expect(seal.files.map((f) => f.path)).toContain(ARRIVAL_ORDER_FILE);
    expect(hosted.rows).toBe(plain.rows);
    expect((await verifyUnit(hosted.dir)).ok).toBe(true);

    // a verifier with the sealed key and the plan reproduces the order resets arrived in (batch 1: one unit at a time)
    const key = (JSON.parse(keyBytes.toString('utf8')) as { key: string }).key;
    const { protocol } = parseProtocol(blackoutYaml({ n: 12, sha: 'ab'.repeat(32) }), 'p.yaml');
    const expected = segmentsOf(buildPlan(protocol).episodes).flatMap((seg) =>
      arrivalOrder(key, { wave: seg.wave, condition: seg.condition, task: seg.task }, seg.units).flatMap((u) =>
        u.episodes.map((e) => e.episodeId),
      ),
    );
    expect(hosted.arrivals).toEqual(expected);
    expect(plain.arrivals).toEqual(buildPlan(protocol).episodes.map((e) => e.episodeId));
    expect(hosted.arrivals).not.toEqual(plain.arrivals);
  }, 120_000);

  it('a key swapped after precommit is refused before any row, and verify names a sealed key that is not the committed one', async () => {
    const { file, opts } = setup(true);
    const dir = await precommitCampaign(file, opts);
    const keyFile = join(dir, ARRIVAL_ORDER_FILE);
    const committed = readFileSync(keyFile);
    writeFileSync(keyFile, canonicalBytes(newArrivalKey()));
    await expect(runCampaign(file, opts)).rejects.toThrow(
      /arrival-order\.json does not match the SHA-256 its precommit committed/,
    );
    expect(existsSync(join(dir, 'rows/rows.jsonl')) ? readFileSync(join(dir, 'rows/rows.jsonl'), 'utf8') : '').toBe('');

    const precommitBytes = readFileSync(join(dir, 'precommit.json'));
    const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
    expect(arrivalOrderIssues(precommitBytes, new Map([[ARRIVAL_ORDER_FILE, sha(committed)]]))).toEqual([]);
    expect(arrivalOrderIssues(precommitBytes, new Map([[ARRIVAL_ORDER_FILE, sha(readFileSync(keyFile))]]))).toEqual([
      expect.objectContaining({ path: ARRIVAL_ORDER_FILE, kind: 'modified' }),
    ]);
    expect(arrivalOrderIssues(precommitBytes, new Map())).toEqual([
      expect.objectContaining({ path: ARRIVAL_ORDER_FILE, kind: 'missing' }),
    ]);
    expect(arrivalOrderIssues(Buffer.from('{"kind":"imep.precommit"}'), new Map())).toEqual([]);
  }, 60_000);
});
