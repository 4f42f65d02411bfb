/**
 * Prints the competence of lite checkpoints (competence.ts) with Wilson 95% intervals (src/stats/wilson.ts).
 *
 *   npx tsx scripts/checkpoints/measure.ts --checkpoint checkpoints/lite-memvla --task shell [--seed-from 0] [--count 300]
 *
 *   npx tsx scripts/checkpoints/measure.ts --checkpoint checkpoints/lite-memvla-rc --task rc3-retry [--seed-from 0] [--count 300]
 *
 * The default band, seeds 0–299, is disjoint from the demonstration seeds (100000+). The *-retry tasks run the
 * two-attempt structured-bank measurement of competence-rc.ts (attempt-2 success per condition, and how many units'
 * attempt-2 outcome differs from the reference's).
 */
import { parseArgs } from 'node:util';
import { wilson } from '../../src/stats/wilson.js';
import { measureCompetence, type ConditionResult } from './competence.js';
import { measureRcCompetence, type RcConditionResult } from './competence-rc.js';

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

function rcLines(results: readonly RcConditionResult[]): string[] {
  const ref = new Map((results.find((r) => r.condition === 'memory')?.units ?? []).map((u) => [u.seed, u]));
  const out: string[] = [];
  for (const r of results) {
    const n = r.units.length;
    const s2 = r.units.filter((u) => u.success2).length;
    const [lo, hi] = wilson(s2, n);
    let extra = '';
    if (r.condition === 'memory') {
      const s1 = r.units.filter((u) => u.success1).length;
      const recs = [...new Set(r.units.map((u) => u.records))].sort((a, b) => a - b).join('/');
      extra = `  attempt 1 ${s1}/${n} = ${pct(s1 / n)}  records per scope ${recs}`;
    } else {
      const changed = r.units.filter((u) => u.success2 !== ref.get(u.seed)?.success2).length;
      const [clo, chi] = wilson(changed, n);
      extra = `  changed vs memory ${changed}/${n} = ${pct(changed / n)} [${pct(clo)}, ${pct(chi)}]`;
      if (r.condition === 'same-fact' || r.condition === 'different-fact') {
        const swapped = r.units.filter((u) => u.donor !== null);
        const followed = swapped.filter((u) => u.decision2 !== null && u.decision2 === u.donor?.answer).length;
        extra += `  swapped ${swapped.length}/${n}  first touch = donor's colour ${followed}/${swapped.length}`;
      }
    }
    out.push(`  ${r.condition.padEnd(15)} attempt-2 success ${String(s2).padStart(4)}/${n} = ${pct(s2 / n).padStart(6)}  Wilson95 [${pct(lo)}, ${pct(hi)}]${extra}`);
  }
  return out;
}

for (const checkpoint of values.checkpoint ?? ['checkpoints/lite-memvla']) {
  const seedFrom = Number(values['seed-from']);
  const count = Number(values.count);
  const t0 = performance.now();
  if ((values.task ?? '').endsWith('-retry')) {
    const rc = await measureRcCompetence({ checkpoint, task: values.task as string, seedFrom, count, batchSize: Number(values.batch) });
    console.log(`${checkpoint} on task ${values.task}, seeds ${seedFrom}–${seedFrom + count - 1}, 2 attempts (${((performance.now() - t0) / 1000).toFixed(1)} s):`);
    for (const l of rcLines(rc)) console.log(l);
    continue;
  }
  const results = await measureCompetence({ checkpoint, task: values.task ?? 'shell', seedFrom, count, batchSize: Number(values.batch) });
  console.log(`${checkpoint} on task ${values.task}, seeds ${seedFrom}–${seedFrom + count - 1} (${((performance.now() - t0) / 1000).toFixed(1)} s):`);
  for (const r of results) console.log(line(r));
}
