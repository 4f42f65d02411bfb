/**
 * Reliability figure (issue 9, faults): disk full / file too large / unwritable folder — the scenarios of
 * test/reliability/disk-full.test.ts, one line each: exit code and errno, the file named, durable rows at
 * the failure (a byte prefix of the uninterrupted run?), seal.json / temp files left, and the recovery
 * (resume or seal again: rows byte-identical, verify exit code). tmpfs ENOSPC needs root.
 *
 *   npx tsx bench/reliability-disk-full.ts [--n N]
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  enospcRun,
  formatScenario,
  fsizeRows,
  fsizeSeal,
  makeFixture,
  readonlyFolder,
} from '../test/reliability/support/disk-full.js';

const { values } = parseArgs({ options: { n: { type: 'string' } } });
const n = Number(values.n ?? '6');
const t0 = performance.now();
const fx = await makeFixture(n);
let bad = 0;
try {
  console.log(`blackout ladder n=${n} (${fx.planned} rows), lite checkpoint; reference run uninterrupted`);
  for (const scenario of [fsizeRows, fsizeSeal, enospcRun, readonlyFolder]) {
    const s = await scenario(fx);
    console.log(formatScenario(s));
    if (s.skipped) continue;
    const recovered =
      s.recoverCode === undefined || (s.recoverCode === 0 && s.rowsIdentical === true && s.verifyCode === 0);
    if (
      s.exit?.code !== 4 ||
      (s.prefixOk !== undefined && !s.prefixOk) ||
      s.sealJsonAfterFailure === true ||
      (s.tempFiles?.length ?? 0) > 0 ||
      !recovered
    )
      bad += 1;
  }
} finally {
  rmSync(fx.dir, { recursive: true, force: true });
}
console.log(
  `wall ${((performance.now() - t0) / 1000).toFixed(1)} s; result: ${bad === 0 ? 'PASS' : `FAIL (${bad} scenarios)`}`,
);
process.exitCode = bad === 0 ? 0 : 1;
