/**
 * Issue #32 item 2: the seed-lookup attack, played on EVERY shipped protocol that runs a lite simulator
 * (protocols/**\/*.yaml, found by walking the folder, so a new protocol is covered without editing this file).
 *
 * The attacker knows the public simulator and the protocol's public seed band. It tabulates, for every seed of the
 * band, the method-visible stream from the env's first decision step on (frames, tool pose, instruction, under a fixed
 * do-nothing script), then in each episode looks its own stream up and names the fact value most frequent among the
 * matching seeds (seeded tie-break). When nothing visible after the cue depends on the seed, every seed shows one
 * stream and the attack is the prior's mode: at chance. When something does (a seeded tool start, a seeded candidate
 * layout), the stream names the seed and the attack reads the fact off every episode.
 *
 * "At chance" is exact: the hit count lies between the lower and upper critical values of Binomial(n, 1/|domain|) at
 * one-sided α = 0.001 each (exactBinomialTailNumber). The attack's power is shown on the same envs with the old
 * seeded kwargs (n/n), so the test cannot pass for want of an attack.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Prng } from '../../../src/core/prng.js';
import { loadProtocolSync } from '../../../src/protocol/load.js';
import { firstSeeds } from '../../../src/protocol/seeds.js';
import { bandSeeds, parseSuite } from '../../../src/calibration/index.js';
import { makeLiteEnvSync } from '../../../src/sims/lite/registry.js';
import { exactBinomialTailNumber } from '../../../src/stats/binomial-exact.js';
import { ev, obsDigest } from './helpers.js';
import { registerBuiltinKinds } from '../../../src/kinds/index.js';

// this file reads protocols while it loads (before the setup file's beforeAll registers the kinds)
registerBuiltinKinds();

const ALPHA = 0.001;
/** Visible steps the attacker keys on, from the decision step on. */
const WINDOW = 6;

function upperCritical(n: number, p: number): number {
  let k = Math.round(n * p);
  while (k < n && exactBinomialTailNumber(k + 1, n, p, 'upper') >= ALPHA) k++;
  return k;
}

function lowerCritical(n: number, p: number): number {
  let k = Math.round(n * p);
  while (k > 0 && exactBinomialTailNumber(k - 1, n, p, 'lower') >= ALPHA) k--;
  return k;
}

interface Target {
  readonly name: string;
  readonly envId: string;
  readonly kwargs: Readonly<Record<string, unknown>>;
  readonly seeds: readonly number[];
  readonly attempts: readonly number[];
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? yamlFiles(join(dir, d.name))
      : d.name.endsWith('.yaml') || d.name.endsWith('.yml')
        ? [join(dir, d.name)]
        : [],
  );
}

/** Every (file, env, kwargs variant) of a shipped lite protocol or calibration suite; other simulators: none. */
function shippedLiteTargets(): { targets: Target[]; files: string[]; skipped: string[] } {
  const targets: Target[] = [];
  const files: string[] = [];
  const skipped: string[] = [];
  for (const file of yamlFiles('protocols').sort()) {
    const rel = relative('.', file);
    const text = readFileSync(file, 'utf8');
    if (/^designs:/m.test(text)) {
      const { suite } = parseSuite(text, rel);
      files.push(rel);
      targets.push({
        name: `${rel} ${suite.env.id}`,
        envId: suite.env.id,
        kwargs: suite.env.kwargs ?? {},
        seeds: bandSeeds(suite, suite.n, 0),
        attempts: [1],
      });
      continue;
    }
    const { protocol } = loadProtocolSync(file);
    if (protocol.simulator.kind !== 'lite') {
      skipped.push(rel);
      continue;
    }
    files.push(rel);
    const seeds = firstSeeds(protocol.seeds, protocol.n);
    const count = protocol.attempts?.count ?? 1;
    const attempts = Array.from({ length: count }, (_, i) => i + 1);
    for (const env of protocol.envs) {
      const variants = [{ label: '', extra: {} as Record<string, unknown> }];
      for (const c of protocol.conditions)
        if (c.envKwargs) variants.push({ label: ` (condition ${c.id})`, extra: c.envKwargs });
      for (const v of variants)
        targets.push({
          name: `${rel} ${env.id}${v.label}`,
          envId: env.id,
          kwargs: { ...(env.kwargs ?? {}), ...v.extra },
          seeds,
          attempts,
        });
    }
  }
  return { targets, files, skipped };
}

/** The attack's hits over the band and the fact domain's size, for one target at one attempt. */
function lookupAttack(
  t: Target,
  attempt: number,
  kwargs = t.kwargs,
  factOf?: { field: string; m: number },
): { hits: number; m: number; streams: number } {
  const env = makeLiteEnvSync(t.envId, kwargs);
  const fact = factOf ?? (env.spec.fact && { field: env.spec.fact.field, m: env.spec.fact.domain.length });
  if (fact === undefined) throw new Error(`${t.name}: the env declares no fact`);
  const from = env.spec.decisionFromStep ?? 0;
  const dim = env.spec.action.shape[0] ?? 2;
  const play = (seed: number): { key: string; value: number } => {
    let r = env.resetSync({ seed, options: { attempt } });
    const value = ev(r, fact.field) as number;
    // a decision from step 0 is taken on the reset frame: that is what the attacker keys on
    const seen: string[] = from === 0 ? [obsDigest(r)] : [];
    while (from > 0 && !r.done && r.step < from + WINDOW) {
      r = env.stepSync(new Float32Array(dim));
      if (r.step >= from) seen.push(obsDigest(r));
    }
    return { key: seen.join('\n'), value };
  };
  const m = fact.m;
  const table = new Map<string, number[]>();
  for (const seed of t.seeds) {
    const { key, value } = play(seed);
    const counts = table.get(key) ?? new Array<number>(m).fill(0);
    counts[value]! += 1;
    table.set(key, counts);
  }
  const tieBreak = new Prng('lookup-attack-tie-break');
  let hits = 0;
  for (const seed of t.seeds) {
    const { key, value } = play(seed);
    const counts = table.get(key) ?? new Array<number>(m).fill(1);
    const best = Math.max(...counts);
    const modes = counts.flatMap((c, i) => (c === best ? [i] : []));
    if (modes[tieBreak.nextInt(modes.length)] === value) hits++;
  }
  return { hits, m, streams: table.size };
}

const { targets, files, skipped } = shippedLiteTargets();

describe('the seed-lookup attack on every shipped lite protocol (issue #32 item 2)', () => {
  it('finds the shipped lite protocols and suites by walking protocols/', () => {
    for (const f of [
      'protocols/shellgame-blackout.yaml',
      'protocols/shellgame-hosted-policy.yaml',
      'protocols/shellgame-donor-swap.yaml',
      'protocols/shellgame-noisy.yaml',
      'protocols/shellgame-view-removal.yaml',
      'protocols/remembercolor-substitution.yaml',
      'protocols/calibration/shellgame-known-answers.yaml',
    ])
      expect(files).toContain(f);
    expect(skipped).toContain('protocols/mikasa-remembercolor.yaml');
  });

  for (const t of targets) {
    for (const attempt of t.attempts) {
      it(`${t.name}, attempt ${attempt}: the lookup attack is at chance (exact binomial, α = 0.001 each way)`, () => {
        const { hits, m } = lookupAttack(t, attempt);
        const n = t.seeds.length;
        expect(hits).toBeLessThanOrEqual(upperCritical(n, 1 / m));
        expect(hits).toBeGreaterThanOrEqual(lowerCritical(n, 1 / m));
      });
    }
  }

  it('ChainDrawers-lite (no shipped protocol; chainbench): a bare query shows nothing that names its drawer', () => {
    const seeds = Array.from({ length: 400 }, (_, i) => 900000 + i);
    for (const K of [2, 3, 4]) {
      const t: Target = {
        name: `ChainDrawers-lite K=${K}`,
        envId: 'ChainDrawers-lite',
        kwargs: { K },
        seeds,
        attempts: [1],
      };
      const fact = { field: 'correctDrawer', m: K };
      const { hits } = lookupAttack(t, 1, t.kwargs, fact);
      expect(hits).toBeLessThanOrEqual(upperCritical(seeds.length, 1 / K));
      expect(hits).toBeGreaterThanOrEqual(lowerCritical(seeds.length, 1 / K));
      // under the old seeded start the reset pose names the seed, and so the drawer
      expect(lookupAttack(t, 1, { K, toolStart: 'seeded' }, fact).hits).toBe(seeds.length);
    }
  });

  it('the attack reads the fact off every seed under the old seeded kwargs (its power), on each shipped env', () => {
    const seen = new Set<string>();
    for (const t of targets) {
      if (seen.has(t.envId)) continue;
      seen.add(t.envId);
      const old = { ...t.kwargs, toolStart: 'seeded' };
      const { hits, streams } = lookupAttack(t, 1, old);
      expect(streams).toBe(t.seeds.length);
      expect(hits).toBe(t.seeds.length);
      if (t.envId.startsWith('RememberColor')) {
        // the candidate layout alone names the seed too (tool at home)
        const layoutOnly = lookupAttack(t, 1, { ...t.kwargs, toolStart: 'home', layout: 'seeded' });
        expect(layoutOnly.hits).toBe(t.seeds.length);
      }
    }
    expect([...seen].sort()).toEqual(['RememberColor3-lite', 'RememberColor5-lite', 'ShellGameTouch-lite']);
  });
});
