import { buildChainRecords, freezeManifest, generateChainManifest, type ChainManifest, type ChainRecordSet } from '../../src/chainbench/index.js';

export interface Fixture {
  readonly manifest: ChainManifest;
  readonly hash: string;
  readonly records: ChainRecordSet;
}

const cache = new Map<string, Fixture>();

/** A generated lite manifest (frozen) and its records, cached per (chains, K, seed). */
export function fixture(chains: number, K: number | readonly number[], seed = 2024): Fixture {
  const key = `${chains}/${String(K)}/${seed}`;
  let f = cache.get(key);
  if (f === undefined) {
    const { manifest, hash } = freezeManifest(generateChainManifest({ chains, K, seed }));
    f = { manifest, hash, records: buildChainRecords(manifest) };
    cache.set(key, f);
  }
  return f;
}

/** A mutable deep copy of a manifest. */
export function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
