import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildPlan,
  episodeIdOf,
  loadProtocolSync,
  parseProtocol,
  scopeIdOf,
  type Protocol,
} from '../../src/protocol/index.js';
import { BASE, ROOT } from './helpers.js';

const blackout = (): Protocol => loadProtocolSync(join(ROOT, 'protocols/shellgame-blackout.yaml')).protocol;

describe('plan', () => {
  it('is deterministic', () => {
    const a = buildPlan(blackout());
    const b = buildPlan(blackout());
    expect(b).toEqual(a);
    expect(a.planHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('derives scope and episode ids from (task, seed) and (scopeId, attempt) by truncated SHA-256', () => {
    const byHand = createHash('sha256').update('ShellGameTouch-lite\u001f610000').digest('hex').slice(0, 16);
    expect(scopeIdOf('ShellGameTouch-lite', 610000)).toBe(byHand);
    const episode = createHash('sha256').update(`${byHand}\u001f2`).digest('hex').slice(0, 16);
    expect(episodeIdOf(byHand, 2)).toBe(episode);
    const plan = buildPlan(blackout());
    const first = plan.episodes[0];
    expect(first).toEqual({
      seq: 0,
      wave: 1,
      condition: 'A',
      task: 'ShellGameTouch-lite',
      seed: 610000,
      attempt: 1,
      scopeId: byHand,
      episodeId: episodeIdOf(byHand, 1),
    });
    expect(plan.episodes[1]).toMatchObject({ condition: 'A', seed: 610000, attempt: 2, episodeId: episode });
  });

  it('lists units × conditions × waves × attempts: (4 + 3) × 400 × 2 for the blackout ladder', () => {
    const p = blackout();
    const plan = buildPlan(p);
    expect(plan.episodes.length).toBe(7 * 400 * 2);
    expect(plan.registered).toEqual([1]);
    expect(plan.protocolId).toBe('shellgame-blackout');
    // the anchor runs in both waves
    expect(plan.episodes.filter((e) => e.condition === 'A').length).toBe(2 * 400 * 2);
    expect(new Set(plan.episodes.map((e) => e.scopeId)).size).toBe(400);
    expect(new Set(plan.episodes.map((e) => e.episodeId)).size).toBe(800);
  });

  it('is in canonical order: wave → condition → task → seed → attempt', () => {
    const p = loadProtocolSync(join(ROOT, 'protocols/remembercolor-substitution.yaml')).protocol;
    const plan = buildPlan(p);
    const waveIx = new Map(p.waves.map((w, i) => [w.id, i]));
    const taskIx = new Map(p.envs.map((e, i) => [e.task ?? e.id, i]));
    const key = (e: (typeof plan.episodes)[number]): number[] => {
      const wave = p.waves[waveIx.get(e.wave) ?? -1];
      return [
        waveIx.get(e.wave) ?? -1,
        wave?.conditions.indexOf(e.condition) ?? -1,
        taskIx.get(e.task) ?? -1,
        e.seed,
        e.attempt,
      ];
    };
    plan.episodes.forEach((e, i) => {
      expect(e.seq).toBe(i);
      if (i === 0) return;
      const prev = plan.episodes[i - 1];
      if (!prev) return;
      const [a, b] = [key(prev), key(e)];
      const cmp = a.findIndex((x, j) => x !== b[j]);
      expect(cmp, `seq ${i}`).toBeGreaterThanOrEqual(0);
      expect((a[cmp] ?? 0) < (b[cmp] ?? 0), `seq ${i}`).toBe(true);
    });
    expect(plan.episodes.length).toBe(5 * 2 * 200 * 2);
  });

  it('makes every (wave, condition) one contiguous block, units in task → seed order inside it', () => {
    const plan = buildPlan(blackout());
    const blocks: string[] = [];
    for (const e of plan.episodes) {
      const key = `${e.wave}/${e.condition}`;
      if (blocks.at(-1) !== key) blocks.push(key);
    }
    expect(blocks).toEqual(['1/A', '1/S_pi', '1/T_mu', '1/U', '2/A', '2/N_blk', '2/C']);
    const block = plan.episodes.filter((e) => e.wave === 1 && e.condition === 'S_pi');
    expect(block.map((e) => e.seed)).toEqual(plan.episodes.slice(0, 800).map((e) => e.seed));
    expect(block[0]?.seq).toBe(800);
  });

  it('keeps all attempts of a scope under a condition consecutive', () => {
    const plan = buildPlan(blackout());
    for (let i = 0; i < plan.episodes.length; i += 2) {
      const [a, b] = [plan.episodes[i], plan.episodes[i + 1]];
      expect(a?.attempt).toBe(1);
      expect(b).toMatchObject({ attempt: 2, condition: a?.condition, wave: a?.wave, scopeId: a?.scopeId });
    }
  });

  it('a condition with its own n runs on the first n seeds only', () => {
    const p = blackout();
    const smaller = { ...p, conditions: p.conditions.map((c) => (c.id === 'U' ? { ...c, n: 200 } : c)) } as Protocol;
    const plan = buildPlan(smaller);
    const u = plan.episodes.filter((e) => e.condition === 'U');
    expect(u.length).toBe(200 * 2);
    expect(Math.max(...u.map((e) => e.seed))).toBe(610199);
    expect(plan.planHash).not.toBe(buildPlan(p).planHash);
  });

  it('takes seeds from a list in the order written, and chains as attempts', () => {
    let text = BASE.replace('  bands:\n    - start: 100\n      end: 119\n', '  list: [7, 3, 5]\n').replace(
      'n: 20\n',
      'n: 2\n',
    );
    text = text.replace('attempts:\n  count: 1\n  registered: 1\n', 'chains:\n  length: 3\n  registered: [2, 3]\n');
    const plan = buildPlan(parseProtocol(text, 'list.yaml').protocol);
    expect(plan.registered).toEqual([2, 3]);
    expect([...new Set(plan.episodes.map((e) => e.seed))]).toEqual([7, 3]);
    expect(plan.episodes.slice(0, 3).map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(plan.episodes.length).toBe((3 + 3) * 2 * 3);
  });

  it('refuses a chain position registered twice, naming it and its first listing', () => {
    const text = BASE.replace(
      'attempts:\n  count: 1\n  registered: 1\n',
      'chains:\n  length: 3\n  registered: [2, 2, 1]\n',
    );
    let line = '';
    try {
      parseProtocol(text, 'dup.yaml');
    } catch (e) {
      line = (e as { oneLine(): string }).oneLine();
    }
    expect(line).toMatch(
      /dup\.yaml.*chains\.registered\[1\].*chain position 2 is listed twice \(also chains\.registered\[0\]\).*list every position once/,
    );
  });

  it('the plan hash binds the protocol hash', () => {
    const a = buildPlan(parseProtocol(BASE, 'a.yaml').protocol);
    const b = buildPlan(parseProtocol(BASE.replace('margin: 0.1', 'margin: 0.2'), 'a.yaml').protocol);
    expect(b.episodes).toEqual(a.episodes);
    expect(b.protocolHash).not.toBe(a.protocolHash);
    expect(b.planHash).not.toBe(a.planHash);
  });
});
