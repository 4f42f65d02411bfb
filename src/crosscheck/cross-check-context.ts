/**
 * What the parts of the cross-check's expected document share (cross-check-expect.ts assembles them): the study,
 * the producer's adjudication (read only for its structural choices), the recomputed estimands by id, and the
 * list every part adds its problems to, in the order the parts run.
 */
import { arr, obj, type Obj, type PlainStudy } from './cross-check-model.js';
import type { XEstimand } from './cross-check-estimands.js';

/** A structural disagreement that is not a number: a missing interval, a wrong routing, a wrong verdict word. */
export interface Problem {
  path: string;
  note: string;
}

export interface ExpectCtx {
  readonly study: PlainStudy;
  readonly adjudication: Obj;
  readonly xs: ReadonlyMap<string, XEstimand>;
  readonly problems: Problem[];
}

/** The protocol's criteria (plain). */
export function criteriaOf(study: PlainStudy): Obj[] {
  return arr(study.protocol['criteria']).map(obj);
}

/** The interval's reported ends: its envelope over the extreme fillings when it has one; null when not computed. */
export function ends(x: XEstimand, id: string): { lower: number; upper: number } | null {
  const iv = x.intervals.get(id);
  if (iv === undefined) return null;
  return iv.envelope ?? { lower: iv.lower, upper: iv.upper };
}
