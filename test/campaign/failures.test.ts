import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { isImepError } from '../../src/core/errors.js';
import { EpisodeRowSchema, EpisodeTimingSchema } from '../../src/evidence/records/episode-row.js';
import { RowSink, type EnvProvider } from '../../src/campaign/index.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { runPlan } from '../../src/campaign/run-plan.js';
import { buildPlan, parseProtocol } from '../../src/protocol/index.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';
import { FlakyEnv } from './flaky-env.js';
import { scriptedProvider } from './scripted-policies.js';

function rowsAndTimings(dir: string): {
  rows: ReturnType<typeof EpisodeRowSchema.parse>[];
  timings: ReturnType<typeof EpisodeTimingSchema.parse>[];
} {
  const read = (f: string): unknown[] =>
    readFileSync(join(dir, f), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
  return {
    rows: read('rows/rows.jsonl').map((r) => EpisodeRowSchema.parse(r)),
    timings: read('rows/timings.jsonl').map((t) => EpisodeTimingSchema.parse(t)),
  };
}

describe('campaign runner: execution failures', () => {
  it('records a failed episode (status failed, outcome null), never retries it, and fails the later attempts of its scope', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 4, sha: box.checkpointSha }));
    const envs: EnvProvider = (t) =>
      new FlakyEnv(
        makeLiteEnv(t.envId, t.kwargs),
        (seed, attempt, step) => seed === 610001 && attempt === 1 && step === 3,
      );
    const dir = await runCampaign(file, scriptedOptions(box, 'shell', { envs }));
    const { rows, timings } = rowsAndTimings(dir);
    const failed = rows.filter((r) => r.status === 'failed');
    expect(failed.length).toBe(7 * 2);
    for (const r of failed) {
      expect(r.seed).toBe(610001);
      expect(r.success).toBeNull();
      expect(r.tries).toBe(1);
      expect(r.failure?.code).toBe('E_BRIDGE_TIMEOUT');
    }
    expect(failed.filter((r) => r.attempt === 1).every((r) => r.steps === 2)).toBe(true);
    expect(
      failed
        .filter((r) => r.attempt === 2)
        .every((r) => r.steps === 0 && /not run: attempt 1/.test(r.failure?.message ?? '')),
    ).toBe(true);
    const t = timings.filter((x) => failed.some((r) => r.seq === x.seq && r.attempt === 1));
    expect(t.every((x) => x.failedTries.length === 1)).toBe(true);
    expect(rows.filter((r) => r.seed !== 610001).every((r) => r.status === 'ok')).toBe(true);
  });

  it('under a registered retry policy, logs every failed try and records tries in the row', async () => {
    const box = sandbox();
    const text = blackoutYaml({ n: 4, sha: box.checkpointSha }).replace(
      'executionFailures: { policy: record }',
      'executionFailures: { policy: retry, maxRetries: 2 }',
    );
    const file = writeProtocol(box, 'p.yaml', text);
    const seen = new Map<string, number>();
    const envs: EnvProvider = (t) =>
      new FlakyEnv(makeLiteEnv(t.envId, t.kwargs), (seed, attempt, step) => {
        if (seed !== 610002 || attempt !== 2 || step !== 4) return false;
        const n = (seen.get('x') ?? 0) + 1;
        seen.set('x', n);
        return n % 3 !== 0; // fails twice per unit, succeeds on the third try
      });
    const dir = await runCampaign(file, scriptedOptions(box, 'shell', { envs }));
    const { rows, timings } = rowsAndTimings(dir);
    expect(rows.every((r) => r.status === 'ok')).toBe(true);
    const retried = rows.filter((r) => r.seed === 610002);
    expect(retried.every((r) => r.tries === 3)).toBe(true);
    const att2 = timings.filter((t) => retried.some((r) => r.seq === t.seq && r.attempt === 2));
    expect(
      att2.every((t) => t.failedTries.length === 2 && t.failedTries.every((f) => f.code === 'E_BRIDGE_TIMEOUT')),
    ).toBe(true);
    expect(rows.filter((r) => r.seed !== 610002).every((r) => r.tries === 1)).toBe(true);
  });

  it('runPlan refuses overlapping allowlists before any row is written', async () => {
    const box = sandbox();
    const { protocol } = parseProtocol(blackoutYaml({ n: 2, sha: box.checkpointSha }), 'p.yaml');
    const bad = {
      ...protocol,
      allowlists: {
        methodVisible: [...protocol.allowlists.methodVisible, 'ballCup'],
        evaluatorOnly: protocol.allowlists.evaluatorOnly,
      },
    };
    const written: unknown[] = [];
    const target = {
      appendRow: async (r: unknown) => void written.push(r),
      appendTiming: async () => undefined,
      appendTrace: async () => undefined,
    };
    const plan = buildPlan(protocol);
    let code = '';
    try {
      await runPlan({
        protocol: bad,
        episodes: plan.episodes,
        policies: scriptedProvider('shell'),
        envs: (t) => makeLiteEnv(t.envId, t.kwargs),
        batchSize: 2,
        sink: new RowSink(
          target,
          plan.episodes.map((e) => e.seq),
        ),
      });
    } catch (e) {
      code = isImepError(e) ? e.code : String(e);
    }
    expect(code).toBe('E_ALLOWLIST_OVERLAP');
    expect(written).toEqual([]);
  });
});
