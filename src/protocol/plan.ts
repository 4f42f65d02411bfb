/**
 * The deterministic plan of a protocol: every episode it registers, in canonical order, with its ids.
 *
 * Units are task × seed: tasks in `envs` order, seeds in registered order (bands in order, each
 * ascending; or the list as written), the first n of them (a condition with its own smaller n takes
 * its first n). An episode is one attempt (or chain position) of one unit under one condition in one
 * wave. A condition listed in two waves (the anchor, typically) is planned in each.
 *
 * Canonical order (`seq` counts from 0), PLAN_VERSION 2:
 *   wave (listed order) → condition (the wave's listed order) → task (envs order) → seed (registered
 *   order) → attempt (1 … count, or chain position 1 … length).
 * So every (wave, condition) is one contiguous BLOCK of the plan, and all attempts of one scope under
 * one condition are consecutive and never split. The runner (src/campaign) steps many units of
 * one block in lockstep through a batched policy and still appends rows strictly in seq order with a
 * reorder buffer bounded by the batch size. (Version 1 put condition below seed, interleaving the
 * conditions unit by unit; that order cannot be batched per condition without buffering whole waves.)
 *
 * Ids (src/core/hash.ts truncatedId: SHA-256 of the parts joined by U+001F, first 16 hex digits):
 *   scopeId   = truncatedId([task, seed])
 *   episodeId = truncatedId([scopeId, attempt])
 * The scope id depends on (task, seed) only, so the same unit has the same scope in every condition
 * and wave (conditions are separate runs with separate banks). planHash = SHA-256 of the canonical
 * JSON of { version, protocolHash, episodes }.
 */
import { canonicalHash, noiseStreamRecipe, simulatorFaces, truncatedId, type ExecutionNoise } from '../core/index.js';
import { protocolHash } from './protocol-hash.js';
import type { Protocol } from './schema.js';
import { firstSeeds } from './seeds.js';
import { assertPlanSize } from './plan-size.js';

export const PLAN_VERSION = 2;

export interface PlannedEpisode {
  readonly seq: number;
  readonly wave: number;
  readonly condition: string;
  readonly task: string;
  readonly seed: number;
  readonly attempt: number;
  readonly scopeId: string;
  readonly episodeId: string;
}

export interface Plan {
  readonly version: typeof PLAN_VERSION;
  readonly protocolId: string;
  readonly protocolHash: string;
  /** Attempts (or chain positions) whose outcomes enter the registered estimands. */
  readonly registered: readonly number[];
  readonly episodes: readonly PlannedEpisode[];
  /**
   * The registered execution noise (SimulatorFace.executionNoise; src/core/execution-noise.ts) with the recipe of its stream
   * labels; absent when the protocol registers none (then the plan's bytes and hash are what they were before
   * the option existed). When present it enters planHash.
   */
  readonly executionNoise?: ExecutionNoise & { readonly stream: string };
  readonly planHash: string;
}

export function scopeIdOf(task: string, seed: number): string {
  return truncatedId([task, seed]);
}

export function episodeIdOf(scopeId: string, attempt: number): string {
  return truncatedId([scopeId, attempt]);
}

/** Episodes per unit: attempts.count, or the chain length. */
export function episodesPerUnit(protocol: Protocol): number {
  return protocol.attempts?.count ?? protocol.chains?.length ?? 1;
}

/**
 * The plan of a validated, cross-checked protocol. A plan above PLAN_ROWS_MAX rows is refused before a
 * single episode is built (plan-size.ts); the user-facing confirmation above PLAN_ROWS_CONFIRM is the
 * caller's (a new campaign), so a confirmed unit can always rebuild its plan.
 */
export function buildPlan(protocol: Protocol): Plan {
  assertPlanSize(protocol, { allowLarge: true });
  const perUnit = episodesPerUnit(protocol);
  const seeds = firstSeeds(protocol.seeds, protocol.n);
  const nOf = new Map(protocol.conditions.map((c) => [c.id, c.n ?? protocol.n]));
  const episodes: PlannedEpisode[] = [];
  for (const wave of protocol.waves) {
    for (const condition of wave.conditions) {
      const n = nOf.get(condition) ?? protocol.n;
      for (const env of protocol.envs) {
        const task = env.task ?? env.id;
        seeds.forEach((seed, seedIndex) => {
          if (seedIndex >= n) return;
          const scopeId = scopeIdOf(task, seed);
          for (let attempt = 1; attempt <= perUnit; attempt++) {
            episodes.push({
              seq: episodes.length,
              wave: wave.id,
              condition,
              task,
              seed,
              attempt,
              scopeId,
              episodeId: episodeIdOf(scopeId, attempt),
            });
          }
        });
      }
    }
  }
  const pHash = protocolHash(protocol);
  const registered = protocol.attempts ? [protocol.attempts.registered] : [...(protocol.chains?.registered ?? [])];
  const spec = simulatorFaces.get(protocol.simulator.kind)?.executionNoise?.(protocol.simulator);
  const noise = spec === undefined ? {} : { executionNoise: { ...spec, stream: noiseStreamRecipe(spec) } };
  return {
    version: PLAN_VERSION,
    protocolId: protocol.id,
    protocolHash: pHash,
    registered,
    episodes,
    ...noise,
    planHash: canonicalHash(
      { version: PLAN_VERSION, protocolHash: pHash, episodes, ...noise },
      { code: 'E_PROTOCOL_INVALID' },
    ),
  };
}
