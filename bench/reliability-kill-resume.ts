/**
 * Reliability figure (issue 9, faults): the orchestrator (`imep campaign run`, a fresh process each time)
 * SIGKILLed at 20 seeded points of a small campaign and resumed each time; prints the schedule, the rows
 * on disk at each kill, and lost / duplicated rows and byte identity with an uninterrupted run.
 * The same procedure is the test test/reliability/kill-resume.test.ts.
 *
 *   npx tsx bench/reliability-kill-resume.ts [--kills K] [--n N] [--seed S]
 */
import { parseArgs } from 'node:util';
import { KILL_OPTIONS } from '../test/reliability/support/kill-options.js';
import { formatKillResume, runKillResume } from '../test/reliability/support/kill-resume.js';

const { values } = parseArgs({
  options: { kills: { type: 'string' }, n: { type: 'string' }, seed: { type: 'string' } },
});
const o = {
  ...KILL_OPTIONS,
  kills: Number(values.kills ?? KILL_OPTIONS.kills),
  n: Number(values.n ?? KILL_OPTIONS.n),
  seed: values.seed ?? KILL_OPTIONS.seed,
};
const r = await runKillResume(o);
for (const line of formatKillResume(r, o)) console.log(line);
const ok =
  r.errors.length === 0 &&
  r.lost === 0 &&
  r.duplicated === 0 &&
  r.byteIdentical &&
  r.verifyCode === 0 &&
  r.runs.every((x) => x.prefixOk);
console.log(`result: ${ok ? 'PASS' : 'FAIL'}`);
process.exitCode = ok ? 0 : 1;
