/**
 * A frozen power analysis is checked before it is frozen: every registered `mde.outputs` row is recomputed
 * from `mde.inputs` with src/stats/power.ts (`minimumDetectableEffect`, the registered test, α, power, n,
 * method — Monte-Carlo with its registered replicates and seed) and a mismatch is refused, naming the field,
 * the registered and the computed value. Tolerances (stated, absolute): effect ±0.0005 (0.05 pp: a table
 * rounded to 4 decimals passes, one typed by hand does not), achievedPower ±0.005. A registered `null`
 * effect must be unreachable, and an unreachable one must be registered `null`. Pure.
 */
import { ImepError } from '../core/index.js';
import { minimumDetectableEffect } from '../stats/index.js';
import type { Mde } from '../protocol/index.js';

export const MDE_EFFECT_TOLERANCE = 0.0005;
export const MDE_POWER_TOLERANCE = 0.005;

export interface RecomputedMdeRow {
  readonly assumedDiscordance: number;
  readonly effect: number | null;
  readonly achievedPower: number | null;
}

function refuse(field: string, message: string): never {
  throw new ImepError('E_PROTOCOL_INVALID', `${field}: ${message}`, {
    field,
    hint: 'the frozen table must be what its frozen inputs produce (src/stats/power.ts): fix the inputs or the outputs before precommit',
  });
}

const fmt = (x: number | null): string => (x === null ? 'null (unreachable)' : String(Number(x.toPrecision(6))));

/** Recomputes the registered MDE table; throws E_PROTOCOL_INVALID (exit 2) on the first mismatch. */
export function checkFrozenPower(mde: Mde | undefined): RecomputedMdeRow[] {
  if (mde === undefined) return [];
  const { inputs, outputs } = mde;
  if (inputs.method === 'monte-carlo' && (inputs.replicates === undefined || inputs.seed === undefined)) {
    refuse(
      inputs.replicates === undefined ? 'mde.inputs.replicates' : 'mde.inputs.seed',
      'a Monte-Carlo power analysis needs its registered replicates and seed to be recomputed',
    );
  }
  if (outputs.length !== inputs.assumedDiscordance.length) {
    refuse(
      'mde.outputs',
      `registers ${outputs.length} rows for ${inputs.assumedDiscordance.length} assumed discordance rates`,
    );
  }
  return inputs.assumedDiscordance.map((rho, i) => {
    const row = outputs[i]!;
    if (row.assumedDiscordance !== rho)
      refuse(
        `mde.outputs[${i}].assumedDiscordance`,
        `registered ${row.assumedDiscordance}, mde.inputs.assumedDiscordance[${i}] is ${rho}`,
      );
    const r = minimumDetectableEffect({
      n: inputs.n,
      rhoDiscordant: rho,
      alpha: inputs.alpha,
      test: inputs.test,
      power: inputs.power,
      method: inputs.method,
      ...(inputs.method === 'monte-carlo' ? { replicates: inputs.replicates, seed: inputs.seed } : {}),
    });
    const effect = r.status === 'found' ? r.effect : null;
    const achievedPower = r.status === 'found' ? r.achievedPower : null;
    const effectOk =
      effect === null
        ? row.effect === null
        : row.effect !== null && Math.abs(row.effect - effect) <= MDE_EFFECT_TOLERANCE;
    if (!effectOk)
      refuse(
        `mde.outputs[${i}].effect`,
        `registered ${fmt(row.effect)}, src/stats/power.ts computes ${fmt(effect)} (tolerance ±${MDE_EFFECT_TOLERANCE})`,
      );
    if (
      row.achievedPower !== undefined &&
      achievedPower !== null &&
      Math.abs(row.achievedPower - achievedPower) > MDE_POWER_TOLERANCE
    ) {
      refuse(
        `mde.outputs[${i}].achievedPower`,
        `registered ${fmt(row.achievedPower)}, src/stats/power.ts computes ${fmt(achievedPower)} (tolerance ±${MDE_POWER_TOLERANCE})`,
      );
    }
    return { assumedDiscordance: rho, effect, achievedPower };
  });
}
