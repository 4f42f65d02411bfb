/**
 * Seeded generator of ChainDrawers-lite chain manifests.
 *
 * Chains `chain-00001 …` (zero-padded to at least 5 digits); chain i has K = K[(i − 1) mod |K|].
 * Per K group, the final facts are balanced: the list 0, 1, …, K−1 repeated to the group's size (each
 * drawer equally often, ±1 when the size is not a multiple of K) and shuffled by Prng(seed).fork(`facts/K`).
 * Rewrites: exactly round(rewriteRate · n_K) chains of each group, chosen by Prng(seed).fork(`rewrites/K`).
 * Everything else about chain c comes from its own stream Prng(seed).fork(`chain/<id>`), in this order:
 * scene seed, query object, distractor count (uniform in [min, max]), distractor objects (distinct,
 * never the query object) and drawers, the initial drawer of a rewrite (uniform among drawers ≠ final),
 * executor seeds (primary, then replay, redrawn while equal).
 *
 * Episode order: [write initial (rewrite only)], ⌊n/2⌋ distractors (rewrite) or none, the deciding write,
 * the remaining distractors, the query. Drawers are named `drawer-1 … drawer-K` by position. The query
 * frame hash is computed on the lite simulator under the final fact (validation recomputes it under every
 * possible fact).
 */
import { ImepError, PRNG_NAME, PRNG_VERSION, Prng } from '../core/index.js';
import { DEFAULT_FEATURES } from './embeddings.js';
import {
  CHAIN_MANIFEST_FORMAT,
  CHAIN_MANIFEST_VERSION,
  type Chain,
  type ChainManifest,
  type Episode,
  type FeatureSpec,
} from './manifest-schema.js';
import { LITE_MAX_K, LITE_OBJECT_NAMES, LiteQueryObserver, type QueryObserver } from './query-frame.js';

export const GENERATOR_NAME = 'chaindrawers-lite-generator';
export const GENERATOR_VERSION = 1;

export interface GenerateOptions {
  readonly chains: number;
  /** One K for every chain, or a list assigned round-robin. */
  readonly K: number | readonly number[];
  readonly seed: number;
  /** Fraction of chains (per K) whose initial fact is overwritten by a later write. Default 0.5. */
  readonly rewriteRate?: number;
  /** Distractor episodes per chain, uniform in [min, max]. Default 1–3. */
  readonly distractors?: { readonly min: number; readonly max: number };
  /** The lite executor's execution probability. Default 0.8. */
  readonly executionSuccess?: number;
  /** Feature spec overrides (the feature seed defaults to the generator seed). */
  readonly features?: Partial<FeatureSpec>;
  /** Query observer (default: the lite simulator). */
  readonly observer?: QueryObserver;
}

function usage(field: string, message: string): never {
  throw new ImepError('E_USAGE', message, { field });
}

export function drawerNames(K: number): string[] {
  return Array.from({ length: K }, (_, k) => `drawer-${k + 1}`);
}

export function chainId(i: number, total: number): string {
  return `chain-${String(i).padStart(Math.max(5, String(total).length), '0')}`;
}

export function generateChainManifest(opts: GenerateOptions): ChainManifest {
  const n = opts.chains;
  if (!Number.isInteger(n) || n < 1) usage('chains', `--chains must be a positive integer, got ${n}`);
  const Ks = typeof opts.K === 'number' ? [opts.K] : [...opts.K];
  if (Ks.length === 0) usage('K', 'give at least one K');
  for (const k of Ks) {
    if (!Number.isInteger(k) || k < 2 || k > LITE_MAX_K)
      usage('K', `K = ${k}: ChainDrawers-lite chains need 2 ≤ K ≤ ${LITE_MAX_K}`);
  }
  if (!Number.isInteger(opts.seed) || opts.seed < 0 || opts.seed > 0xffffffff)
    usage('seed', `--seed must be a uint32, got ${opts.seed}`);
  const rewriteRate = opts.rewriteRate ?? 0.5;
  if (!(rewriteRate >= 0 && rewriteRate <= 1))
    usage('rewriteRate', `the rewrite rate must lie in [0, 1], got ${rewriteRate}`);
  const dist = opts.distractors ?? { min: 1, max: 3 };
  const maxDistractors = LITE_OBJECT_NAMES.length - 1;
  if (!(
    Number.isInteger(dist.min) &&
    Number.isInteger(dist.max) &&
    dist.min >= 0 &&
    dist.min <= dist.max &&
    dist.max <= maxDistractors
  )) {
    usage(
      'distractors',
      `distractors must satisfy 0 ≤ min ≤ max ≤ ${maxDistractors} (distinct non-query objects), got ${dist.min}–${dist.max}`,
    );
  }
  const executionSuccess = opts.executionSuccess ?? 0.8;
  const features: FeatureSpec = { ...DEFAULT_FEATURES, seed: opts.seed, ...opts.features };
  const root = new Prng(opts.seed);
  const observer = opts.observer ?? new LiteQueryObserver(executionSuccess);

  // Per-K balanced final facts and exact rewrite counts.
  const kOf = Array.from({ length: n }, (_, i) => Ks[i % Ks.length] as number);
  const finals = new Array<number>(n);
  const rewrites = new Array<boolean>(n).fill(false);
  for (const K of [...new Set(Ks)]) {
    const members = kOf.flatMap((k, i) => (k === K ? [i] : []));
    const facts = root.fork(`facts/${K}`).shuffle(members.map((_, j) => j % K));
    members.forEach((i, j) => (finals[i] = facts[j] as number));
    const order = root.fork(`rewrites/${K}`).shuffle([...members]);
    for (const i of order.slice(0, Math.round(rewriteRate * members.length))) rewrites[i] = true;
  }

  const chains: Chain[] = [];
  for (let i = 0; i < n; i++) {
    const id = chainId(i + 1, n);
    const K = kOf[i] as number;
    const final = finals[i] as number;
    const rewrite = rewrites[i] as boolean;
    const p = root.fork(`chain/${id}`);
    const sceneSeed = p.nextUint32();
    const query = LITE_OBJECT_NAMES[p.nextInt(LITE_OBJECT_NAMES.length)] as string;
    const count = dist.min + p.nextInt(dist.max - dist.min + 1);
    const others = p.shuffle(LITE_OBJECT_NAMES.filter((o) => o !== query)).slice(0, count);
    const distractors: Episode[] = others.map((object) => ({ role: 'distractor', object, drawer: p.nextInt(K) }));
    const initial = rewrite ? (final + 1 + p.nextInt(K - 1)) % K : final;
    const primary = p.nextUint32();
    let replay = p.nextUint32();
    while (replay === primary) replay = p.nextUint32();
    const episodes: Episode[] = [];
    const before = rewrite ? Math.floor(count / 2) : 0;
    if (rewrite) episodes.push({ role: 'write', object: query, drawer: initial, deciding: false });
    episodes.push(...distractors.slice(0, before));
    episodes.push({ role: 'write', object: query, drawer: final, deciding: true });
    episodes.push(...distractors.slice(before));
    episodes.push({ role: 'query', object: query });
    chains.push({
      id,
      K,
      sceneSeed,
      drawers: drawerNames(K),
      episodes,
      initialFact: { object: query, drawer: initial },
      finalFact: { object: query, drawer: final },
      rewrite,
      executorSeeds: { primary, replay },
      queryFrameHash: observer.queryObservationHash({
        K,
        sceneSeed,
        object: query,
        drawer: final,
        executorSeed: primary,
      }),
    });
  }
  return {
    format: CHAIN_MANIFEST_FORMAT,
    version: CHAIN_MANIFEST_VERSION,
    env: { id: 'ChainDrawers-lite', executionSuccess },
    features,
    generator: {
      name: GENERATOR_NAME,
      version: GENERATOR_VERSION,
      seed: opts.seed,
      prng: { name: PRNG_NAME, version: PRNG_VERSION },
      chains: n,
      K: Ks,
      rewriteRate,
      distractors: { min: dist.min, max: dist.max },
    },
    chains,
  };
}
