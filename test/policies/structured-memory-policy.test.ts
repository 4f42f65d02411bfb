/**
 * The structured-bank runtime (ExternalMemoryPolicy over a structured-pcmb checkpoint) on the shipped RememberColor
 * checkpoints: gated writes that merge into one cue record, persistence across attempts (or not), reads through the
 * hook, installation-time payload swaps, the blind control's independence of its bank, and the manifest/protocol
 * refusals.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BankRecord } from '../../src/banks/record.js';
import { makeLiteEnvSync } from '../../src/sims/lite/registry.js';
import { assertCheckpointServes } from '../../src/campaign/checkpoint-policy.js';
import { isImepError } from '../../src/core/errors.js';
import { blockHook } from '../../src/interventions/no-access.js';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import { parseManifest } from '../../src/policies/manifest.js';
import { ExternalMemoryPolicy } from '../../src/policies/memory-policy.js';
import { loadProtocolSync } from '../../src/protocol/index.js';
import { LITE_MEMVLA } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const MEMVLA_RC = join(ROOT, 'checkpoints', 'lite-memvla-rc');
const BLIND_RC = join(ROOT, 'checkpoints', 'lite-blind-rc');
const KWARGS = { strict: false, reshowCueOnRetry: false };

interface Attempt {
  readonly success: boolean;
  readonly firstVisit: number | null;
  readonly target: number;
  /** Items fed at each read, by elapsed step. */
  readonly itemsPerRead: number[];
  /** Argmax of the decision logits at step 10 (the first decision step). */
  readonly decision: number;
  readonly logits10: Float32Array;
}

function argmax(v: Float32Array): number {
  let b = 0;
  for (let i = 1; i < v.length; i++) if ((v[i] as number) > (v[b] as number)) b = i;
  return b;
}

async function runAttempt(
  policy: ExternalMemoryPolicy,
  env: ReturnType<typeof makeLiteEnvSync>,
  seed: number,
  attempt: number,
  scope: string,
): Promise<Attempt> {
  let r = env.resetSync({ seed, options: { attempt } });
  const target = r.evaluator['targetColorIndex'] as number;
  await policy.resetSlot(0, { episode: `${scope}/a${attempt}` });
  const itemsPerRead: number[] = [];
  let logits10: Float32Array = new Float32Array(0);
  while (!r.done) {
    const [out] = await policy.inferBatch([{ slot: 0, obs: r.obs }]);
    if (out === undefined) throw new Error('no output');
    itemsPerRead.push(out.readouts.reads?.[0]?.identities.length ?? -1);
    if (r.step === 10) logits10 = out.readouts.decisionLogits as Float32Array;
    r = env.stepSync(out.action);
  }
  const fv = r.evaluator['firstVisit'];
  return {
    success: r.evaluator['success'] === true,
    firstVisit: typeof fv === 'number' ? fv : null,
    target,
    itemsPerRead,
    decision: argmax(logits10),
    logits10,
  };
}

async function unit(
  dir: string,
  seed: number,
  opts: {
    k?: 3 | 5;
    persistence?: 'within-episode' | 'across-attempts';
    beforeAttempt2?: (p: ExternalMemoryPolicy, scope: string) => void;
  } = {},
) {
  const ckpt = await loadCheckpoint(dir);
  const policy = new ExternalMemoryPolicy(ckpt, { persistence: opts.persistence ?? 'across-attempts' });
  const env = makeLiteEnvSync(`RememberColor${opts.k ?? 3}-lite`, KWARGS);
  const scope = `unit-${seed}`;
  policy.beginScope(0, scope);
  const a1 = await runAttempt(policy, env, seed, 1, scope);
  const afterA1 = policy.structuredBank(0).records(scope);
  opts.beforeAttempt2?.(policy, scope);
  const a2 = await runAttempt(policy, env, seed, 2, scope);
  const afterA2 = policy.structuredBank(0).records(scope);
  policy.endScope(0, scope);
  const afterEnd = policy.structuredBank(0).records(scope);
  await ckpt.release();
  return { a1, a2, afterA1, afterA2, afterEnd };
}

describe('structured-bank runtime on lite-memvla-rc', () => {
  it('writes the cue frames only, merged into one record that attempt 2 reads at every step', async () => {
    const { a1, a2, afterA1, afterA2, afterEnd } = await unit(MEMVLA_RC, 11);
    expect(afterA1).toHaveLength(1);
    const rec = afterA1[0] as BankRecord;
    expect(rec.sourceEpisode).toBe('unit-11/a1');
    expect(rec.version).toBe(4); // steps 0–4 show the cue: one insert, four merges
    expect(rec.timestep).toBe(5); // the query clock at the step-4 write
    expect(afterA2).toEqual(afterA1); // attempt 2 (no cue) writes nothing
    expect(afterEnd).toEqual([]);
    expect(a1.itemsPerRead.slice(0, 2)).toEqual([0, 1]); // read before write: step 0 reads an empty scope
    expect(a2.itemsPerRead.every((n) => n === 1)).toBe(true);
    expect([a1.success, a2.success]).toEqual([true, true]);
    expect(a2.decision).toBe(a2.target);
  }, 60_000);

  it('within-episode persistence empties the scope at each attempt: attempt 2 reads nothing', async () => {
    const { a2 } = await unit(MEMVLA_RC, 11, { persistence: 'within-episode' });
    expect(a2.itemsPerRead.every((n) => n === 0)).toBe(true);
  }, 60_000);

  it('a different colour’s payload installed before attempt 2 sends it to that colour', async () => {
    // find a donor unit with another colour, record its payload, install it through replaceRecords
    let donor: { records: readonly BankRecord[]; target: number } | null = null;
    const own = (await unit(MEMVLA_RC, 11)).a1.target;
    for (let s = 12; donor === null; s++) {
      const u = await unit(MEMVLA_RC, s);
      if (u.a1.target !== own) donor = { records: u.afterA1, target: u.a1.target };
    }
    const d = donor;
    const swapped = await unit(MEMVLA_RC, 11, {
      beforeAttempt2: (p, scope) => {
        const bank = p.structuredBank(0);
        bank.replaceRecords(
          scope,
          bank.records(scope).map((r, i) => ({ ...r, payload: (d.records[i] as BankRecord).payload })),
        );
      },
    });
    expect(swapped.a1.success).toBe(true);
    expect(swapped.a2.decision).toBe(d.target);
    expect(swapped.a2.firstVisit).toBe(d.target);
    expect(swapped.a2.success).toBe(false);
  }, 60_000);
});

describe('structured-bank runtime: batch size does not change results', () => {
  /** Units (seeds) stepped in lockstep in slots 0..n−1, both attempts; every action's bytes, per unit, in order. */
  async function lockstep(seeds: readonly number[], batch: number): Promise<Map<number, string[]>> {
    const ckpt = await loadCheckpoint(MEMVLA_RC);
    const policy = new ExternalMemoryPolicy(ckpt, { batchSize: batch, persistence: 'across-attempts' });
    const out = new Map<number, string[]>(seeds.map((s) => [s, []]));
    for (let c = 0; c < seeds.length; c += batch) {
      const chunk = seeds.slice(c, c + batch);
      const envs = chunk.map(() => makeLiteEnvSync('RememberColor5-lite', KWARGS));
      chunk.forEach((s, slot) => policy.beginScope(slot, `u${s}`));
      for (const attempt of [1, 2]) {
        const rs = chunk.map((s, i) =>
          (envs[i] as ReturnType<typeof makeLiteEnvSync>).resetSync({ seed: s, options: { attempt } }),
        );
        for (let i = 0; i < chunk.length; i++) await policy.resetSlot(i, { episode: `u${chunk[i]}/a${attempt}` });
        for (;;) {
          const live = rs.map((r, i) => (r.done ? -1 : i)).filter((i) => i >= 0);
          if (live.length === 0) break;
          const outs = await policy.inferBatch(live.map((i) => ({ slot: i, obs: (rs[i] as (typeof rs)[number]).obs })));
          live.forEach((i, j) => {
            const a = (outs[j] as (typeof outs)[number]).action;
            out.get(chunk[i] as number)?.push(Buffer.from((a.data as Float32Array).buffer.slice(0)).toString('hex'));
            rs[i] = (envs[i] as ReturnType<typeof makeLiteEnvSync>).stepSync(a);
          });
        }
      }
    }
    await ckpt.release();
    return out;
  }

  it('gives bitwise the same actions at batch 1 and batch 6', async () => {
    const seeds = [3, 4, 5, 6, 7, 8];
    const one = await lockstep(seeds, 1);
    const six = await lockstep(seeds, 6);
    for (const s of seeds) expect(six.get(s), `seed ${s}`).toEqual(one.get(s));
    expect([...one.values()].every((a) => a.length > 20)).toBe(true);
  }, 120_000);
});

describe('lite-blind-rc does not depend on its bank', () => {
  it('gives bitwise the same attempt-2 logits and outcome with its reads blocked', async () => {
    const normal = await unit(BLIND_RC, 21, { k: 5 });
    const blocked = await unit(BLIND_RC, 21, { k: 5, beforeAttempt2: (p) => p.setReadHook(blockHook) });
    expect(normal.a2.itemsPerRead.every((n) => n === 1)).toBe(true);
    expect(blocked.a2.itemsPerRead.every((n) => n === 0)).toBe(true);
    expect(Buffer.from(blocked.a2.logits10.buffer)).toEqual(Buffer.from(normal.a2.logits10.buffer));
    expect([blocked.a2.success, blocked.a2.firstVisit]).toEqual([normal.a2.success, normal.a2.firstVisit]);
  }, 60_000);
});

describe('structured-pcmb manifests and protocol bindings', () => {
  const manifestOf = (dir: string): Record<string, any> =>
    JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as Record<string, any>;
  const refusal = (value: unknown): { field: string | undefined; message: string } => {
    try {
      parseManifest(value, 'model.json');
    } catch (e) {
      if (isImepError(e)) return { field: e.field, message: e.message };
      throw e;
    }
    throw new Error('expected a refusal');
  };

  it('requires a [batch, 1] writeGate on a structured bank and refuses one on an episode bank', () => {
    expect(parseManifest(manifestOf(MEMVLA_RC), 'model.json').bank).toMatchObject({
      kind: 'structured-pcmb',
      capacity: 16,
      k: 4,
      gate: 0.45,
      leaf: 'cognitiveValue',
    });
    const noGate = manifestOf(MEMVLA_RC);
    noGate.graphs.encode.outputs = noGate.graphs.encode.outputs.filter((o: { role: string }) => o.role !== 'writeGate');
    expect(refusal(noGate)).toMatchObject({ field: 'graphs.encode.outputs', message: 'no tensor with role writeGate' });
    const wide = manifestOf(MEMVLA_RC);
    wide.graphs.encode.outputs.find((o: { role: string }) => o.role === 'writeGate').shape = ['batch', 2];
    expect(refusal(wide).message).toMatch(/writeGate must be \[batch, 1\]/);
    const episode = manifestOf(LITE_MEMVLA);
    episode.graphs.encode.outputs.push({
      name: 'write_gate',
      role: 'writeGate',
      dtype: 'float32',
      shape: ['batch', 1],
    });
    expect(refusal(episode).message).toMatch(/writeGate is for structured-pcmb banks/);
  });

  it('binds the remembercolor protocol to a structured checkpoint with its bank parameters, and refuses others', () => {
    const protocol = loadProtocolSync(join(ROOT, 'protocols/remembercolor-substitution.yaml')).protocol;
    expect(() => assertCheckpointServes(protocol, MEMVLA_RC)).not.toThrow();
    expect(() => assertCheckpointServes(protocol, LITE_MEMVLA)).toThrow(
      /memory\.bank is structured-pcmb, but checkpoint lite-memvla runs an episode-local bank/,
    );
    const mem = protocol.memory as { gate: number };
    expect(() =>
      assertCheckpointServes(
        { ...protocol, memory: { ...protocol.memory, gate: 0.5 } as typeof protocol.memory },
        MEMVLA_RC,
      ),
    ).toThrow(/memory\.gate is 0\.5, but checkpoint lite-memvla-rc was built for bank\.gate 0\.45/);
    expect(mem.gate).toBe(0.45);
    const shell = loadProtocolSync(join(ROOT, 'protocols/shellgame-blackout.yaml')).protocol;
    expect(() => assertCheckpointServes(shell, MEMVLA_RC)).toThrow(
      /memory\.bank is episode-local, but checkpoint lite-memvla-rc runs a structured-pcmb bank/,
    );
  });
});
