/**
 * The size of a protocol's plan, computed arithmetically from the protocol (waves × conditions × tasks ×
 * units × episodes per unit) BEFORE the plan is built, so a plan too large for this process is refused in
 * milliseconds with its estimate instead of exhausting the V8 heap.
 *
 * The plan is held in memory (every episode with two SHA-256 ids) and written as one canonical JSON file
 * (plan.json, hashed as a whole: its bytes and planHash are part of every precommitted unit, so its
 * representation is unchanged). Measured (bench/plan-size.ts, 2 shared cores): ≈ 155 bytes of plan.json and
 * ≈ 3.3 kB of resident memory per planned row, ≈ 120 µs per row to build, serialise and hash. Hence:
 *   rows > PLAN_ROWS_CONFIRM  refused unless the user confirms (`--allow-large-plan`);
 *   rows > PLAN_ROWS_MAX      refused always (≈ 1.7 GB resident for the plan alone at the limit, within
 *                             Node's default ≈ 4 GB heap with room for the run).
 */
import { ImepError } from '../core/index.js';
import type { Protocol } from './schema.js';
import { seedCount } from './seeds.js';

export const PLAN_ROWS_CONFIRM = 200_000;
export const PLAN_ROWS_MAX = 500_000;
export const PLAN_BYTES_PER_ROW = 155;
export const PLAN_RSS_BYTES_PER_ROW = 3300;
export const PLAN_SECONDS_PER_ROW = 120e-6;

export interface PlanEstimate {
  readonly rows: number;
  readonly planBytes: number;
  readonly memoryBytes: number;
  readonly seconds: number;
}

/** The number of planned rows (episodes) buildPlan would produce, without building it. */
export function planRows(protocol: Protocol): number {
  const perUnit = protocol.attempts?.count ?? protocol.chains?.length ?? 1;
  const units = Math.min(protocol.n, seedCount(protocol.seeds));
  const nOf = new Map(protocol.conditions.map((c) => [c.id, c.n ?? protocol.n]));
  let rows = 0;
  for (const wave of protocol.waves) {
    for (const condition of wave.conditions)
      rows += Math.min(nOf.get(condition) ?? protocol.n, units) * protocol.envs.length * perUnit;
  }
  return rows;
}

export function planEstimate(protocol: Protocol): PlanEstimate {
  const rows = planRows(protocol);
  return {
    rows,
    planBytes: rows * PLAN_BYTES_PER_ROW,
    memoryBytes: rows * PLAN_RSS_BYTES_PER_ROW,
    seconds: rows * PLAN_SECONDS_PER_ROW,
  };
}

const mb = (b: number): string => (b >= 1e9 ? `${(b / 1e9).toFixed(1)} GB` : `${(b / 1e6).toFixed(1)} MB`);

export function describeEstimate(e: PlanEstimate): string {
  return `${e.rows.toLocaleString('en-US')} planned rows: plan.json ≈ ${mb(e.planBytes)}, ≈ ${mb(e.memoryBytes)} in memory, ≈ ${e.seconds < 10 ? e.seconds.toFixed(1) : Math.round(e.seconds)} s to build`;
}

/**
 * Refuses a plan above PLAN_ROWS_MAX always, and above PLAN_ROWS_CONFIRM unless `allowLarge` (the user's
 * `--allow-large-plan`). E_PROTOCOL_INVALID (exit 2) naming `n` and the estimate. Returns the estimate.
 */
export function assertPlanSize(protocol: Protocol, opts: { allowLarge?: boolean; file?: string } = {}): PlanEstimate {
  const e = planEstimate(protocol);
  const where = opts.file !== undefined ? { file: opts.file } : {};
  if (e.rows > PLAN_ROWS_MAX) {
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `the plan is too large for one unit: ${describeEstimate(e)}; the limit is ${PLAN_ROWS_MAX.toLocaleString('en-US')} rows`,
      {
        ...where,
        field: 'n',
        hint: 'split the campaign into several units (fewer seeds, conditions or attempts per protocol)',
      },
    );
  }
  if (e.rows > PLAN_ROWS_CONFIRM && opts.allowLarge !== true) {
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `a large plan: ${describeEstimate(e)}; above ${PLAN_ROWS_CONFIRM.toLocaleString('en-US')} rows it needs confirming`,
      {
        ...where,
        field: 'n',
        hint: 'pass --allow-large-plan to build it anyway, or register fewer units',
      },
    );
  }
  return e;
}
