/**
 * Bank selection benchmark: PCMB selection over one 16-slot scope with 256-d keys.
 *
 *   npx tsx bench/bank-selection.ts
 *
 * Prints µs per query (median and minimum over batches) for
 *   (a) selection: prepare the query's three keys (float32 → canonical float64 unit vectors) and run
 *       the selector over the scope's cached candidates;
 *   (b) a full StructuredBank.query: clock, selection, RetrievedItems with copied payload leaves
 *       (8 float32 fields × 256), identity read hook;
 * and each as a ratio to a baseline measured in the same run, batch by batch: 48 plain 256-d float64
 * dot products with one accumulator (16 records × 3 keys — the arithmetic any exact scorer of this
 * bank has to do, written the naive way).
 * Requirement (not asserted): (a) < 20 µs per query.
 */
import { Prng } from '../src/core/prng.js';
import { tensorFrom } from '../src/core/tensor.js';
import type { FloatTensor } from '../src/core/tensor.js';
import { PAYLOAD_FIELDS } from '../src/banks/record.js';
import type { Payload, RecordKeys } from '../src/banks/record.js';
import { StructuredBank, prepareKeys, resolveSelectorConfig, selectPrepared } from '../src/banks/index.js';
import type { SelectorCandidate } from '../src/banks/index.js';

const DIM = 256;
const SLOTS = 16;
const QUERIES = 64;
const BATCH = 500;
const BATCHES = 201;
const rng = new Prng('bench/bank-selection');

function randomValues(n: number): number[] {
  return Array.from({ length: n }, () => rng.nextNormal());
}
function f32(values: readonly number[]): FloatTensor {
  return tensorFrom('float32', values);
}
function noisy(t: FloatTensor, scale: number): FloatTensor {
  return f32(Array.from(t.data as Float32Array, (v) => v + scale * rng.nextNormal()));
}

const recordKeys: RecordKeys[] = Array.from({ length: SLOTS }, () => ({
  cognitiveKey: f32(randomValues(DIM)),
  perceptualKey: f32(randomValues(DIM)),
  stateSignature: f32(randomValues(DIM)),
}));
const payload = (): Payload => {
  const p: Partial<Record<(typeof PAYLOAD_FIELDS)[number], FloatTensor>> = {};
  for (const f of PAYLOAD_FIELDS) p[f] = f32(randomValues(DIM));
  return p as Payload;
};

const bank = new StructuredBank({ capacity: SLOTS, mergeThreshold: 1.1 });
for (const keys of recordKeys) bank.write('bench', { keys, payload: payload(), sourceEpisode: 'e0' });
// Queries near a stored record, so the gate accepts and the full top-k path runs.
const queries: RecordKeys[] = Array.from({ length: QUERIES }, (_, i) => {
  const base = recordKeys[i % SLOTS] as RecordKeys;
  return {
    cognitiveKey: noisy(base.cognitiveKey, 0.5),
    perceptualKey: noisy(base.perceptualKey, 0.5),
    stateSignature: noisy(base.stateSignature, 0.5),
  };
});

const candidates: SelectorCandidate[] = recordKeys.map((keys, slot) => ({
  slot,
  timestep: 0,
  prepared: prepareKeys(keys),
}));
const config = resolveSelectorConfig();
const flat = Array.from({ length: SLOTS * 3 }, () => Float64Array.from(randomValues(DIM)));
const probe = Float64Array.from(randomValues(DIM));

let sink = 0;
function baseline(): void {
  for (const v of flat) {
    let s = 0;
    for (let i = 0; i < DIM; i++) s += (probe[i] as number) * (v[i] as number);
    sink += s;
  }
}
let accepted = 0;
function selection(i: number): void {
  const sel = selectPrepared(prepareKeys(queries[i % QUERIES] as RecordKeys), candidates, config);
  if (sel.accepted) accepted++;
  sink += sel.picks.length;
}
function fullQuery(i: number): void {
  sink += bank.query('bench', queries[i % QUERIES] as RecordKeys, { episode: 'e1' }).items.length;
}

/** µs per call of one batch. */
function batchMicros(fn: (i: number) => void): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < BATCH; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / 1000 / BATCH;
}
const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[(xs.length - 1) >> 1] as number;

// Batches of the three workloads are interleaved, so a busy machine slows all three alike and the
// per-batch ratios stay meaningful; the minimum approximates an uncontended run.
for (let w = 0; w < 20; w++) {
  batchMicros(baseline);
  batchMicros(selection);
  batchMicros(fullQuery);
}
accepted = 0;
const base: number[] = [];
const sel: number[] = [];
const full: number[] = [];
for (let b = 0; b < BATCHES; b++) {
  base.push(batchMicros(baseline));
  sel.push(batchMicros(selection));
  full.push(batchMicros(fullQuery));
}
const acceptRate = accepted / (BATCH * BATCHES);
const selRatio = median(sel.map((x, i) => x / (base[i] as number)));
const fullRatio = median(full.map((x, i) => x / (base[i] as number)));

const fmt = (x: number): string => x.toFixed(2);
console.log(
  `bank-selection: ${SLOTS} slots, ${DIM}-d float32 keys, k=${config.k}, gate=${config.gate}; ${BATCHES} interleaved batches × ${BATCH} calls`,
);
const line = (label: string, xs: number[], ratio?: number): string =>
  `${label} median ${fmt(median(xs))} µs  (min ${fmt(Math.min(...xs))} µs)` +
  (ratio === undefined ? '' : `   ratio ${fmt(ratio)}× baseline (median of per-batch ratios)`);
console.log(line('baseline  (48 plain 256-d float64 dot products, one accumulator):', base));
console.log(
  line('selection (prepare query keys + selector), per query:           ', sel, selRatio) +
    `   requirement < 20 µs   accepted ${(100 * acceptRate).toFixed(1)}%`,
);
console.log(line('query     (StructuredBank.query incl. leaf copies), per query:   ', full, fullRatio));
if (sink === Number.MIN_VALUE) console.log('');
