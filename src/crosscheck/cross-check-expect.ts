/**
 * The cross-check's expected document: every number of an adjudication, recomputed independently and
 * laid out in the adjudication's own shape (so both flatten to the same paths), plus the gate pass/fail
 * decisions. Structural choices of the producer that are not numbers — which intervals it lists beyond
 * the registered ones, which Holm slots it marks unavailable or invalid, which retrospective readings it
 * withholds — are read from the adjudication; every number under them is recomputed here.
 */
import { holmStepDown, mcnemarBig } from './cross-check-math.js';
import { arr, num, obj, str, type Json, type Obj, type PlainStudy } from './cross-check-model.js';
import { protocolEstimands, recomputeEstimand, type XBoot, type XEstimand } from './cross-check-estimands.js';
import { competenceFailures, expectedConditions, expectedGates } from './cross-check-gates.js';
import { blockedReadsX, informativeRemovalX } from './cross-check-validity.js';
import { confirmedWord, exactConfirmationId, expectedRoutingId, expectedWord } from './cross-check-verdicts.js';

const ALPHA_METHODS = ['exact-cp-difference', 'clopper-pearson', 'conditional-exact'];

/** The registered interval id of a bound criterion (the documented id convention of types.ts). */
export function registeredIntervalId(c: Obj): string | null {
  const rule = str(c['rule']);
  if (rule === 'p-below' || rule === 'point-below') return null;
  const method = str(c['method']);
  const alpha = num(c['alphaPerComponent']);
  const level = num(c['level']);
  // a level on an α-method: the α whose two-sided interval covers it — four tails for the difference bound, two otherwise
  const tails = method === 'exact-cp-difference' ? 4 : 2;
  if (ALPHA_METHODS.includes(method))
    return `${method}/a${alpha ?? (level !== undefined ? Number(((1 - level) / tails).toPrecision(12)) : 0.05)}`;
  return `${method}/l${level ?? (alpha !== undefined ? 1 - 2 * alpha : 0.95)}`;
}

export interface Expected {
  readonly doc: Obj;
  readonly passed: Map<string, boolean>;
  readonly problems: { path: string; note: string }[];
}

function ends(x: XEstimand, id: string): { lower: number; upper: number } | null {
  const iv = x.intervals.get(id);
  if (iv === undefined) return null;
  return iv.envelope ?? { lower: iv.lower, upper: iv.upper };
}

export function expectedDocument(study: PlainStudy, adjudication: Obj): Expected {
  const protocol = study.protocol;
  const problems: Expected['problems'] = [];
  const excluded = competenceFailures(study);
  const removal = informativeRemovalX(study, excluded);
  const blocked = blockedReadsX(study, excluded);
  const validity = blocked === null ? [removal] : [removal, blocked];
  const gates = [...expectedGates(study, excluded), ...validity];
  const conditions = expectedConditions(study, excluded);
  const criteria = arr(protocol['criteria']).map(obj);
  const boot = obj(protocol['bootstrap']);
  const producerEstimands = new Map(arr(adjudication['estimands']).map((e) => [str(obj(e)['id']), obj(e)]));

  const xs = new Map<string, XEstimand>();
  for (const e of protocolEstimands(protocol)) {
    const id = str(e['id']);
    const listed = arr(producerEstimands.get(id)?.['intervals']).map((i) => str(obj(i)['id']));
    const registered = criteria
      .filter((c) => str(c['estimand']) === id)
      .map(registeredIntervalId)
      .filter((x): x is string => x !== null);
    // the exact bounds that confirm an approximate criterion's word, on its estimand and on its companions
    const confirming = criteria
      .filter(
        (c) =>
          str(c['estimand']) === id ||
          (Array.isArray(c['aboveUpperBoundOf']) && (c['aboveUpperBoundOf'] as unknown[]).includes(id)),
      )
      .map((c) => exactConfirmationId(registeredIntervalId(c), str(e['kind'])))
      .filter((x): x is string => x !== null);
    const ids = [...new Set([...listed, ...registered, ...confirming])];
    const bootFor = (iid: string): XBoot | null => {
      const [method, param] = iid.split('/') as [string, string];
      const eq = criteria.find(
        (c) =>
          str(c['estimand']) === id &&
          str(c['rule']) === 'equivalence' &&
          str(c['method']) === method &&
          `l${num(c['level'])}` === param,
      );
      const replicates = num(eq?.['replicates']) ?? num(boot['replicates']);
      const seed = (eq?.['seed'] ?? boot['seed']) as number | string | undefined;
      return replicates === undefined || seed === undefined ? null : { replicates, seed };
    };
    const x = recomputeEstimand(study, e, excluded, ids, bootFor);
    xs.set(id, x);
    // The producer's promise: an available estimand lists every registered interval; one with no number —
    // every task excluded by competence, a condition unavailable, no resolved paired unit — lists none
    // (its numbers are then compared as absent: any it does list is "not recomputed by the cross-check").
    // An estimand withheld as invalid by a gate is still computed, so it lists its intervals too.
    if (x.available) {
      for (const r of registered)
        if (!listed.includes(r))
          problems.push({
            path: `estimands[${id}].intervals[${r}]`,
            note: 'the registered interval is missing from the adjudication',
          });
      for (const r of confirming)
        if (!listed.includes(r))
          problems.push({
            path: `estimands[${id}].intervals[${r}]`,
            note: 'the exact bound that confirms an approximate verdict is missing from the adjudication',
          });
    }
  }

  const estimands: Obj[] = [...xs.values()].map((x) => {
    const cohort: Obj = {
      paired: x.cohort.paired,
      unpaired: x.cohort.unpaired,
      removed: {
        total: x.cohort.removedTotal,
        byCode: x.cohort.removedByCode,
        byCondition: x.cohort.removedByCondition,
      },
      unresolved: x.cohort.unresolved,
      resolved: x.cohort.resolved,
    };
    if (!x.available) return { id: x.id, cohort };
    return {
      id: x.id,
      cohort,
      counts: x.counts,
      estimate: x.estimate,
      intervals: [...x.intervals.entries()].map(([id, iv]) => ({
        id,
        lower: iv.lower,
        upper: iv.upper,
        envelope: iv.envelope,
      })),
      tests: Object.entries(x.tests).map(([id, p]) => ({ id, p })),
      identification: x.identification,
      perTask: x.perTask,
    } as unknown as Obj;
  });

  const holm = arr(adjudication['holm'])
    .map(obj)
    .map((f) => {
      const fid = str(f['id']);
      const fam = arr(protocol['holmFamilies'])
        .map(obj)
        .find((p) => str(p['id']) === fid);
      const oneSided = str(fam?.['test']) === 'mcnemar-exact-one-sided';
      const members = arr(f['members']).map(obj);
      const ps = members.map((m) => {
        const x = xs.get(str(m['estimand']));
        const status = str(m['status']);
        const recomputed = x !== undefined && x.available && x.pair !== null;
        // Both sides must agree on whether the slot carries a number. The producer may withhold a
        // number the cross-check can compute only when a gate made the contrast invalid; a slot without
        // a number (unavailable condition, excluded tasks, no resolved unit) must be one the cross-check
        // cannot compute either.
        if (status === 'available' && !recomputed) {
          problems.push({
            path: `holm[${fid}].members[${str(m['estimand'])}].status`,
            note: 'the cross-check cannot compute this contrast',
          });
        } else if (status === 'unavailable' && recomputed) {
          problems.push({
            path: `holm[${fid}].members[${str(m['estimand'])}].status`,
            note: 'the cross-check computes a number for a slot reported unavailable',
          });
        }
        if (status !== 'available' || !recomputed || x === undefined || x.pair === null) return null;
        return mcnemarBig(x.pair[0], x.pair[1], oneSided ? 'greater' : 'two-sided');
      });
      const adjusted = holmStepDown(ps);
      return {
        id: fid,
        members: members.map((m, i) => ({
          estimand: str(m['estimand']),
          p: ps[i] ?? null,
          adjusted: adjusted[i] ?? null,
        })),
      };
    });
  const adjustedOf = (estimand: string): number | undefined => {
    for (const f of holm) for (const m of f.members) if (m.estimand === estimand) return m.adjusted ?? undefined;
    return undefined;
  };

  const passed = new Map(gates.map((g) => [g.gate, g.passed]));
  const rules = arr(protocol['goNoGo'])
    .map(obj)
    .map((r) => {
      const rule = str(r['rule']);
      if (rule === 'min-competent-cells') {
        const g = gates.find((x) => x.gate === str(r['gate']));
        const tasks = arr(g?.observed['tasks'] as Json).map(obj);
        return { rule, subject: str(r['gate']), observed: tasks.filter((t) => t['passed'] === true).length };
      }
      if (rule === 'reference-success-floor') {
        const cond = str(r['condition']);
        const first = conditions.find((c) => str(c['id']).startsWith(`${cond}@w`));
        const s = first?.['success'];
        return { rule, subject: cond, observed: s === null || s === undefined ? null : (obj(s)['rate'] as number) };
      }
      const x = xs.get(str(r['estimand']));
      return { rule, subject: str(r['estimand']), observed: x?.available && x.pair ? x.pair[0] + x.pair[1] : null };
    });

  const producerVerdicts = new Map(arr(adjudication['verdicts']).map((v) => [str(obj(v)['criterion']), obj(v)]));
  // the validity checks registered to withhold: a criterion reading an estimand they touch must read 'invalid'
  const estimandConds = new Map(
    protocolEstimands(protocol).map((e) => [str(e['id']), xs.get(str(e['id']))?.conds ?? []] as const),
  );
  const withheldBy = (estimand: string): string[] =>
    validity
      .filter((g) => g.withhold && !g.passed)
      .filter((g) =>
        g.gate === 'informative-removal'
          ? g.failing.includes(estimand)
          : (estimandConds.get(estimand) ?? []).some((c) => g.failing.includes(c)),
      )
      .map((g) => g.gate);
  for (const c of criteria) {
    const cid = str(c['id']);
    const deps = [str(c['estimand']), ...arr(c['aboveUpperBoundOf']).map(str), ...(c['than'] ? [str(c['than'])] : [])];
    const by = [...new Set(deps.flatMap(withheldBy))];
    const word = str(producerVerdicts.get(cid)?.['verdict']);
    if (by.length > 0 && word !== 'invalid' && word !== 'excluded')
      problems.push({
        path: `verdicts[${cid}].verdict`,
        note: `the adjudication reads '${word}', the cross-check withholds it (validity check ${by.join(', ')})`,
      });
  }
  const verdicts = criteria.map((c) => {
    const cid = str(c['id']);
    const pv = producerVerdicts.get(cid);
    const pb = pv?.['bound'];
    if (pb === undefined || pb === null) return { criterion: cid };
    const x = xs.get(str(c['estimand']));
    if (x === undefined || !x.available) return { criterion: cid };
    const rule = str(c['rule']);
    const reg = expectedRoutingId(c, registeredIntervalId(c));
    const ivId = str(obj(pb)['interval']);
    if (reg !== null && ivId !== reg)
      problems.push({ path: `verdicts[${cid}].bound.interval`, note: `routed on ${ivId}, expected ${reg}` });
    const e = ends(x, ivId);
    const companions = arr(obj(pb)['companions'])
      .map(obj)
      .map((co) => {
        const cx = xs.get(str(co['estimand']));
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
        adjustedOf(x.id) ??
        (x.pair ? mcnemarBig(x.pair[0], x.pair[1], str(c['direction']) as 'two-sided' | 'greater' | 'less') : null);
    }
    if (rule === 'point-below') threshold = xs.get(str(c['than']))?.estimate ?? null;
    const pword = str(pv?.['verdict']);
    if (pword === 'holds' || pword === 'not detected' || pword === 'unresolved') {
      const discordant = x.pair ? x.pair[0] + x.pair[1] : null;
      const routed = expectedWord(c, {
        lower: e?.lower ?? null,
        upper: e?.upper ?? null,
        threshold,
        p,
        estimate: x.estimate,
        discordant,
      });
      const confirmId = exactConfirmationId(registeredIntervalId(c), x.kind);
      const ce = confirmId === null ? null : ends(x, confirmId);
      // the confirmation's floor: each companion's exact bound at the same level (never its approximate UB)
      const exactThreshold =
        rule === 'lower-bound-above'
          ? Math.max(
              num(c['margin']) ?? 0,
              ...companions.map((co) => {
                const cx = xs.get(co.estimand);
                const cid = cx ? exactConfirmationId(registeredIntervalId(c), cx.kind) : null;
                return (cx && cid ? ends(cx, cid)?.upper : undefined) ?? Number.NaN;
              }),
            )
          : threshold;
      const want =
        confirmId === null
          ? routed
          : confirmedWord(
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
      if (want !== null && want !== pword)
        problems.push({
          path: `verdicts[${cid}].verdict`,
          note: `the adjudication reads '${pword}', the cross-check '${want}'`,
        });
    }
    return {
      criterion: cid,
      bound: { estimate: x.estimate, lower: e?.lower ?? null, upper: e?.upper ?? null, threshold, p, companions },
    };
  });

  const q3floor = (() => {
    const ups = conditions
      .filter((c) => study.kindOf(str(c['id']).split('@')[0]!) === 'C' && c['vsAnchor'] !== null)
      .map((c) => obj(obj(c['vsAnchor'])['rhoCpOneSided95'])['upper'] as number);
    return ups.length === 0 ? null : Math.max(...ups);
  })();
  const questions = arr(adjudication['questions'])
    .map(obj)
    .map((q) => ({
      question: str(q['question']),
      retrospective: arr(q['retrospective'])
        .map(obj)
        .map((r) => {
          const id = str(r['id']);
          if (r['lower'] === null) return { id };
          const [kind, subject] = id.split(':') as [string, string];
          if (kind === 'Q3') {
            const c = conditions.find((x) => str(x['id']) === subject);
            return {
              id,
              lower: c?.['vsAnchor'] ? (obj(obj(c['vsAnchor'])['rhoCpOneSided95'])['lower'] as number) : null,
              floor: q3floor,
            };
          }
          const x = xs.get(subject);
          if (kind === 'Q2')
            return { id, lower: x ? (ends(x, 'exact-cp-difference/a0.05')?.lower ?? null) : null, floor: 0 };
          const wave = x?.cohort.wave;
          const ups = conditions
            .filter(
              (c) =>
                str(c['id']).endsWith(`@w${wave}`) &&
                study.kindOf(str(c['id']).split('@')[0]!) === 'U' &&
                c['vsAnchor'] !== null,
            )
            .map((c) => obj(obj(c['vsAnchor'])['rhoCpOneSided95'])['upper'] as number);
          return {
            id,
            lower: x ? (ends(x, 'exact-cp-difference/a0.025')?.lower ?? null) : null,
            floor: Math.max(0, ...ups),
          };
        }),
    }));

  const doc = {
    provenance: { rowCount: study.rows.length },
    design: { registeredAttempts: study.registered },
    conditions,
    gates: gates.map((g) => ({ gate: g.gate, observed: g.observed })),
    estimands,
    holm,
    goNoGo: { rules },
    verdicts,
    questions,
  } as unknown as Obj;
  return { doc, passed, problems };
}
