/**
 * What the cross-check's gates share (cross-check-gates.ts, cross-check-read-gates.ts): the result of one
 * gate, the context every gate reads, and the plain-row selections they make — the waves a condition runs
 * in, its 'ok' rows on the competent tasks, the rows from its registered installation attempt on, and the
 * paired outcome changes against its wave's anchor.
 */
import { arr, num, obj, str, type Obj, type PlainRow, type PlainStudy } from './cross-check-model.js';

/** Expected `observed` of one gate, and whether it passes. */
export interface GateX {
  gate: string;
  observed: Obj;
  passed: boolean;
}

/** The study and the tasks a hard competence gate excluded (every gate but competence reads only the rest). */
export interface GateCtx {
  readonly study: PlainStudy;
  readonly excluded: Set<string>;
}

/** One gate kind's recomputation: its `observed` and its pass/fail (the dispatcher adds the gate id). */
export type GateFn = (g: Obj, ctx: GateCtx) => Omit<GateX, 'gate'>;

/** The gate's `observed`, as the plain JSON object the document carries. */
export const observed = (x: unknown): Obj => x as Obj;

/** The row key that pairs a unit across conditions of one wave. */
export const unitKey = (r: PlainRow): string => `${r.task}|${r.seed}|${r.attempt}`;

export function wavesOf(study: PlainStudy, condition: string): number[] {
  return study
    .waves()
    .filter((w) => w.conditions.includes(condition))
    .map((w) => w.id);
}

/** The condition's 'ok' rows on the competent tasks, in every wave that runs it. */
export function okRows({ study, excluded }: GateCtx, condition: string): PlainRow[] {
  const waves = wavesOf(study, condition);
  return study.rows.filter(
    (r) => r.condition === condition && waves.includes(r.wave) && r.status === 'ok' && !excluded.has(r.task),
  );
}

/** The condition's registered installation attempt, as a list; undefined when it registers none. */
export function installAt(study: PlainStudy, condition: string): number[] | undefined {
  for (const c of arr(study.protocol['conditions']).map(obj)) {
    if (str(c['id']) !== condition) continue;
    const a = num(obj(c['installAt'])['attempt']);
    return a === undefined ? undefined : [a];
  }
  return undefined;
}

/** The first attempt the condition's intervention is installed on (1 when it registers none). */
export function installAttempt(study: PlainStudy, condition: string): number {
  for (const c of arr(study.protocol['conditions']).map(obj)) {
    if (str(c['id']) === condition) return num(obj(c['installAt'])['attempt']) ?? 1;
  }
  return 1;
}

/** The condition's 'ok' rows from its installation attempt on. */
export function installedRows(ctx: GateCtx, condition: string): PlainRow[] {
  const from = installAttempt(ctx.study, condition);
  return okRows(ctx, condition).filter((r) => r.attempt >= from);
}

/**
 * The condition against the anchor of the first wave running it, on success: the resolved pairs and how many
 * changed outcome (none when no wave runs it or a condition is unavailable).
 */
export function anchorChanges(
  { study, excluded }: GateCtx,
  condition: string,
): { anchor: string; pairs: number; changed: number } {
  const wave = study.waves().find((w) => w.conditions.includes(condition));
  const anchor = wave?.anchor ?? condition;
  let pairs = 0,
    changed = 0;
  if (wave !== undefined) {
    const co = study.cohort([anchor, condition], 'success', excluded, wave.id);
    if (co.unavailable.length === 0) {
      for (const u of co.units) {
        if (u.y[0] === null || u.y[1] === null) continue;
        pairs++;
        if (u.y[0] !== u.y[1]) changed++;
      }
    }
  }
  return { anchor, pairs, changed };
}
