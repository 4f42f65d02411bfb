/**
 * `cluster/jobs.jsonl`: one durable line per submission (job id, shards, script and its SHA-256), and the
 * latest job that covers each shard.
 */
import { join } from 'node:path';
import { ImepError } from '../core/index.js';
import { appendJsonLine, readJsonLines, repairTornTail } from '../evidence/index.js';
import { clusterPaths, JobRecordSchema, type JobRecord } from './cluster-layout.js';

/** The unit's submissions, oldest first (a torn final line, from a crash mid-append, is ignored). */
export async function readJobs(unitDir: string): Promise<JobRecord[]> {
  const file = clusterPaths(unitDir).jobs;
  const read = await readJsonLines(file);
  return read.lines.map((line, i) => {
    const r = JobRecordSchema.safeParse(line);
    if (!r.success)
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `line ${i + 1} is not a job record: ${r.error.issues[0]?.message ?? 'invalid'}`,
        { file },
      );
    return r.data;
  });
}

export async function appendJob(unitDir: string, record: JobRecord): Promise<void> {
  const file = clusterPaths(unitDir).jobs;
  await repairTornTail(file);
  await appendJsonLine(file, JobRecordSchema.parse(record));
}

/** For each shard index of a `count` split: the latest submission that ran it (or null). */
export function latestJobs(jobs: readonly JobRecord[], count: number): (JobRecord | null)[] {
  const out: (JobRecord | null)[] = Array.from({ length: count }, () => null);
  for (const j of jobs) {
    if (j.count !== count) continue;
    for (const i of j.shards) if (i < count) out[i] = j;
  }
  return out;
}

/** The script path of a submission, absolute. */
export function scriptPath(unitDir: string, job: Pick<JobRecord, 'script'>): string {
  return join(clusterPaths(unitDir).dir, job.script);
}
