/**
 * The cross-check's recomputation of the `verdicts` section: for each criterion the adjudication bounds, the
 * numbers of its bound (the routed interval's ends, the threshold — margin, companions' upper bounds, α or the
 * other estimand's point — and the p), and two checks of the words: a criterion reading an estimand that a
 * withholding validity check failed must read 'invalid' (or 'excluded'), and a word the producer decided
 * (holds / not detected / unresolved) must be the one the cross-check's own rules give (cross-check-verdicts.ts),
 * confirmed by the exact bound where the routed interval is approximate.
 */
import { mcnemarBig } from './cross-check-math.js';
import { arr, num, obj, str, type Json, type Obj } from './cross-check-model.js';
import type { XEstimand } from './cross-check-estimands.js';
import type { ValidityX } from './cross-check-validity.js';
import {
  confirmedWord,
  exactConfirmationId,
  expectedRoutingId,
  expectedWord,
  registeredIntervalId,
} from './cross-check-verdicts.js';
import { criteriaOf, ends, type ExpectCtx } from './cross-check-context.js';

function producerVerdicts(ctx: ExpectCtx): Map<string, Obj> {
  return new Map(arr(ctx.adjudication['verdicts']).map((v) => [str(obj(v)['criterion']), obj(v)]));
}

/** The failed validity checks registered to withhold that touch the estimand (by id, or through its conditions). */
function withheldBy(ctx: ExpectCtx, validity: readonly ValidityX[], estimand: string): string[] {
  return validity
    .filter((g) => g.withhold && !g.passed)
    .filter((g) =>
      g.gate === 'informative-removal'
        ? g.failing.includes(estimand)
        : (ctx.xs.get(estimand)?.conds ?? []).some((c) => g.failing.includes(c)),
    )
    .map((g) => g.gate);
}

/** A criterion reading an estimand a withholding validity check failed must read 'invalid' (or 'excluded'). */
export function checkWithheld(ctx: ExpectCtx, validity: readonly ValidityX[]): void {
  const verdicts = producerVerdicts(ctx);
  for (const c of criteriaOf(ctx.study)) {
    const cid = str(c['id']);
    const deps = [str(c['estimand']), ...arr(c['aboveUpperBoundOf']).map(str), ...(c['than'] ? [str(c['than'])] : [])];
    const by = [...new Set(deps.flatMap((d) => withheldBy(ctx, validity, d)))];
    const word = str(verdicts.get(cid)?.['verdict']);
    if (by.length > 0 && word !== 'invalid' && word !== 'excluded')
      ctx.problems.push({
        path: `verdicts[${cid}].verdict`,
        note: `the adjudication reads '${word}', the cross-check withholds it (validity check ${by.join(', ')})`,
      });
  }
}

interface BoundX {
  estimate: number;
  lower: number | null;
  upper: number | null;
  threshold: number | null;
  p: number | null;
  companions: { estimand: string; upper: number | null }[];
}

/** The bound's numbers on the interval the producer routed on (a routing other than the expected one is a problem). */
function boundOf(ctx: ExpectCtx, c: Obj, pb: Json, x: XEstimand, adjusted: (id: string) => number | undefined): BoundX {
  const cid = str(c['id']);
  const rule = str(c['rule']);
  const reg = expectedRoutingId(c, registeredIntervalId(c));
  const ivId = str(obj(pb)['interval']);
  if (reg !== null && ivId !== reg)
    ctx.problems.push({ path: `verdicts[${cid}].bound.interval`, note: `routed on ${ivId}, expected ${reg}` });
  const e = ends(x, ivId);
  const companions = arr(obj(pb)['companions'])
    .map(obj)
    .map((co) => {
      const cx = ctx.xs.get(str(co['estimand']));
      const ce = cx ? ends(cx, str(co['interval'])) : null;
      return { estimand: str(co['estimand']), upper: ce?.upper ?? null };
    });
  let threshold: number | null = num(c['margin']) ?? null;
  let p: number | null = null;
  if (rule === 'lower-bound-above')
    threshold = Math.max(num(c['margin']) ?? 0, ...companions.map((co) => co.upper ?? Number.NaN));
  if (rule === 'p-below') {
    threshold = num(c['alpha']) ?? null;
    p =
      adjusted(x.id) ??
      (x.pair ? mcnemarBig(x.pair[0], x.pair[1], str(c['direction']) as 'two-sided' | 'greater' | 'less') : null);
  }
  if (rule === 'point-below') threshold = ctx.xs.get(str(c['than']))?.estimate ?? null;
  return { estimate: x.estimate, lower: e?.lower ?? null, upper: e?.upper ?? null, threshold, p, companions };
}

/** The confirmation's floor: each companion's exact bound at the same level (never its approximate UB). */
function exactThresholdOf(ctx: ExpectCtx, c: Obj, bound: BoundX): number | null {
  if (str(c['rule']) !== 'lower-bound-above') return bound.threshold;
  return Math.max(
    num(c['margin']) ?? 0,
    ...bound.companions.map((co) => {
      const cx = ctx.xs.get(co.estimand);
      const cid = cx ? exactConfirmationId(registeredIntervalId(c), cx.kind) : null;
      return (cx && cid ? ends(cx, cid)?.upper : undefined) ?? Number.NaN;
    }),
  );
}

/** The word the cross-check gives the criterion: routed, then confirmed by the exact bound where one is due. */
function wordOf(ctx: ExpectCtx, c: Obj, x: XEstimand, bound: BoundX): ReturnType<typeof expectedWord> {
  const discordant = x.pair ? x.pair[0] + x.pair[1] : null;
  const { lower, upper, threshold, p } = bound;
  const routed = expectedWord(c, { lower, upper, threshold, p, estimate: x.estimate, discordant });
  const confirmId = exactConfirmationId(registeredIntervalId(c), x.kind);
  if (confirmId === null) return routed;
  const ce = ends(x, confirmId);
  const exactThreshold = exactThresholdOf(ctx, c, bound);
  return confirmedWord(
    routed,
    expectedWord(c, {
      lower: ce?.lower ?? null,
      upper: ce?.upper ?? null,
      threshold: Number.isNaN(exactThreshold as number) ? null : exactThreshold,
      p,
      estimate: x.estimate,
      discordant,
    }),
  );
}

/** The `verdicts` section, one entry per criterion; a decided word other than the cross-check's is a problem. */
export function expectedVerdicts(ctx: ExpectCtx, adjusted: (id: string) => number | undefined): Obj[] {
  const verdicts = producerVerdicts(ctx);
  return criteriaOf(ctx.study).map((c) => {
    const cid = str(c['id']);
    const pv = verdicts.get(cid);
    const pb = pv?.['bound'];
    if (pb === undefined || pb === null) return { criterion: cid };
    const x = ctx.xs.get(str(c['estimand']));
    if (x === undefined || !x.available) return { criterion: cid };
    const bound = boundOf(ctx, c, pb, x, adjusted);
    const pword = str(pv?.['verdict']);
    if (pword === 'holds' || pword === 'not detected' || pword === 'unresolved') {
      const want = wordOf(ctx, c, x, bound);
      if (want !== null && want !== pword)
        ctx.problems.push({
          path: `verdicts[${cid}].verdict`,
          note: `the adjudication reads '${pword}', the cross-check '${want}'`,
        });
    }
    return { criterion: cid, bound } as unknown as Obj;
  });
}
