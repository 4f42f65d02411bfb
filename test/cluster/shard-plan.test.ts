import { describe, expect, it } from 'vitest';
import { shardFilter } from '../../src/campaign/shard.js';
import {
  arraySpec,
  checkShardCount,
  fromRanges,
  manifestHash,
  planShards,
  planUnits,
  toRanges,
} from '../../src/protocol/shard-plan.js';
import { buildPlan, type Plan } from '../../src/protocol/plan.js';
import { parseProtocol } from '../../src/protocol/index.js';
import { BASE } from '../protocol/helpers.js';

/** BASE with n seeds, two attempts (or a chain of `chain` positions), two tasks when asked. */
function plan(opts: { n: number; chain?: number; twoTasks?: boolean; uN?: number }): Plan {
  let text = BASE.replace(
    '    - start: 100\n      end: 119\n',
    `    - start: 100\n      end: ${99 + opts.n}\n`,
  ).replace('n: 20\n', `n: ${opts.n}\n`);
  text = opts.chain
    ? text.replace('attempts:\n  count: 1\n  registered: 1\n', `chains:\n  length: ${opts.chain}\n  registered: [2]\n`)
    : text.replace('attempts:\n  count: 1\n  registered: 1\n', 'attempts:\n  count: 2\n  registered: 1\n');
  if (opts.twoTasks)
    text = text.replace(
      'envs:\n  - id: ShellGameTouch-lite\n',
      'envs:\n  - id: ShellGameTouch-lite\n    task: shell_a\n    kwargs: { blackoutFromStep: 4 }\n  - id: ShellGameTouch-lite\n    task: shell_b\n',
    );
  if (opts.uN !== undefined)
    text = text.replace('  - id: C\n    kind: C\n', `  - id: C\n    kind: C\n    n: ${opts.uN}\n`);
  return buildPlan(parseProtocol(text, 'p.yaml').protocol);
}

describe('cluster: shard plan (by unit)', () => {
  it('partitions the plan: every seq in exactly one shard, in plan order, each unit whole', () => {
    for (const p of [plan({ n: 7 }), plan({ n: 5, chain: 4 }), plan({ n: 6, twoTasks: true }), plan({ n: 9, uN: 4 })]) {
      for (const count of [1, 2, 3, 5]) {
        const s = planShards(p, count);
        expect(s.shards).toHaveLength(count);
        const all = s.shards.flatMap((m) => fromRanges(m.seqs));
        expect([...all].sort((a, b) => a - b)).toEqual(p.episodes.map((e) => e.seq));
        expect(new Set(all).size).toBe(p.episodes.length);
        const owner = new Map<string, number>();
        for (const m of s.shards) {
          const seqs = fromRanges(m.seqs);
          expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
          expect(m.rows).toBe(seqs.length);
          for (const seq of seqs) {
            const scope = p.episodes[seq]!.scopeId;
            // a unit (scope: every condition, wave and attempt or chain position) never spans two shards
            expect(owner.get(scope) ?? m.index).toBe(m.index);
            owner.set(scope, m.index);
          }
          expect(new Set(m.units.map((u) => u.scopeId))).toEqual(new Set(seqs.map((q) => p.episodes[q]!.scopeId)));
        }
        expect(s.units).toBe(planUnits(p).length);
      }
    }
  });

  it("is the runner's rule: unit k (first appearance in plan order) goes to shard k mod N", () => {
    const p = plan({ n: 6, twoTasks: true });
    const units = planUnits(p);
    const s = planShards(p, 4);
    units.forEach((u, k) => expect(s.shards[k % 4]!.units.map((x) => x.scopeId)).toContain(u.scopeId));
    for (const m of s.shards) {
      const include = shardFilter(p.episodes, { index: m.index, count: 4 });
      const runner = p.episodes
        .filter((e) => include({ task: e.task, seed: e.seed, scopeId: e.scopeId, episodes: [] }))
        .map((e) => e.seq);
      expect(fromRanges(m.seqs)).toEqual(runner);
    }
  });

  it('chain positions stay together: a chain is one unit', () => {
    const p = plan({ n: 4, chain: 5 });
    const s = planShards(p, 4);
    for (const m of s.shards) {
      const seqs = fromRanges(m.seqs);
      const positions = seqs.map((q) => p.episodes[q]!.attempt);
      expect(positions.filter((a) => a === 1).length * 5).toBe(positions.length);
    }
  });

  it('is deterministic and each manifest hash binds the campaign, the split and the shard', () => {
    const p = plan({ n: 8 });
    const a = planShards(p, 3);
    expect(planShards(p, 3)).toEqual(a);
    expect(new Set(a.shards.map((m) => m.sha256)).size).toBe(3);
    for (const m of a.shards) expect(manifestHash(a, m)).toBe(m.sha256);
    const other = { ...p, protocolHash: 'f'.repeat(64) };
    expect(planShards(other, 3).shards[0]!.sha256).not.toBe(a.shards[0]!.sha256);
    expect(planShards(p, 4).shards[0]!.sha256).not.toBe(a.shards[0]!.sha256);
  });

  it('refuses more shards than units, and counts that are not positive integers', () => {
    const p = plan({ n: 3 });
    expect(() => planShards(p, 4)).toThrow(/4 shards for 3 units: every shard needs at least one unit/);
    expect(() => planShards(p, 0)).toThrow(/positive integer/);
    expect(() => checkShardCount(1.5, 3)).toThrow(/positive integer/);
    expect(planShards(p, 3).shards.every((m) => m.units.length === 1)).toBe(true);
  });

  it('ranges and array specs', () => {
    expect(toRanges([0, 1, 2, 5, 7, 8])).toEqual([
      [0, 2],
      [5, 5],
      [7, 8],
    ]);
    expect(
      fromRanges([
        [0, 2],
        [5, 5],
      ]),
    ).toEqual([0, 1, 2, 5]);
    expect(arraySpec([0, 1, 2, 3])).toBe('0-3');
    expect(arraySpec([3, 1, 4, 5])).toBe('1,3-5');
    expect(arraySpec([2])).toBe('2');
  });
});
