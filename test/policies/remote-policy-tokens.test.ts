/**
 * What a hosted policy learns of an episode: a random token, fresh at every reset — never the plan's episode
 * id, which is a plain hash of (task, seed, attempt) that a host could invert with the protocol's seed bands to
 * recover the seed and with it the hidden fact. The host's reads come back mapped to the episode ids, so the
 * hook and the readouts (what IMEP records) see the same ids as before; the host sees only its tokens.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReadContext } from '../../src/banks/record.js';
import { identityReadHook } from '../../src/banks/record.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { episodeIdOf, scopeIdOf } from '../../src/protocol/plan.js';
import { runLockstep } from '../../src/runtime/lockstep.js';
import { RemotePolicy } from '../../src/policies/remote-policy.js';

describe('RemotePolicy: the host sees episode tokens, IMEP records episode ids', () => {
  it('tokens are random, fresh per reset, and map back for the hook and the readouts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-tokens-'));
    const log = join(dir, 'resets.log');
    const mod = join(dir, 'mod');
    mkdirSync(mod);
    writeFileSync(
      join(mod, 'peek_policy.py'),
      `from imep_sim_bridge.policy_host import ShellGameMemoryPolicy


class PeekPolicy(ShellGameMemoryPolicy):
    name = "peek"

    def reset(self, slot, episode):
        with open(${JSON.stringify(log)}, "a") as f:
            f.write(episode + "\\n")
        super().reset(slot, episode)


POLICIES = {PeekPolicy.name: PeekPolicy}
`,
    );
    const policy = await RemotePolicy.spawn({
      policy: 'peek',
      module: 'peek_policy',
      pythonPath: [mod],
      maxBatch: 2,
      deadlineMs: 10_000,
      readDeadlineS: 5,
    });
    try {
      const seeds = [630000, 630001, 630002];
      // the plan's ids, as the runner passes them
      const ids = seeds.map((seed) => episodeIdOf(scopeIdOf('ShellGameTouch-lite', seed), 1));
      const seen: ReadContext[] = [];
      policy.setReadHook((items, ctx) => {
        seen.push(ctx);
        return identityReadHook(items, ctx);
      });
      const readoutEpisodes = new Set<string>();
      const eps = seeds.map((seed, i) => ({ info: { episode: ids[i] as string, seed }, reset: { seed } }));
      const sub = {
        onStep: (
          _s: number,
          _e: unknown,
          _b: unknown,
          out: { readouts: { reads?: readonly { ctx: ReadContext }[] } },
        ) => void out.readouts.reads?.forEach((r) => readoutEpisodes.add(r.ctx.episode)),
      };
      await runLockstep(policy, () => makeLiteEnv('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }), eps, {
        subscribers: [sub as never],
      });
      // the same episodes again: fresh tokens
      await runLockstep(policy, () => makeLiteEnv('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }), eps);

      const tokens = readFileSync(log, 'utf8').trim().split('\n');
      expect(tokens).toHaveLength(6);
      for (const t of tokens) expect(t).toMatch(/^[0-9a-f]{16}$/);
      expect(new Set(tokens).size).toBe(6); // fresh at every reset, the same episode included
      for (const id of ids) expect(tokens).not.toContain(id);
      for (const seed of seeds) expect(tokens).not.toContain(scopeIdOf('ShellGameTouch-lite', seed));
      // the hook and the readouts: the episode ids, never a token
      expect(seen.length).toBeGreaterThan(0);
      expect(new Set(seen.map((c) => c.episode))).toEqual(new Set(ids));
      expect(new Set(seen.map((c) => c.scope))).toEqual(new Set(ids));
      expect(readoutEpisodes).toEqual(new Set(ids));
    } finally {
      await policy.close();
    }
  }, 60_000);
});
