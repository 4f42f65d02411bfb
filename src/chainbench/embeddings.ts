/**
 * Event embeddings: the feature vector each write/distractor record carries, which the nearest-centroid
 * readout evaluates (it stands in for the paper's pre-LM patch features of the write episode).
 *
 * Deterministic from the episode and the manifest's `features` spec:
 *   feature = drawerScale · unit(g_drawer) + objectScale · unit(g_object) + noise · ε,
 * where g_drawer ~ N(0, I) from Prng(`<seed>/drawer/<drawer name>`), g_object ~ N(0, I) from
 * Prng(`<seed>/object/<object name>`), and ε ~ N(0, I) from Prng(`<seed>/event/<chain id>/<episode index>`),
 * all `dim` long, summed in float64 and rounded once to float32. The embeddings are derived from the
 * identifiers of the manifest they are built from; a renaming (renaming.ts) carries the built features
 * over unchanged instead of re-deriving them.
 */
import { Prng } from '../core/index.js';
import type { FeatureSpec } from './manifest-schema.js';

/** The default features of generated manifests. */
export const DEFAULT_FEATURES: Omit<FeatureSpec, 'seed'> = Object.freeze({
  dim: 16,
  drawerScale: 1,
  objectScale: 0.25,
  noise: 0.02,
});

function unitGaussian(prng: Prng, dim: number): Float64Array {
  const v = new Float64Array(dim);
  let ss = 0;
  for (let i = 0; i < dim; i++) {
    const g = prng.nextNormal();
    v[i] = g;
    ss += g * g;
  }
  const norm = Math.sqrt(ss);
  if (norm > 0) for (let i = 0; i < dim; i++) v[i] = (v[i] as number) / norm;
  return v;
}

/** Builds event features for one feature spec, caching the per-identifier components. */
export class EventEmbedder {
  private readonly cache = new Map<string, Float64Array>();

  constructor(readonly spec: FeatureSpec) {}

  private component(kind: 'drawer' | 'object', name: string): Float64Array {
    const key = `${kind}/${name}`;
    let v = this.cache.get(key);
    if (v === undefined) {
      v = unitGaussian(new Prng(`${this.spec.seed}/${key}`), this.spec.dim);
      this.cache.set(key, v);
    }
    return v;
  }

  /** The event feature of episode `episodeIndex` of chain `chainId`, writing `object` → drawer `drawerName`. */
  feature(chainId: string, episodeIndex: number, object: string, drawerName: string): Float32Array {
    const { dim, drawerScale, objectScale, noise } = this.spec;
    const d = this.component('drawer', drawerName);
    const o = this.component('object', object);
    const eps = new Prng(`${this.spec.seed}/event/${chainId}/${episodeIndex}`);
    const out = new Float32Array(dim);
    for (let i = 0; i < dim; i++) {
      out[i] = drawerScale * (d[i] as number) + objectScale * (o[i] as number) + noise * eps.nextNormal();
    }
    return out;
  }
}
