/**
 * The cross-check's recomputation of the Holm families (see src/adjudication holm-families.ts): each family the
 * adjudication lists, its members' exact McNemar p (one-sided 'greater' when the family registers
 * mcnemar-exact-one-sided) and the step-down adjusted p. Which slots carry a number is the producer's choice only
 * where a gate made the contrast invalid; both sides must otherwise agree on it.
 */
import { holmStepDown, mcnemarBig } from './cross-check-math.js';
import { arr, obj, str, type Obj } from './cross-check-model.js';
import type { ExpectCtx } from './cross-check-context.js';

export interface HolmX {
  id: string;
  members: { estimand: string; p: number | null; adjusted: number | null }[];
}

/**
 * One member's p, or null for a slot without a number. Both sides must agree on whether the slot carries a number.
 * The producer may withhold a number the cross-check can compute only when a gate made the contrast invalid; a slot
 * without a number (unavailable condition, excluded tasks, no resolved unit) must be one the cross-check cannot
 * compute either.
 */
function memberP(ctx: ExpectCtx, family: string, m: Obj, oneSided: boolean): number | null {
  const x = ctx.xs.get(str(m['estimand']));
  const status = str(m['status']);
  const recomputed = x !== undefined && x.available && x.pair !== null;
  const path = `holm[${family}].members[${str(m['estimand'])}].status`;
  if (status === 'available' && !recomputed) {
    ctx.problems.push({ path, note: 'the cross-check cannot compute this contrast' });
  } else if (status === 'unavailable' && recomputed) {
    ctx.problems.push({ path, note: 'the cross-check computes a number for a slot reported unavailable' });
  }
  if (status !== 'available' || !recomputed || x === undefined || x.pair === null) return null;
  return mcnemarBig(x.pair[0], x.pair[1], oneSided ? 'greater' : 'two-sided');
}

function familyX(ctx: ExpectCtx, f: Obj): HolmX {
  const fid = str(f['id']);
  const fam = arr(ctx.study.protocol['holmFamilies'])
    .map(obj)
    .find((p) => str(p['id']) === fid);
  const oneSided = str(fam?.['test']) === 'mcnemar-exact-one-sided';
  const members = arr(f['members']).map(obj);
  const ps = members.map((m) => memberP(ctx, fid, m, oneSided));
  const adjusted = holmStepDown(ps);
  return {
    id: fid,
    members: members.map((m, i) => ({
      estimand: str(m['estimand']),
      p: ps[i] ?? null,
      adjusted: adjusted[i] ?? null,
    })),
  };
}

/** The `holm` section: the adjudication's families, in its order, every number recomputed. */
export function expectedHolm(ctx: ExpectCtx): HolmX[] {
  return arr(ctx.adjudication['holm'])
    .map(obj)
    .map((f) => familyX(ctx, f));
}

/** The Holm-adjusted p of the estimand's first slot; undefined when it has no slot or the slot no number. */
export function adjustedP(holm: readonly HolmX[], estimand: string): number | undefined {
  for (const f of holm) for (const m of f.members) if (m.estimand === estimand) return m.adjusted ?? undefined;
  return undefined;
}
