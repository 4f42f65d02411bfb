/**
 * Reliability figure (issue 9, faults): a simulator server SIGKILLed mid-episode and another SIGSTOPped
 * during a campaign on bridged lite simulators (`imep sim serve lite` processes under the supervisor),
 * under each registered execution-failure policy (record; retry with 2 retries). Prints detection
 * latency against the step deadline, restarts, failed / retried / identical rows. The same procedure is
 * test/reliability/bridge-faults.test.ts (smaller).
 *
 *   npx tsx bench/reliability-bridge-faults.ts [--n N] [--servers K] [--step-ms MS]
 */
import { parseArgs } from 'node:util';
import { formatBridgeFaults, runBridgeFaults } from '../test/reliability/support/bridge-faults.js';

const { values } = parseArgs({
  options: { n: { type: 'string' }, servers: { type: 'string' }, 'step-ms': { type: 'string' } },
});
const base = {
  n: Number(values.n ?? '10'),
  servers: Number(values.servers ?? '3'),
  batch: 8,
  stepMs: Number(values['step-ms'] ?? '1500'),
  seed: 'imep-reliability/bridge-faults/v1',
};
let ok = true;
for (const failures of ['{ policy: record }', '{ policy: retry, maxRetries: 2 }']) {
  const o = { ...base, failures };
  const r = await runBridgeFaults(o);
  for (const line of formatBridgeFaults(r, o)) console.log(line);
  const detected = r.faults.every((f) => f.detectedMs !== null && f.detectedMs < o.stepMs + 1500);
  ok &&=
    detected && r.restarts === r.faults.length && r.rows === r.planned && r.okRowsDiffering.length === 0 && r.verified;
}
console.log(`result: ${ok ? 'PASS' : 'FAIL'}`);
process.exitCode = ok ? 0 : 1;
