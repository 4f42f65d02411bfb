import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { startRun } from '../../src/evidence/transitions/formal-run.js';
import { RowSink, type CampaignOptions } from '../../src/campaign/index.js';
import { runPlan } from '../../src/campaign/run-plan.js';
import { buildPlan, loadProtocolSync } from '../../src/protocol/index.js';
import { scriptedProvider } from './scripted-policies.js';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

export interface Sandbox {
  readonly dir: string;
  readonly campaigns: string;
  /** A checkpoint root holding checkpoints/lite-memvla/model.json (scripted tests only hash it). */
  readonly root: string;
  readonly checkpointSha: string;
}

export function sandbox(prefix = 'imep-runner-'): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const ck = join(dir, 'root', 'checkpoints', 'lite-memvla');
  mkdirSync(ck, { recursive: true });
  const text = '{"scripted": true}\n';
  writeFileSync(join(ck, 'model.json'), text);
  return {
    dir,
    campaigns: join(dir, 'campaigns'),
    root: join(dir, 'root'),
    checkpointSha: createHash('sha256').update(text).digest('hex'),
  };
}

/** The blackout ladder reduced to `n` seeds (band start..start+n−1), strict ShellGame, a given checkpoint hash. */
export function blackoutYaml(opts: { n: number; sha: string; start?: number; strict?: boolean; id?: string }): string {
  const start = opts.start ?? 610000;
  let text = readFileSync(join(ROOT, 'protocols/shellgame-blackout.yaml'), 'utf8');
  text = text.replace(/sha256: \S+/, `sha256: ${opts.sha}`);
  text = text.replace(/- \{ start: 610000, end: 610399 \}/, `- { start: ${start}, end: ${start + opts.n - 1} }`);
  text = text.replace(/^n: 400$/m, `n: ${opts.n}`);
  text = text.replace(/strict: (true|false)/, `strict: ${opts.strict ?? true}`);
  if (opts.id) text = text.replace(/^id: shellgame-blackout$/m, `id: ${opts.id}`);
  return text;
}

/** The RememberColor substitution protocol reduced to `n` seeds per task. */
export function rememberColorYaml(opts: { n: number; sha: string; strict?: boolean }): string {
  let text = readFileSync(join(ROOT, 'protocols/remembercolor-substitution.yaml'), 'utf8');
  // the sandbox's scripted checkpoint stands in for the protocol's (checkpoints/lite-memvla-rc)
  text = text.replace(/path: checkpoints\/\S+/, 'path: checkpoints/lite-memvla');
  text = text.replace(/sha256: \S+/, `sha256: ${opts.sha}`);
  text = text.replace(/- \{ start: 9001, end: 9200 \}/, `- { start: 9001, end: ${9000 + opts.n} }`);
  text = text.replace(/^n: 200 .*$/m, `n: ${opts.n}`);
  text = text.replaceAll('strict: false', `strict: ${opts.strict ?? true}`);
  return text;
}

export function writeProtocol(box: Sandbox, name: string, text: string): string {
  const file = join(box.dir, name);
  writeFileSync(file, text);
  return file;
}

/** Options for the in-process runner with a scripted policy; lines said are collected. */
export function scriptedOptions(
  box: Sandbox,
  kind: 'shell' | 'color',
  extra: Partial<CampaignOptions> = {},
): CampaignOptions & { lines: string[] } {
  const lines: string[] = [];
  return {
    campaignsDir: box.campaigns,
    root: box.root,
    batchSize: 4,
    progress: null,
    say: (l) => lines.push(l),
    operator: { id: 'runner-test', source: 'explicit' },
    policies: async () => scriptedProvider(kind),
    lines,
    ...extra,
  };
}

/**
 * A formal run of the precommitted `unit` (protocol `file`) that crashes after `stopAt` durable rows: the row
 * target throws on the next append, as a process killed between two rows leaves the unit (state 'running').
 */
export async function crashFormalRun(
  unit: string,
  file: string,
  kind: 'shell' | 'color',
  stopAt: number,
  batchSize: number,
): Promise<void> {
  const run = await startRun(unit, { operator: { id: 'runner-test', source: 'explicit' } });
  let appended = 0;
  const dying = {
    appendRow: async (r: Parameters<typeof run.appendRow>[0]) => {
      if (appended >= stopAt) throw new Error('simulated crash');
      appended += 1;
      await run.appendRow(r);
    },
    appendTiming: (t: Parameters<typeof run.appendTiming>[0]) => run.appendTiming(t),
    appendTrace: (s: string, e: Parameters<typeof run.appendTrace>[1]) => run.appendTrace(s, e),
  };
  const { protocol } = loadProtocolSync(file);
  const plan = buildPlan(protocol);
  const sink = new RowSink(
    dying,
    plan.episodes.map((e) => e.seq),
  );
  let crashed = false;
  try {
    await runPlan({
      protocol,
      episodes: plan.episodes,
      policies: scriptedProvider(kind),
      envs: (t) => makeLiteEnv(t.envId, t.kwargs),
      batchSize,
      sink,
    });
    await sink.drain();
  } catch (e) {
    if (!/simulated crash/.test(String(e))) throw e;
    crashed = true;
  }
  await sink.settle();
  if (!crashed) throw new Error(`the run did not crash: it has at most ${stopAt} rows`);
}
