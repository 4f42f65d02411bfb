/**
 * slurmHolderCheck (src/cluster/slurm.ts): a shard lock held on another node is taken over only once SLURM no longer
 * runs the holder's task — not listed, or listed in a state that is not active — or when the holder was an earlier
 * run of this very task (a requeue); kept (refused) while the task is active or when squeue cannot answer.
 */
import { describe, expect, it } from 'vitest';
import type { Holder } from '../../src/evidence/unit-lock.js';
import { Slurm, slurmHolderCheck, type CommandResult } from '../../src/cluster/slurm.js';

const holder = (slurmJob?: string): Holder => ({
  pid: 7,
  host: 'node-3',
  startedAt: '2026-12-01T00:00:00Z',
  command: 'cluster shard-run u --shard 0/2',
  ...(slurmJob === undefined ? {} : { slurmJob }),
});

function squeueAnswering(result: CommandResult, asked: string[][]): Slurm {
  return new Slurm(async (program, args) => {
    asked.push([program, ...args]);
    return result;
  });
}

describe('slurmHolderCheck', () => {
  it('gone when squeue lists the task in an ended state or not at all; alive while active', async () => {
    const cases: [CommandResult, boolean | null][] = [
      [{ code: 0, stdout: '812_0|CANCELLED|None\n', stderr: '' }, true],
      [{ code: 0, stdout: '812_0|PREEMPTED|None\n', stderr: '' }, true],
      [{ code: 0, stdout: '812_0|NODE_FAIL|None\n', stderr: '' }, true],
      [{ code: 0, stdout: '', stderr: '' }, true],
      [{ code: 1, stdout: '', stderr: 'slurm_load_jobs error: Invalid job id specified\n' }, true],
      [{ code: 0, stdout: '812_0|RUNNING|None\n', stderr: '' }, false],
      [{ code: 0, stdout: '812_0|REQUEUED|None\n', stderr: '' }, false],
      [{ code: 0, stdout: '812_0|COMPLETING|None\n', stderr: '' }, false],
      [{ code: 1, stdout: '', stderr: 'slurm_load_jobs error: Unable to contact slurm controller\n' }, null],
      [{ code: 127, stdout: '', stderr: '' }, null],
    ];
    for (const [result, want] of cases) {
      const asked: string[][] = [];
      expect([
        result.stdout || result.stderr,
        await slurmHolderCheck(squeueAnswering(result, asked), '900_1')(holder('812_0')),
      ]).toEqual([result.stdout || result.stderr, want]);
      expect(asked).toEqual([['squeue', '--noheader', '--array', '--states=all', '--jobs=812_0', '--format=%i|%T|%r']]);
    }
  });

  it('an earlier run of this very task (requeued) is gone without asking; a holder outside SLURM cannot be told', async () => {
    const asked: string[][] = [];
    const slurm = squeueAnswering({ code: 0, stdout: '812_0|RUNNING|None\n', stderr: '' }, asked);
    expect(await slurmHolderCheck(slurm, '812_0')(holder('812_0'))).toBe(true);
    expect(await slurmHolderCheck(slurm, '812_0')(holder())).toBeNull();
    expect(asked).toEqual([]);
  });
});
