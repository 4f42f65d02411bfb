/**
 * The paired-outcome data model shared by the estimands, the bootstrap and the exact tests.
 *
 * A `PairedDesign` holds n units (task–seed pairs, or chains), each observed under every condition
 * (A, N, O, C, U, S, T, …) with the same seed pairing. Per condition the outcomes are one Uint8Array of
 * length n: 1 success, 0 failure, `UNRESOLVED` (255) for a unit whose outcome could not be resolved in
 * that condition. Each unit belongs to exactly one task (`task[i]` indexes `taskNames`) and optionally to
 * one cluster (`cluster[i]` indexes `clusterNames`; a chain, whose units must swap / resample as a block).
 *
 * Estimands and resampling operate on resolved units only: `jointlyResolved(design, conditions)` keeps
 * the units resolved in every listed condition (the joint cohort, n_joint). The task and cluster lists are
 * kept as they are (a task that loses all its units stays named, so a task-weighted estimand refuses it
 * instead of silently changing what it averages over).
 *
 * Empty input: a design with zero units is valid (n = 0); the estimands decide what they do with it.
 * Every malformed argument throws E_STATS_DOMAIN naming the argument.
 */
import { domainError } from '../core/index.js';

/** Outcome code for a unit not resolved in a condition. */
export const UNRESOLVED = 255;

export interface PairedDesign {
  /** Number of units. */
  readonly n: number;
  /** Condition names, in the order given. */
  readonly conditions: readonly string[];
  /** Per-condition outcomes (0, 1, or UNRESOLVED), each of length n. */
  readonly outcomes: Readonly<Record<string, Uint8Array>>;
  /** Task universe; `task[i]` indexes it. */
  readonly taskNames: readonly string[];
  readonly task: Int32Array;
  /** Cluster (chain) universe and per-unit index, when the design is clustered. */
  readonly clusterNames: readonly string[] | undefined;
  readonly cluster: Int32Array | undefined;
  /** Unit identifiers (e.g. "RC3/seed-1201"), when given; unique. */
  readonly unitIds: readonly string[] | undefined;
}

/** Per-unit labels, or an index into an explicit name list. */
export type Labels = readonly string[] | { readonly names: readonly string[]; readonly index: ArrayLike<number> };

export interface PairedDesignInput {
  /** condition name → per-unit outcome: 0/1, true/false, or null / UNRESOLVED for unresolved. */
  readonly outcomes: Readonly<Record<string, ArrayLike<number | boolean | null>>>;
  /** Task of each unit. Omitted: every unit belongs to one task named "all". */
  readonly tasks?: Labels;
  /** Cluster (chain) of each unit. Omitted: unclustered. */
  readonly clusters?: Labels;
  readonly unitIds?: readonly string[];
}

function toLabels(labels: Labels, n: number, field: string): { names: string[]; index: Int32Array } {
  const index = new Int32Array(n);
  if (Array.isArray(labels)) {
    const list = labels as readonly string[];
    if (list.length !== n) domainError(field, `has ${list.length} labels for ${n} units`);
    const names: string[] = [];
    const seen = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const name = list[i];
      if (typeof name !== 'string' || name === '') domainError(`${field}[${i}]`, 'must be a non-empty string');
      let k = seen.get(name);
      if (k === undefined) {
        k = names.length;
        seen.set(name, k);
        names.push(name);
      }
      index[i] = k;
    }
    return { names, index };
  }
  const { names, index: raw } = labels as { names: readonly string[]; index: ArrayLike<number> };
  if (raw.length !== n) domainError(`${field}.index`, `has ${raw.length} entries for ${n} units`);
  for (let i = 0; i < n; i++) index[i] = raw[i] as number;
  return { names: [...names], index };
}

/** Builds and validates a design from plain arrays. */
export function pairedDesign(input: PairedDesignInput): PairedDesign {
  const conditions = Object.keys(input.outcomes);
  if (conditions.length === 0) domainError('outcomes', 'must name at least one condition');
  const first = input.outcomes[conditions[0] as string] as ArrayLike<number | boolean | null>;
  const n = first.length;
  const outcomes: Record<string, Uint8Array> = {};
  for (const name of conditions) {
    const raw = input.outcomes[name] as ArrayLike<number | boolean | null>;
    if (raw.length !== n)
      domainError(`outcomes.${name}`, `has ${raw.length} units, expected ${n} (conditions must be seed-paired)`);
    const y = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const v = raw[i];
      if (v === null || v === UNRESOLVED) y[i] = UNRESOLVED;
      else if (v === 1 || v === true) y[i] = 1;
      else if (v === 0 || v === false) y[i] = 0;
      else domainError(`outcomes.${name}[${i}]`, `must be 0, 1, true, false, null or ${UNRESOLVED}; got ${String(v)}`);
    }
    outcomes[name] = y;
  }
  const tasks =
    input.tasks === undefined ? { names: ['all'], index: new Int32Array(n) } : toLabels(input.tasks, n, 'tasks');
  const clusters = input.clusters === undefined ? undefined : toLabels(input.clusters, n, 'clusters');
  const design: PairedDesign = {
    n,
    conditions,
    outcomes,
    taskNames: tasks.names,
    task: tasks.index,
    clusterNames: clusters?.names,
    cluster: clusters?.index,
    unitIds: input.unitIds === undefined ? undefined : [...input.unitIds],
  };
  validatePairedDesign(design);
  return design;
}

/** Checks every invariant of a design (also for designs built by hand); throws E_STATS_DOMAIN. */
export function validatePairedDesign(design: PairedDesign): void {
  const { n } = design;
  if (!Number.isInteger(n) || n < 0) domainError('design.n', `must be a non-negative integer; got ${n}`);
  if (design.conditions.length === 0) domainError('design.conditions', 'must name at least one condition');
  if (new Set(design.conditions).size !== design.conditions.length)
    domainError('design.conditions', 'has duplicate names');
  for (const name of design.conditions) {
    const y = design.outcomes[name];
    if (!(y instanceof Uint8Array)) domainError(`design.outcomes.${name}`, 'must be a Uint8Array');
    if (y.length !== n) domainError(`design.outcomes.${name}`, `has ${y.length} units, expected ${n}`);
    for (let i = 0; i < n; i++) {
      const v = y[i] as number;
      if (v !== 0 && v !== 1 && v !== UNRESOLVED)
        domainError(`design.outcomes.${name}[${i}]`, `must be 0, 1 or ${UNRESOLVED}; got ${v}`);
    }
  }
  checkIndex(design.task, design.taskNames, n, 'design.task');
  if ((design.cluster === undefined) !== (design.clusterNames === undefined)) {
    domainError('design.cluster', 'cluster and clusterNames must be given together');
  }
  if (design.cluster !== undefined && design.clusterNames !== undefined) {
    checkIndex(design.cluster, design.clusterNames, n, 'design.cluster');
  }
  if (design.unitIds !== undefined) {
    if (design.unitIds.length !== n) domainError('design.unitIds', `has ${design.unitIds.length} ids for ${n} units`);
    if (new Set(design.unitIds).size !== n)
      domainError('design.unitIds', 'must be unique (each unit is one task–seed pair)');
  }
}

function checkIndex(index: Int32Array, names: readonly string[], n: number, field: string): void {
  if (!(index instanceof Int32Array)) domainError(field, 'must be an Int32Array');
  if (index.length !== n) domainError(field, `has ${index.length} entries for ${n} units`);
  if (new Set(names).size !== names.length) domainError(`${field}Names`, 'has duplicate names');
  for (let i = 0; i < n; i++) {
    const k = index[i] as number;
    if (k < 0 || k >= names.length) domainError(`${field}[${i}]`, `index ${k} is outside the ${names.length} names`);
  }
}

/** The outcome vector of one condition; throws naming the condition when it is absent. */
export function outcomesOf(design: PairedDesign, condition: string, field = 'condition'): Uint8Array {
  const y = design.outcomes[condition];
  if (y === undefined)
    domainError(field, `condition "${condition}" is not in the design (has ${design.conditions.join(', ')})`);
  return y;
}

/** The outcome vector of a condition that must be resolved on every unit (the estimands read through this). */
export function resolvedOutcomes(design: PairedDesign, condition: string, field = 'condition'): Uint8Array {
  const y = outcomesOf(design, condition, field);
  const i = y.indexOf(UNRESOLVED);
  if (i >= 0) {
    domainError(
      `outcomes.${condition}`,
      `unit ${i} is unresolved; restrict to the joint cohort with jointlyResolved() first`,
    );
  }
  return y;
}

/** Throws unless every unit is resolved in every listed condition. */
export function requireResolved(design: PairedDesign, conditions: readonly string[]): void {
  for (const name of conditions) resolvedOutcomes(design, name);
}

/** The sub-design of units resolved in every listed condition (the joint cohort), order kept. */
export function jointlyResolved(design: PairedDesign, conditions: readonly string[]): PairedDesign {
  const vectors = conditions.map((c) => outcomesOf(design, c, 'conditions'));
  const keep: number[] = [];
  for (let i = 0; i < design.n; i++) {
    if (vectors.every((y) => y[i] !== UNRESOLVED)) keep.push(i);
  }
  return selectUnits(design, keep);
}

/** The sub-design of the given unit indices (in the given order); all conditions are kept. */
export function selectUnits(design: PairedDesign, units: readonly number[]): PairedDesign {
  const m = units.length;
  for (let j = 0; j < m; j++) {
    const i = units[j] as number;
    if (!Number.isInteger(i) || i < 0 || i >= design.n)
      domainError(`units[${j}]`, `must index a unit in [0, ${design.n})`);
  }
  const outcomes: Record<string, Uint8Array> = {};
  for (const name of design.conditions) {
    const y = design.outcomes[name] as Uint8Array;
    const z = new Uint8Array(m);
    for (let j = 0; j < m; j++) z[j] = y[units[j] as number] as number;
    outcomes[name] = z;
  }
  const pick = (a: Int32Array): Int32Array => Int32Array.from(units, (i) => a[i] as number);
  return {
    n: m,
    conditions: [...design.conditions],
    outcomes,
    taskNames: design.taskNames,
    task: pick(design.task),
    clusterNames: design.clusterNames,
    cluster: design.cluster === undefined ? undefined : pick(design.cluster),
    unitIds: design.unitIds === undefined ? undefined : units.map((i) => design.unitIds?.[i] as string),
  };
}

/** Number of units in each task (indexed like taskNames). */
export function taskSizes(design: PairedDesign): Int32Array {
  const sizes = new Int32Array(design.taskNames.length);
  for (let i = 0; i < design.n; i++) sizes[design.task[i] as number]! += 1;
  return sizes;
}

/**
 * Checks that every cluster lies inside one task (a chain never spans tasks) and returns the task of
 * each cluster (-1 for a cluster with no units). Throws when the design is unclustered or a cluster spans tasks.
 */
export function clusterTasks(design: PairedDesign): Int32Array {
  const { cluster, clusterNames } = design;
  if (cluster === undefined || clusterNames === undefined) domainError('design.cluster', 'the design has no clusters');
  const owner = new Int32Array(clusterNames.length).fill(-1);
  for (let i = 0; i < design.n; i++) {
    const k = cluster[i] as number;
    const t = design.task[i] as number;
    const o = owner[k] as number;
    if (o === -1) owner[k] = t;
    else if (o !== t) {
      domainError(
        'design.cluster',
        `cluster "${clusterNames[k]}" spans tasks "${design.taskNames[o]}" and "${design.taskNames[t]}"`,
      );
    }
  }
  return owner;
}
