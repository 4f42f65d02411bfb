/**
 * Merge without SLURM: shards run in-process (scripted policies, the RememberColor substitution protocol,
 * whose S/T donor swaps write a donor-assignment trace in every shard) and are merged into the unit's
 * formal run — rows and traces byte-identical to a single-process run — then sealed; refusals for missing,
 * incomplete and foreign shards; an interrupted merge resumes; an interrupted seal is completed.
 */
import { chmodSync, cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { shardDir } from '../../src/campaign/index.js';
import { startRun } from '../../src/evidence/transitions/formal-run.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { MERGE_RUN_PREFIX, mergeCluster } from '../../src/cluster/merge.js';
import { runShardOfUnit } from '../../src/cluster/shard-run.js';
import { planCluster } from '../../src/cluster/submit.js';
import { scriptedProvider } from '../campaign/scripted-policies.js';
import { rememberColorYaml, sandbox, scriptedOptions, writeProtocol, type Sandbox } from '../campaign/helpers.js';
import { killShardAt } from './support.js';

const read = (f: string): string => readFileSync(f, 'utf8');

/** Every file under a folder (relative path → bytes as text). */
function filesOf(dir: string, rel = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(join(dir, rel)).sort()) {
    const r = rel === '' ? e : `${rel}/${e}`;
    if (statSync(join(dir, r)).isDirectory()) for (const [k, v] of filesOf(dir, r)) out.set(k, v);
    else out.set(r, read(join(dir, r)));
  }
  return out;
}

/** Undoes the read-only step of a seal (a seal killed before seal.json never reached it). */
function writable(d: string): void {
  chmodSync(d, 0o755);
  for (const e of readdirSync(d)) {
    const p = join(d, e);
    if (statSync(p).isDirectory()) writable(p);
    else chmodSync(p, 0o644);
  }
}
const quiet = { say: () => undefined };

async function runShard(
  box: Sandbox,
  unit: string,
  index: number,
  count: number,
  env: NodeJS.ProcessEnv = {},
): Promise<void> {
  await runShardOfUnit(
    unit,
    { index, count },
    { policies: async () => scriptedProvider('color'), root: box.root, batchSize: 3, env, ...quiet },
  );
}

async function reference(n: number): Promise<string> {
  const box = sandbox('imep-cluster-ref-');
  return runCampaign(
    writeProtocol(box, 'rc.yaml', rememberColorYaml({ n, sha: box.checkpointSha })),
    scriptedOptions(box, 'color', { batchSize: 5 }),
  );
}

async function shardedUnit(n: number): Promise<{ box: Sandbox; unit: string }> {
  const box = sandbox('imep-cluster-merge-');
  const unit = await precommitCampaign(
    writeProtocol(box, 'rc.yaml', rememberColorYaml({ n, sha: box.checkpointSha })),
    scriptedOptions(box, 'color'),
  );
  return { box, unit };
}

describe('cluster: merge', () => {
  it('merges the shards into rows and traces byte-identical to a single-process run, records the sessions, seals', async () => {
    const ref = await reference(5);
    const { box, unit } = await shardedUnit(5);
    const plan = await planCluster(unit, 3);
    expect(plan.plan.units).toBe(10);
    for (const i of [2, 0, 1])
      await runShard(box, unit, i, 3, {
        CUDA_VISIBLE_DEVICES: String(i),
        SLURM_ARRAY_JOB_ID: '77',
        SLURM_ARRAY_TASK_ID: String(i),
      });
    const said: string[] = [];
    const r = await mergeCluster(unit, { say: (l) => said.push(l) });
    expect(r.rows).toBe(plan.plan.rows);
    expect(said.join('\n')).toMatch(/merged 3 shards \(\d+ rows\) into .*sealed: Merkle root [0-9a-f]{64}/);
    expect(read(join(unit, 'rows/rows.jsonl'))).toBe(read(join(ref, 'rows/rows.jsonl')));
    const streams = readdirSync(join(ref, 'traces')).sort();
    expect(streams).toEqual(['donors.jsonl', 'interventions.jsonl']);
    expect(readdirSync(join(unit, 'traces')).sort()).toEqual(streams);
    for (const s of streams) expect(read(join(unit, 'traces', s)), s).toBe(read(join(ref, 'traces', s)));
    expect(read(join(unit, 'rows/timings.jsonl')).trimEnd().split('\n')).toHaveLength(plan.plan.rows);
    expect((await readUnitState(unit)).state).toBe('sealed');
    expect((await verifyUnit(unit)).ok).toBe(true);
    const run = JSON.parse(read(join(unit, 'rows/run.json'))) as { runId: string };
    expect(run.runId.startsWith(MERGE_RUN_PREFIX)).toBe(true);
    // the shard plan, merge record and the sessions (with the GPU SLURM gave each task) are sealed in the unit
    const merge = JSON.parse(read(join(unit, 'cluster/merge.json'))) as { shards: { manifestSha256: string }[] };
    expect(merge.shards.map((s) => s.manifestSha256)).toEqual(plan.plan.shards.map((s) => s.sha256));
    const session = read(join(unit, 'cluster/sessions/shard-1-of-3.jsonl'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(session.map((s) => s['event'])).toEqual(['start', 'end']);
    expect(session[0]).toMatchObject({
      cudaVisibleDevices: '1',
      slurm: { SLURM_ARRAY_JOB_ID: '77', SLURM_ARRAY_TASK_ID: '1' },
      rowsAtStart: 0,
    });
    expect(session[1]).toMatchObject({ outcome: 'ok', cudaVisibleDevices: '1', rows: plan.plan.shards[1]!.rows });
    // merging again only says so
    const again: string[] = [];
    await mergeCluster(unit, { say: (l) => again.push(l) });
    expect(again.join('\n')).toMatch(/merged and sealed already/);
  });

  it('refuses a missing or incomplete shard, and a shard from another campaign, naming it', async () => {
    const { box, unit } = await shardedUnit(4);
    await planCluster(unit, 3);
    await runShard(box, unit, 0, 3);
    await expect(mergeCluster(unit, quiet)).rejects.toThrow(
      /2 of 3 shards are not complete: shard 1 \(never run\), shard 2 \(never run\)/,
    );
    await runShard(box, unit, 2, 3);
    // an incomplete shard: its rows cut short and its record reopened (as a task killed mid-run leaves it)
    const d1 = shardDir(unit, { index: 1, count: 3 });
    await runShard(box, unit, 1, 3);
    const rec = JSON.parse(read(join(d1, 'shard.json'))) as Record<string, unknown>;
    expect(rec['complete']).toBe(true);
    killShardAt(d1, 3, 20);
    await expect(mergeCluster(unit, quiet)).rejects.toThrow(/1 of 3 shards is not complete: shard 1 \(3\/\d+ rows\)/);
    // the re-run resumes after the last durable row and completes it
    await runShard(box, unit, 1, 3);
    const sessions = read(join(`${unit}.shards`, 'sessions/shard-1-of-3.jsonl'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; rowsAtStart?: number });
    expect(sessions.filter((s) => s.event === 'start').map((s) => s.rowsAtStart)).toEqual([0, 3]);

    // a shard folder from another campaign (another protocol hash) in place of shard 1
    const other = await shardedUnit(5);
    await planCluster(other.unit, 3);
    await runShard(other.box, other.unit, 1, 3);
    rmSync(d1, { recursive: true });
    cpSync(shardDir(other.unit, { index: 1, count: 3 }), d1, { recursive: true });
    const err = await mergeCluster(unit, quiet).then(
      () => null,
      (e: unknown) => e as Error & { file?: string },
    );
    expect(err?.message).toMatch(
      /shard 1\/3 belongs to another campaign \(protocol hash [0-9a-f]{12}…, this unit's is [0-9a-f]{12}…\)/,
    );
    expect(err?.file).toBe(join(d1, 'shard.json'));
    expect((await readUnitState(unit)).state).toBe('precommitted');
    expect(existsSync(join(unit, 'rows/rows.jsonl'))).toBe(false);
  });

  it('an interrupted merge resumes: no row lost or written twice', async () => {
    const ref = await reference(4);
    const { box, unit } = await shardedUnit(4);
    await planCluster(unit, 2);
    for (const i of [0, 1]) await runShard(box, unit, i, 2);
    // a merge killed after 7 durable rows and part of the 8th
    await startRun(unit, {
      runId: `${MERGE_RUN_PREFIX}20260101T000000Z-00000000`,
      operator: { id: 'merger', source: 'explicit' },
    });
    const refRows = read(join(ref, 'rows/rows.jsonl')).split('\n');
    writeFileSync(join(unit, 'rows/rows.jsonl'), `${refRows.slice(0, 7).join('\n')}\n${refRows[7]!.slice(0, 30)}`);
    const said: string[] = [];
    await mergeCluster(unit, { say: (l) => said.push(l), chunk: 5 });
    expect(said[0]).toMatch(/resuming the merge of .* at row 7 of/);
    expect(read(join(unit, 'rows/rows.jsonl'))).toBe(read(join(ref, 'rows/rows.jsonl')));
    for (const s of readdirSync(join(ref, 'traces')))
      expect(read(join(unit, 'traces', s))).toBe(read(join(ref, 'traces', s)));
    expect((await verifyUnit(unit)).ok).toBe(true);
  });

  it('merging again after a seal killed between unit.json and seal.json completes the seal (never "sealed already")', async () => {
    const ref = await reference(4);
    const { box, unit } = await shardedUnit(4);
    await planCluster(unit, 2);
    for (const i of [0, 1]) await runShard(box, unit, i, 2);
    const first = await mergeCluster(unit, quiet);
    expect(first.merkleRoot).toMatch(/^[0-9a-f]{64}$/);
    const sealedFiles = filesOf(unit);
    // the on-disk state a seal killed right after it set unit.json to 'sealed' leaves: no seal.json, nothing read-only
    writable(unit);
    rmSync(join(unit, 'seal.json'));
    const snap = await readUnitState(unit);
    expect({ state: snap.state, sealInterrupted: snap.sealInterrupted }).toEqual({
      state: 'sealed',
      sealInterrupted: true,
    });
    expect((await verifyUnit(unit)).ok).toBe(false);
    const said: string[] = [];
    const r = await mergeCluster(unit, { say: (l) => said.push(l) });
    expect(said.join('\n')).not.toMatch(/sealed already/);
    expect(said[0]).toMatch(
      /completed the interrupted seal of .* \(\d+ rows, merged already\): Merkle root [0-9a-f]{64}$/,
    );
    // the same unit as the uninterrupted merge + seal: same Merkle root, every file byte-identical but seal.json's timestamps
    expect(r.merkleRoot).toBe(first.merkleRoot);
    expect(existsSync(join(unit, 'seal.json'))).toBe(true);
    const after = filesOf(unit);
    expect([...after.keys()]).toEqual([...sealedFiles.keys()]);
    // seal.json is written anew, and with it the stock tools' signatures of it (attestations/seal.*)
    for (const [k, v] of sealedFiles)
      if (k !== 'seal.json' && !k.startsWith('attestations/seal.')) expect(after.get(k), k).toBe(v);
    expect(read(join(unit, 'rows/rows.jsonl'))).toBe(read(join(ref, 'rows/rows.jsonl')));
    const done = await readUnitState(unit);
    expect({ state: done.state, sealInterrupted: done.sealInterrupted }).toEqual({
      state: 'sealed',
      sealInterrupted: false,
    });
    expect((await verifyUnit(unit)).ok).toBe(true);
    expect(statSync(join(unit, 'rows/rows.jsonl')).mode & 0o777).toBe(0o444);
    expect(statSync(unit).mode & 0o777).toBe(0o555);
    // and now it is sealed already
    const again: string[] = [];
    expect((await mergeCluster(unit, { say: (l) => again.push(l) })).merkleRoot).toBeNull();
    expect(again.join('\n')).toMatch(/merged and sealed already/);
  });

  it('refuses a unit with a formal run that is not a merge, and a split changed mid-campaign', async () => {
    const { box, unit } = await shardedUnit(4);
    await planCluster(unit, 2);
    await runShard(box, unit, 0, 2);
    await expect(planCluster(unit, 4)).rejects.toThrow(/already split into 2 shards and shard 0 hold rows/);
    await expect(runShardOfUnit(unit, { index: 0, count: 4 }, quiet)).rejects.toThrow(/split into 2 shards .*not 4/);
    await startRun(unit, { operator: { id: 'someone', source: 'explicit' } });
    await expect(mergeCluster(unit, quiet)).rejects.toThrow(
      /has a formal run \(formal-.*\) that is not a cluster merge/,
    );
    await expect(planCluster(unit, 2)).rejects.toThrow(/is 'running'/);
  });
});
