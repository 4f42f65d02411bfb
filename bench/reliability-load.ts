/**
 * Reliability figure (issue 9, load): 8 concurrent lite simulator servers driven by one orchestrator for
 * 5 minutes (the figure; --seconds to change), RSS of every process sampled each second, the
 * orchestrator's heap after a full GC every 10 s, growth after warm-up against the stated bounds
 * (test/reliability/support/load.ts LOAD_BOUNDS). The shorter version is test/reliability/load.test.ts.
 *
 *   npx tsx bench/reliability-load.ts [--seconds S] [--servers K] [--warmup S] [--default-heap]
 */
import { parseArgs } from 'node:util';
import { formatLoad, LOAD_SERVER_FLAGS, loadWithinBounds, runLoad } from '../test/reliability/support/load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    servers: { type: 'string' },
    warmup: { type: 'string' },
    'default-heap': { type: 'boolean' },
  },
});
const o = {
  servers: Number(values.servers ?? '8'),
  seconds: Number(values.seconds ?? '300'),
  warmupSeconds: Number(values.warmup ?? '60'),
  n: 8,
  batch: 16,
  sampleMs: 1000,
  serverNodeFlags: values['default-heap'] ? [] : LOAD_SERVER_FLAGS,
};
const r = await runLoad(o);
for (const line of formatLoad(r, o)) console.log(line);
const ok = loadWithinBounds(r);
console.log(`result: ${ok ? 'PASS' : 'FAIL'}`);
process.exitCode = ok ? 0 : 1;
