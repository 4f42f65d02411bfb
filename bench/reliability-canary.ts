/**
 * Reliability figure (issue 9, information isolation): the canary scan of test/reliability/canary.test.ts
 * on a larger campaign — every evaluator-only value set to a unique canary, every byte the policy receives
 * recorded and scanned in every encoding. Prints bytes received / scanned and the hits (must be 0).
 *
 *   npx tsx bench/reliability-canary.ts [--n N]
 */
import { parseArgs } from 'node:util';
import { canaryCampaign, formatCanary } from '../test/reliability/support/canary.js';

const { values } = parseArgs({ options: { n: { type: 'string' } } });
const t0 = performance.now();
const c = await canaryCampaign(Number(values.n ?? '20'));
for (const line of formatCanary(c)) console.log(line);
console.log(
  `wall ${((performance.now() - t0) / 1000).toFixed(1)} s; result: ${c.result.hits.length === 0 && c.rows === c.planned ? 'PASS' : 'FAIL'}`,
);
process.exitCode = c.result.hits.length === 0 && c.rows === c.planned ? 0 : 1;
