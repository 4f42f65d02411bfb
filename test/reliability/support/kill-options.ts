import type { KillResumeOptions } from './kill-resume.js';

/** The kill schedule the test and the bench share. */
export const KILL_OPTIONS: KillResumeOptions = {
  kills: 20,
  seed: 'imep-reliability/kill-resume/v1',
  n: 10,
  maxDelayMs: 25,
  batchReference: 16,
  batchKilled: 4,
};
