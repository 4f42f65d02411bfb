/**
 * `imep cluster shard-run UNIT --shard I/N` — what each SLURM array task runs. It is
 * `imep campaign run <unit>/protocol.json --campaigns-dir <unit's parent> --shard I/N` (the runner's
 * shard mode: the units of shard I into `<unit>.shards/shard-I-of-N/`, resuming after the last durable
 * row) on the unit's FROZEN protocol — so an edited protocol file can never start a second unit — plus a
 * session record in `<unit>.shards/sessions/shard-I-of-N.jsonl` (copied into the unit by the merge):
 *
 *   start: when, host, pid, operator, SLURM job/array ids and node, CUDA_VISIBLE_DEVICES (the GPU SLURM
 *          gave the task; the policy runtime selects it through that variable), rows already durable
 *   end:   when, rows durable, the policy runtime's own description (backend and provider it ran on),
 *          ok or the error code
 *
 * A task killed mid-run leaves a start line without an end line; the next run of the shard adds its own.
 */
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ImepError, isImepError } from '../core/index.js';
import {
  appendJsonLine,
  repairTornTail,
  currentOperator,
  setRemoteHolderCheck,
  slurmJobOf,
  type RemoteHolderCheck,
} from '../evidence/index.js';
import { DEFAULT_BATCH } from '../campaign/index.js';
import { runCampaign } from '../campaign/index.js';
import { type CampaignOptions, type EnvProvider, type ShardSpec } from '../campaign/index.js';
import { clusterPaths, sessionFile } from './cluster-layout.js';
import { openClusterUnit, readShardPlanRecord, shardRowsDone } from './cluster-unit.js';
import { Slurm, slurmHolderCheck } from './slurm.js';
import { assertShardable } from './submit.js';

export interface ShardRunOptions {
  readonly batchSize?: number;
  /** Environment read for SLURM ids and CUDA_VISIBLE_DEVICES (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  readonly envs?: EnvProvider;
  readonly policies?: CampaignOptions['policies'];
  readonly root?: string;
  readonly say?: (line: string) => void;
  readonly now?: () => Date;
  /** How a shard lock held on another host is checked (default: SLURM's squeue, slurmHolderCheck). */
  readonly holderCheck?: RemoteHolderCheck;
}

export interface ShardRunResult {
  readonly rowsAtStart: number;
  readonly rows: number;
  readonly runtime: string | null;
  readonly cudaVisibleDevices: string | null;
}

const SLURM_VARS = [
  'SLURM_JOB_ID',
  'SLURM_ARRAY_JOB_ID',
  'SLURM_ARRAY_TASK_ID',
  'SLURM_JOB_NODELIST',
  'SLURM_JOB_PARTITION',
  'SLURM_RESTART_COUNT',
] as const;

function slurmIds(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of SLURM_VARS) {
    const v = env[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

export async function runShardOfUnit(
  unitDir: string,
  spec: ShardSpec,
  opts: ShardRunOptions = {},
): Promise<ShardRunResult> {
  const env = opts.env ?? process.env;
  const now = opts.now ?? (() => new Date());
  const say = opts.say ?? ((l: string) => process.stdout.write(`${l}\n`));
  const unit = await openClusterUnit(unitDir);
  assertShardable(unit);
  const recorded = await readShardPlanRecord(unit);
  if (recorded !== null && recorded.count !== spec.count) {
    throw new ImepError(
      'E_USAGE',
      `the unit is split into ${recorded.count} shards (cluster/shards.json), not ${spec.count}`,
      { field: '--shard', hint: `use --shard I/${recorded.count}` },
    );
  }
  const cuda = env['CUDA_VISIBLE_DEVICES'] ?? null;
  // a shard lock left on another node by a task SLURM stopped (scancel after SIGKILL, node failure, a requeue) is
  // taken over once SLURM no longer runs that task; without this, every resubmission of the shard would be refused
  setRemoteHolderCheck(opts.holderCheck ?? slurmHolderCheck(new Slurm(), slurmJobOf(env)));
  const file = sessionFile(unit.dir, spec.index, spec.count);
  await mkdir(clusterPaths(unit.dir).taskSessions, { recursive: true }).catch((e: unknown) => {
    throw new ImepError('E_IO', 'cannot create the sessions folder', {
      file: clusterPaths(unit.dir).taskSessions,
      cause: e,
    });
  });
  await repairTornTail(file);
  const rowsAtStart = await shardRowsDone(unit.dir, spec.index, spec.count);
  const operator = currentOperator(env);
  await appendJsonLine(file, {
    event: 'start',
    at: now().toISOString(),
    shard: spec.index,
    count: spec.count,
    host: hostname(),
    pid: process.pid,
    operator: operator.id,
    slurm: slurmIds(env),
    cudaVisibleDevices: cuda,
    rowsAtStart,
  });
  let runtime: string | null = null;
  const started = Date.now();
  const end = async (outcome: string): Promise<number> => {
    const rows = await shardRowsDone(unit.dir, spec.index, spec.count);
    await appendJsonLine(file, {
      event: 'end',
      at: now().toISOString(),
      shard: spec.index,
      count: spec.count,
      pid: process.pid,
      outcome,
      runtime,
      cudaVisibleDevices: cuda,
      rows,
      ms: Date.now() - started,
    });
    return rows;
  };
  try {
    await runCampaign(join(unit.dir, 'protocol.json'), {
      campaignsDir: unit.campaignsDir,
      batchSize: opts.batchSize ?? DEFAULT_BATCH,
      progress: null,
      say,
      shard: spec,
      operator,
      ...(opts.root === undefined ? {} : { root: opts.root }),
      ...(opts.envs === undefined ? {} : { envs: opts.envs }),
      // the runner's own choice (the checkpoint, or a hosted policy checked against the precommit) unless injected
      ...(opts.policies === undefined ? {} : { policies: opts.policies }),
      onPolicy: (p) => {
        runtime = p.description;
      },
    });
  } catch (e) {
    await end(isImepError(e) ? e.code : 'error').catch(() => undefined);
    throw e;
  }
  const rows = await end('ok');
  say(
    `shard ${spec.index}/${spec.count}: ${rows} rows durable (${rowsAtStart} before this run); runtime ${runtime ?? 'not loaded'}; CUDA_VISIBLE_DEVICES=${cuda ?? '(unset)'}`,
  );
  return { rowsAtStart, rows, runtime, cudaVisibleDevices: cuda };
}
