/**
 * Vectorised hosting of a run's batch slots (a kind's BridgedRequest.vectorize, e.g. sim-bridge's `simulator.vectorize`; sim-bridge/PROTOCOL.md "Batch ops"):
 * before the run, each server that serves the batch ops makes the environments of its slots (slot s on server
 * s mod K) with one makeBatch per protocol environment; the runner's slots adopt them (bridge-open.ts). Steps then
 * travel one stepBatch per server and tick (bridges/step-batcher.ts).
 */
import { RemoteEnvironment, type BridgeServerPool } from '../bridges/index.js';
import type { EnvSpec } from '../runtime/index.js';
import { canonicalJson, ImepError } from '../core/index.js';
import type { Protocol } from '../protocol/index.js';

/** The key of a protocol environment (its id and make kwargs). */
export const envKey = (envId: string, kwargs: Readonly<Record<string, unknown>>): string =>
  canonicalJson({ envId, kwargs });

/** A slot's environment made before the run by a makeBatch, on server `server` in generation `generation`. */
export interface BatchMade {
  readonly remote: RemoteEnvironment;
  readonly server: number;
  readonly generation: number;
}

export const slotKey = (key: string, slot: number): string => `${slot}\u0000${key}`;

/**
 * Vectorised hosting: on every server that serves the batch ops, the environments of the run's slots on it (slot s on
 * server s mod K) made with one makeBatch per protocol environment — slot 0's is the one the check made. Each is
 * checked to declare the spec the check saw. Into `out` by slotKey.
 */
export async function makeSlotBatches(
  pool: BridgeServerPool,
  protocol: Protocol,
  slots: number,
  specs: ReadonlyMap<string, EnvSpec>,
  checked: ReadonlyMap<string, RemoteEnvironment>,
  out: Map<string, BatchMade>,
): Promise<void> {
  const seen = new Set<string>();
  for (const entry of protocol.envs) {
    const kwargs = { ...(entry.kwargs ?? {}) };
    const key = envKey(entry.id, kwargs);
    if (seen.has(key)) continue;
    seen.add(key);
    await Promise.all(
      Array.from({ length: pool.size }, async (_, server) => {
        if (!pool.batches(server)) return;
        const mine: number[] = [];
        for (let slot = server; slot < slots; slot += pool.size) if (!(slot === 0 && checked.has(key))) mine.push(slot);
        if (mine.length === 0) return;
        const generation = pool.generation(server);
        const made = await RemoteEnvironment.makeBatch(
          pool.client(server),
          entry.id,
          kwargs,
          mine.length,
          pool.deadlines,
        );
        mine.forEach((slot, k) =>
          out.set(slotKey(key, slot), { remote: made[k] as RemoteEnvironment, server, generation }),
        );
        const want = canonicalJson(specs.get(key));
        if (canonicalJson(made[0]?.spec) !== want)
          throw new ImepError(
            'E_BRIDGE_PROTOCOL',
            `makeBatch of ${entry.id} on server ${server} declares another spec than its make did`,
            { field: 'makeBatch' },
          );
      }),
    );
  }
}

/** What the run's description says about vectorised hosting ('' when it was not asked for). */
export function vectorizedNote(pool: BridgeServerPool, asked: boolean): string {
  if (!asked) return '';
  const serving = Array.from({ length: pool.size }, (_, i) => pool.batches(i)).filter(Boolean).length;
  if (serving === pool.size) return '; vectorised: one makeBatch per task and one stepBatch per tick on each server';
  if (serving === 0)
    return '; vectorised hosting asked, but the server does not list makeBatch/stepBatch in hello.ops: one message per slot';
  return `; vectorised on ${serving} of ${pool.size} servers (the others do not list makeBatch/stepBatch: one message per slot)`;
}
