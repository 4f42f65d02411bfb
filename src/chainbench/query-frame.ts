/**
 * The query-observation hash of a chain, from the ChainDrawers-lite simulator.
 *
 * The hash is SHA-256 over everything a policy sees at the start of the query episode — the RGB frame
 * bytes, the tool pose (float32 bytes) and the instruction — separated by a 0x1f byte. The manifest
 * records it per chain; validation resets the query once per possible hidden fact (drawer 0..K−1, with
 * the chain's scene seed, query object and primary executor seed) and requires every hash to equal the
 * recorded one, so a chain whose query leaks its answer is refused.
 *
 * `QueryObserver` is the seam: tests substitute a deliberately leaky observer.
 */
import { createHash } from 'node:crypto';
import { CHAIN_OBJECTS, ChainDrawersLite } from '../sims/lite/chain-drawers.js';
import { frameOf, toolOf } from '../sims/lite/scripted.js';

/** The largest K ChainDrawers-lite provides. */
export const LITE_MAX_K = 4;
/** Object names ChainDrawers-lite can draw. */
export const LITE_OBJECT_NAMES: readonly string[] = Object.freeze(CHAIN_OBJECTS.map((o) => o.name));

export interface QueryProbe {
  readonly K: number;
  readonly sceneSeed: number;
  readonly object: string;
  /** The hidden fact (drawer position) under which the query is reset. */
  readonly drawer: number;
  readonly executorSeed: number;
}

/** Hashes the method-visible query observation of a probe. */
export interface QueryObserver {
  queryObservationHash(probe: QueryProbe): string;
}

const SEP = Uint8Array.of(0x1f);

/** The lite simulator as a QueryObserver (one env per K, reused). */
export class LiteQueryObserver implements QueryObserver {
  private readonly envs = new Map<number, ChainDrawersLite>();

  constructor(private readonly executionSuccess = 0.8) {}

  private env(K: number): ChainDrawersLite {
    let env = this.envs.get(K);
    if (env === undefined) {
      env = new ChainDrawersLite({ K, executionSuccess: this.executionSuccess });
      this.envs.set(K, env);
    }
    return env;
  }

  queryObservationHash(probe: QueryProbe): string {
    const r = this.env(probe.K).resetSync({
      seed: probe.sceneSeed,
      options: { role: 'query', object: probe.object, drawer: probe.drawer, executorSeed: probe.executorSeed },
    });
    const [x, y] = toolOf(r.obs);
    const h = createHash('sha256');
    h.update(frameOf(r.obs).data);
    h.update(SEP);
    h.update(new Uint8Array(Float32Array.of(x, y).buffer));
    h.update(SEP);
    h.update(String(r.obs['instruction']));
    return h.digest('hex');
  }
}
