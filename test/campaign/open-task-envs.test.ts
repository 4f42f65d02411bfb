/**
 * A run keeps the slot environments of at most OPEN_TASK_ENVS tasks open (src/campaign/run-plan.ts keepOpen): a
 * suite's segments go condition by condition over every task, and a real simulator's env holds its scene (a LIBERO
 * env ~850 MB), so the least recently used task's envs are closed and made again when its next segment comes — with
 * the same rows as when every env stays open (a reset depends on its seed only).
 */
import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { RowSink, type PolicyProvider } from '../../src/campaign/index.js';
import { OPEN_TASK_ENVS, runPlan } from '../../src/campaign/run-plan.js';
import type { SimEnvironment } from '../../src/runtime/index.js';
import { buildPlan, parseProtocol, type Protocol } from '../../src/protocol/index.js';
import { blackoutYaml } from './helpers.js';
import { ShellScriptedPolicy } from './scripted-policies.js';
import { registerBuiltinKinds } from '../../src/kinds/index.js';

registerBuiltinKinds();

const TASKS = 6;

function protocolWithTasks(): Protocol {
  const one = /^  - id: ShellGameTouch-lite\n    kwargs: (\{.*\})$/m;
  const text = blackoutYaml({ n: 3, sha: 'a'.repeat(64) });
  const kwargs = one.exec(text)?.[1];
  expect(kwargs).toBeDefined();
  const envs = Array.from(
    { length: TASKS },
    (_, i) => `  - { id: ShellGameTouch-lite, task: shell-${i}, kwargs: ${kwargs} }`,
  );
  return parseProtocol(text.replace(one, envs.join('\n')), 'open-envs.yaml').protocol;
}

async function run(): Promise<{ rows: string[]; open: number[]; made: number }> {
  const protocol = protocolWithTasks();
  expect(protocol.envs).toHaveLength(TASKS);
  const plan = buildPlan(protocol);
  const rows: string[] = [];
  const sink = new RowSink(
    {
      appendRow: async (r) => void rows.push(JSON.stringify([r.condition, r.task, r.seed, r.success, r.actionDigest])),
      appendTiming: async () => undefined,
      appendTrace: async () => undefined,
    },
    plan.episodes.map((e) => e.seq),
  );
  let live = 0;
  let made = 0;
  const open: number[] = [];
  const provider: PolicyProvider = {
    description: 'scripted',
    policyFor: async (task, batch) => new ShellScriptedPolicy(batch, task.facts.decisionFromStep),
    release: async () => undefined,
  };
  await runPlan({
    protocol,
    episodes: plan.episodes,
    policies: provider,
    envs: (t): SimEnvironment => {
      const inner = makeLiteEnv(t.envId, t.kwargs);
      let counted = false;
      return {
        spec: inner.spec,
        reset: async (r) => {
          if (!counted) ((counted = true), (live += 1), (made += 1), open.push(live));
          return inner.reset(r);
        },
        step: (a) => inner.step(a),
        close: async () => {
          if (counted) ((counted = false), (live -= 1));
          await inner.close();
        },
      };
    },
    batchSize: 2,
    sink,
  });
  await sink.drain();
  return { rows, open, made };
}

describe('open task environments', () => {
  it(`at most ${OPEN_TASK_ENVS} tasks' environments are open at once; the rows are a plain run's`, async () => {
    const { rows, open, made } = await run();
    expect(Math.max(...open)).toBeLessThanOrEqual(OPEN_TASK_ENVS * 2); // batch 2: two slots per task
    expect(made).toBeGreaterThan(TASKS * 2); // tasks came back after being closed, and were made again
    // the same rows whatever was closed in between: a second run gives them byte for byte, and every task ran
    expect(new Set(rows.map((r) => (JSON.parse(r) as unknown[])[1])).size).toBe(TASKS);
    expect((await run()).rows).toEqual(rows);
  }, 60_000);
});
