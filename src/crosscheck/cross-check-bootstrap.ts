/**
 * The cross-check's own re-run of the bootstrap: the same named PRNG (xoshiro128** v1 from src/core), the same
 * registered seed and the same lane rule — 16-bit lanes, high half first, Lemire rejection, a fresh uint32 per
 * stratum, strata in task order — through its own resampling loop; percentile ends by type 7.
 *   unit              one stratum of units
 *   cluster           one stratum of (task, seed) clusters, each its sum over its size (θ̄: a stratum per task)
 *   task-stratified   a stratum per task, weighted by its share of units (θ̄: by its registered weight)
 */
import { Prng } from '../core/index.js';
import { type7 } from './cross-check-math.js';
import { estimandKind, type Filled } from './cross-check-estimand-kinds.js';

interface Stratum {
  sums: number[];
  sizes: number[];
  weight: number;
}

/** One block per unit, or per (task, seed) cluster at the cluster level, in first-seen order. */
function blocksOf(kind: string, level: string, list: readonly Filled[]): { sums: number[]; sizes: number[] } {
  const contribution = estimandKind(kind).contribution;
  if (level !== 'cluster') return { sums: list.map((u) => contribution(u.y)), sizes: list.map(() => 1) };
  const order: string[] = [];
  const acc = new Map<string, { s: number; z: number }>();
  for (const u of list) {
    const key = `${u.task}\u001f${u.seed}`;
    if (!acc.has(key)) {
      acc.set(key, { s: 0, z: 0 });
      order.push(key);
    }
    const a = acc.get(key)!;
    a.s += contribution(u.y);
    a.z += 1;
  }
  return { sums: order.map((k) => acc.get(k)!.s), sizes: order.map((k) => acc.get(k)!.z) };
}

function strata(
  kind: string,
  level: string,
  units: readonly Filled[],
  w: number[] | null,
  tasks: readonly string[],
): Stratum[] {
  const byTask = kind === 'thetaBar';
  if (level === 'unit' || (level === 'cluster' && !byTask)) return [{ ...blocksOf(kind, level, units), weight: 1 }];
  const out: Stratum[] = [];
  tasks.forEach((t, k) => {
    const mine = units.filter((u) => u.task === t);
    const weight = byTask ? (w as number[])[k]! : mine.length / units.length;
    if (mine.length > 0 && weight > 0) out.push({ ...blocksOf(kind, level, mine), weight });
  });
  return out;
}

function resampleOnce(prng: Prng, s: Stratum): number {
  const m = s.sums.length;
  let sum = 0,
    size = 0,
    drawn = 0;
  if (m > 0x10000) {
    for (let j = 0; j < m; j++) {
      const i = prng.nextInt(m);
      sum += s.sums[i]!;
      size += s.sizes[i]!;
    }
    return sum / size;
  }
  const reject = (0x10000 - m) % m;
  while (drawn < m) {
    const x = prng.nextUint32();
    for (const lane of [Math.floor(x / 0x10000), x % 0x10000]) {
      const prod = lane * m;
      if (prod % 0x10000 >= reject) {
        const i = Math.floor(prod / 0x10000);
        sum += s.sums[i]!;
        size += s.sizes[i]!;
        drawn++;
        if (drawn === m) break;
      }
    }
  }
  return sum / size;
}

/** The percentile interval at `confidence` of `replicates` resampled estimates at the level. */
export function bootstrap(
  kind: string,
  level: string,
  units: readonly Filled[],
  w: number[] | null,
  tasks: readonly string[],
  replicates: number,
  seed: number | string,
  confidence: number,
): [number, number] {
  const st = strata(kind, level, units, w, tasks);
  const prng = new Prng(seed);
  const reps = new Float64Array(replicates);
  for (let r = 0; r < replicates; r++) {
    let stat = 0;
    for (const s of st) stat += s.weight * resampleOnce(prng, s);
    reps[r] = stat;
  }
  reps.sort();
  return [type7(reps, (1 - confidence) / 2), type7(reps, (1 + confidence) / 2)];
}
