/**
 * Manifest diff for selection-bias audits: which chains a new manifest version removed, added or
 * changed relative to an old one (by chain id; "changed" = same id, different canonical JSON, with the
 * top-level chain fields that differ), and which manifest-level fields (env, features, generator…)
 * changed. A rebuild that drops and adds chains is visible here as removed/added ids, whatever the
 * reason for it was.
 */
import { canonicalJson } from '../core/index.js';
import { manifestHash } from './manifest-io.js';
import type { Chain, ChainManifest } from './manifest-schema.js';

export interface ChainChange {
  readonly id: string;
  /** Top-level chain fields whose canonical JSON differs, sorted. */
  readonly fields: readonly string[];
}

export interface ManifestDiff {
  readonly oldHash: string;
  readonly newHash: string;
  readonly identical: boolean;
  readonly oldChains: number;
  readonly newChains: number;
  /** Ids only in the old manifest (old order). */
  readonly removed: readonly string[];
  /** Ids only in the new manifest (new order). */
  readonly added: readonly string[];
  /** Ids in both whose content differs (new order). */
  readonly changed: readonly ChainChange[];
  readonly unchanged: number;
  /** The chains both versions hold appear in a different relative order. */
  readonly orderChanged: boolean;
  /** Manifest-level fields (other than `chains`) whose canonical JSON differs. */
  readonly header: readonly string[];
}

function differingKeys(a: Record<string, unknown>, b: Record<string, unknown>, skip: readonly string[] = []): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys]
    .filter((k) => !skip.includes(k))
    .filter((k) => canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null) || k in a !== k in b)
    .sort();
}

export function diffManifests(oldM: ChainManifest, newM: ChainManifest): ManifestDiff {
  const oldById = new Map<string, Chain>(oldM.chains.map((c) => [c.id, c]));
  const newIds = new Set(newM.chains.map((c) => c.id));
  const removed = oldM.chains.filter((c) => !newIds.has(c.id)).map((c) => c.id);
  const added: string[] = [];
  const changed: ChainChange[] = [];
  let unchanged = 0;
  for (const c of newM.chains) {
    const o = oldById.get(c.id);
    if (o === undefined) added.push(c.id);
    else {
      const fields = differingKeys(o as unknown as Record<string, unknown>, c as unknown as Record<string, unknown>);
      if (fields.length > 0) changed.push({ id: c.id, fields });
      else unchanged++;
    }
  }
  const common = newM.chains.map((c) => c.id).filter((id) => oldById.has(id));
  const oldCommon = oldM.chains.map((c) => c.id).filter((id) => newIds.has(id));
  const orderChanged = common.some((id, i) => oldCommon[i] !== id);
  const oldHash = manifestHash(oldM);
  const newHash = manifestHash(newM);
  return {
    oldHash,
    newHash,
    identical: oldHash === newHash,
    oldChains: oldM.chains.length,
    newChains: newM.chains.length,
    removed,
    added,
    changed,
    unchanged,
    orderChanged,
    header: differingKeys(oldM as unknown as Record<string, unknown>, newM as unknown as Record<string, unknown>, [
      'chains',
    ]),
  };
}
