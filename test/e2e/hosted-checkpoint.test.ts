/**
 * The same checkpoint served two ways gives the same rows (issue #33 item 3): checkpoints/lite-memvla run in process
 * by ExternalMemoryPolicy (onnxruntime-node) and served from Python by the policy host's `imep-checkpoint`
 * (`policy: { runtime: remote, name: imep-checkpoint, checkpoint: checkpoints/lite-memvla }`, onnxruntime for Python),
 * on ShellGameTouch-lite under every read condition of shellgame-blackout.yaml: A, U (one ULP per read), S_pi, T_mu
 * (wave 1), A, N_blk (reads blocked), C (wave 2).
 *
 * Compared per episode: the action digest, success, steps and the read summary — byte-identical (both sides run
 * onnxruntime 1.30.0's CPU kernels with the same session options, the Python bank is a port of src/banks' episode
 * bank). Needs a Python with onnxruntime (the mikasa or libero venv): run with IMEP_HOSTED_ONNX=1 and IMEP_PYTHON set,
 * as `bash scripts/sims/mikasa.sh test` does; skipped otherwise.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../src/campaign/campaign.js';
import { sha256Hex } from '../../src/core/hash.js';
import { ROOT } from '../campaign/helpers.js';

const ON = process.env['IMEP_HOSTED_ONNX'] === '1' && process.env['IMEP_PYTHON'] !== undefined;
const CKPT = join(ROOT, 'checkpoints/lite-memvla');
const N = 16;

interface Row {
  readonly wave: number;
  readonly condition: string;
  readonly seed: number;
  readonly success: boolean | null;
  readonly steps: number;
  readonly actionDigest: string;
  readonly reads: Record<string, unknown>;
}

function yaml(id: string, policy: string): string {
  return `version: 1
id: ${id}
title: lite-memvla ${id}
simulator: { kind: lite }
envs:
  - { id: ShellGameTouch-lite, kwargs: { blackoutFromStep: 6, strict: true, toolStart: home } }
${policy}
memory: { bank: episode-local, banks: [perceptual], capacity: 96, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 610000, end: ${610000 + N - 1} }] }
n: ${N}
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: U, kind: U, direction: away, installation: read }
  - { id: S_pi, kind: S_pi, seed: 610001 }
  - { id: T_mu, kind: T_mu, seed: 610002 }
  - { id: N_blk, kind: N, variant: block }
  - { id: C, kind: C }
waves:
  - { id: 1, conditions: [A, U, S_pi, T_mu], anchor: A }
  - { id: 2, conditions: [A, N_blk, C], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`;
}

const rowsOf = (unit: string): Row[] =>
  readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
const key = (r: Row): string => `${r.wave}/${r.condition}/${r.seed}`;
const episode = (r: Row) => ({
  success: r.success,
  steps: r.steps,
  actionDigest: r.actionDigest,
  reads: r.reads,
});

describe.skipIf(!ON)('lite-memvla in process and hosted in Python (IMEP_HOSTED_ONNX=1, IMEP_PYTHON)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-e2e-hosted-ckpt-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const quiet = { progress: null, operator: { id: 'hosted-ckpt-e2e', source: 'explicit' as const } };

  it('gives byte-identical episodes under A, U, S_pi, T_mu, N_blk and C', async () => {
    const sha = sha256Hex(readFileSync(join(CKPT, 'model.json')));
    const inProcess = join(dir, 'in-process.yaml');
    const hosted = join(dir, 'hosted.yaml');
    writeFileSync(
      inProcess,
      yaml('ckpt-in-process', `checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: ${sha} }`),
    );
    writeFileSync(
      hosted,
      yaml('ckpt-hosted', `policy: { runtime: remote, name: imep-checkpoint, checkpoint: checkpoints/lite-memvla }`),
    );
    const said: string[] = [];
    const a = await runCampaign(inProcess, { ...quiet, campaignsDir: join(dir, 'a'), through: 'seal', say: () => {} });
    const b = await runCampaign(hosted, {
      ...quiet,
      campaignsDir: join(dir, 'b'),
      through: 'seal',
      say: (l) => said.push(l),
    });
    expect(said.some((l) => /^policy: remote imep-checkpoint v1\+onnxruntime-1\.30\.0 /.test(l))).toBe(true);

    const ra = rowsOf(a);
    const rb = rowsOf(b);
    expect(ra).toHaveLength(7 * N);
    expect(rb.map(key).sort()).toEqual(ra.map(key).sort());
    const byKey = new Map(rb.map((r) => [key(r), r]));
    const differ = ra.filter((r) => JSON.stringify(episode(r)) !== JSON.stringify(episode(byKey.get(key(r)) as Row)));
    expect(differ.map(key)).toEqual([]);
    // the comparison has teeth: the policy succeeds with its reads and not without them, and every read condition
    // changed what the graph read
    const ok = (cond: string): number => ra.filter((r) => r.condition === cond && r.success === true).length;
    expect(ok('A')).toBeGreaterThan(ok('N_blk'));
    const digests = (cond: string, wave: number): string[] =>
      ra.filter((r) => r.condition === cond && r.wave === wave).map((r) => r.actionDigest);
    expect(digests('N_blk', 2)).not.toEqual(digests('A', 2));
    expect(digests('U', 1)).not.toEqual(digests('A', 1));

    // precommit froze the weights: model.json and every file it lists are in the hosted policy's identity
    const pre = JSON.parse(readFileSync(join(b, 'precommit.json'), 'utf8')) as {
      hostedPolicy: { memory: unknown; files: { path: string; sha256: string }[] };
    };
    const manifest = JSON.parse(readFileSync(join(CKPT, 'model.json'), 'utf8')) as {
      files: Record<string, { sha256: string }>;
    };
    const files = new Map(pre.hostedPolicy.files.map((f) => [f.path, f.sha256]));
    expect(files.get('checkpoint/model.json')).toBe(sha);
    for (const [name, f] of Object.entries(manifest.files)) expect(files.get(`checkpoint/${name}`)).toBe(f.sha256);
    expect(pre.hostedPolicy.memory).toEqual({ bank: 'episode-local', banks: ['perceptual'], k: 4 });
  }, 600_000);
});
