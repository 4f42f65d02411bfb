import { describe, expect, it } from 'vitest';
import { KILL_OPTIONS } from './support/kill-options.js';
import { formatKillResume, killSchedule, runKillResume } from './support/kill-resume.js';

describe('orchestrator SIGKILL at 20 seeded points, resumed each time', () => {
  it('the schedule is deterministic in its seed: 20 distinct thresholds inside the plan', () => {
    const a = killSchedule(KILL_OPTIONS.seed, 20, 140, 25);
    expect(killSchedule(KILL_OPTIONS.seed, 20, 140, 25)).toEqual(a);
    expect(new Set(a.map((s) => s.threshold)).size).toBe(20);
    expect(a.every((s) => s.threshold >= 0 && s.threshold < 139 && s.delayMs >= 0 && s.delayMs < 25)).toBe(true);
    expect(killSchedule('another seed', 20, 140, 25)).not.toEqual(a);
  });

  it('loses and duplicates no row: final rows byte-identical to an uninterrupted run', async () => {
    const r = await runKillResume(KILL_OPTIONS);
    const text = formatKillResume(r, KILL_OPTIONS).join('\n');
    expect(r.errors, text).toEqual([]);
    // most runs must really be killed mid-campaign, not finish first
    expect(r.kills, text).toBeGreaterThanOrEqual(18);
    expect(
      r.runs.every((x) => x.prefixOk),
      text,
    ).toBe(true);
    // a run whose threshold its predecessors' rows already reach is killed within 0–24 ms of its start, before it can
    // print "resuming"; how many do is set by how far each kill overshoots its threshold (rows land a segment at a
    // time), so the count varies with the machine: below 10 on this 2-core machine at ff547ea too, 8–9 after this change.
    // The bar keeps the harness honest (a third of the runs do resume mid-campaign); the assertions below are the test
    expect(r.resumeMessages, text).toBeGreaterThanOrEqual(7);
    expect(r.finalCode).toBe(0);
    expect(r.finalRows).toBe(r.planned);
    expect(r.lost).toBe(0);
    expect(r.duplicated).toBe(0);
    expect(r.byteIdentical, text).toBe(true);
    expect(r.timingsSeqsOk).toBe(true);
    expect(r.verifyCode).toBe(0);
  }, 240_000);
});
