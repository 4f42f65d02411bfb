/**
 * Prints the competence of lite checkpoints (competence.ts) with Wilson 95% intervals (src/stats/wilson.ts).
 *
 *   npx tsx scripts/checkpoints/measure.ts --checkpoint checkpoints/lite-memvla --task shell [--seed-from 0] [--count 300]
 *
 * The default band, seeds 0–299, is disjoint from the demonstration seeds (100000+).
 */
import { parseArgs } from 'node:util';
import { wilson } from '../../src/stats/wilson.js';
import { measureCompetence, type ConditionResult } from './competence.js';

const { values } = parseArgs({
  options: {
    checkpoint: { type: 'string', multiple: true },
    task: { type: 'string', default: 'shell' },
    'seed-from': { type: 'string', default: '0' },
    count: { type: 'string', default: '300' },
    batch: { type: 'string', default: '32' },
  },
});
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

function line(r: ConditionResult): string {
  const [lo, hi] = wilson(r.successes, r.n);
  let extra = '';
  const decided = r.episodes.filter((e) => e.decision !== null).length;
  extra += `  decided ${decided}/${r.n}`;
  if (r.condition === 'different-fact') {
    const followed = r.episodes.filter((e) => e.decision !== null && e.decision === e.donorAnswer).length;
    const [flo, fhi] = wilson(followed, r.n);
    extra += `  chose the donor's answer ${followed}/${r.n} = ${pct(followed / r.n)} [${pct(flo)}, ${pct(fhi)}]  substituted reads ${r.substitutedReads}`;
  }
  return `  ${r.condition.padEnd(15)} success ${String(r.successes).padStart(4)}/${r.n} = ${pct(r.successes / r.n).padStart(6)}  Wilson95 [${pct(lo)}, ${pct(hi)}]${extra}`;
}

for (const checkpoint of values.checkpoint ?? ['checkpoints/lite-memvla']) {
  const seedFrom = Number(values['seed-from']);
  const count = Number(values.count);
  const t0 = performance.now();
  const results = await measureCompetence({ checkpoint, task: values.task ?? 'shell', seedFrom, count, batchSize: Number(values.batch) });
  console.log(`${checkpoint} on task ${values.task}, seeds ${seedFrom}–${seedFrom + count - 1} (${((performance.now() - t0) / 1000).toFixed(1)} s):`);
  for (const r of results) console.log(line(r));
}
