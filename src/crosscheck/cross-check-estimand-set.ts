/**
 * The cross-check's recomputation of the protocol's estimands as a set, and their `estimands` section of the
 * expected document. Which intervals each estimand carries is the union of three lists: those the adjudication
 * lists (a producer may list more than the registered ones), those its criteria register, and the exact bounds
 * that confirm an approximate criterion's word (on its estimand and on its companions). An available estimand
 * missing a registered or a confirming interval is a problem.
 */
import { arr, num, obj, str, type Obj, type PlainStudy } from './cross-check-model.js';
import { protocolEstimands, recomputeEstimand, type XBoot, type XEstimand } from './cross-check-estimands.js';
import { exactConfirmationId, registeredIntervalId } from './cross-check-verdicts.js';
import { criteriaOf, type Problem } from './cross-check-context.js';

interface IntervalIds {
  /** Listed by the adjudication. */
  listed: string[];
  /** Registered by a criterion on the estimand. */
  registered: string[];
  /** The exact bounds that confirm an approximate criterion's word, on this estimand or a companion. */
  confirming: string[];
}

function intervalIdsOf(study: PlainStudy, e: Obj, producer: Obj | undefined): IntervalIds {
  const id = str(e['id']);
  const criteria = criteriaOf(study);
  const listed = arr(producer?.['intervals']).map((i) => str(obj(i)['id']));
  const registered = criteria
    .filter((c) => str(c['estimand']) === id)
    .map(registeredIntervalId)
    .filter((x): x is string => x !== null);
  const confirming = criteria
    .filter(
      (c) =>
        str(c['estimand']) === id ||
        (Array.isArray(c['aboveUpperBoundOf']) && (c['aboveUpperBoundOf'] as unknown[]).includes(id)),
    )
    .map((c) => exactConfirmationId(registeredIntervalId(c), str(e['kind'])))
    .filter((x): x is string => x !== null);
  return { listed, registered, confirming };
}

/**
 * The bootstrap settings of one interval of the estimand: an equivalence criterion's own replicates and seed
 * where it registers the same method and level, else the protocol's; null when neither gives both.
 */
function bootstrapFor(study: PlainStudy, estimand: string): (id: string) => XBoot | null {
  const criteria = criteriaOf(study);
  const boot = obj(study.protocol['bootstrap']);
  return (iid) => {
    const [method, param] = iid.split('/') as [string, string];
    const eq = criteria.find(
      (c) =>
        str(c['estimand']) === estimand &&
        str(c['rule']) === 'equivalence' &&
        str(c['method']) === method &&
        `l${num(c['level'])}` === param,
    );
    const replicates = num(eq?.['replicates']) ?? num(boot['replicates']);
    const seed = (eq?.['seed'] ?? boot['seed']) as number | string | undefined;
    return replicates === undefined || seed === undefined ? null : { replicates, seed };
  };
}

/**
 * The producer's promise: an available estimand lists every registered interval; one with no number — every task
 * excluded by competence, a condition unavailable, no resolved paired unit — lists none (its numbers are then
 * compared as absent: any it does list is "not recomputed by the cross-check"). An estimand withheld as invalid by
 * a gate is still computed, so it lists its intervals too.
 */
function missingIntervals(x: XEstimand, ids: IntervalIds, problems: Problem[]): void {
  if (!x.available) return;
  for (const r of ids.registered)
    if (!ids.listed.includes(r))
      problems.push({
        path: `estimands[${x.id}].intervals[${r}]`,
        note: 'the registered interval is missing from the adjudication',
      });
  for (const r of ids.confirming)
    if (!ids.listed.includes(r))
      problems.push({
        path: `estimands[${x.id}].intervals[${r}]`,
        note: 'the exact bound that confirms an approximate verdict is missing from the adjudication',
      });
}

/** Every protocol estimand recomputed on the competent tasks, by id (a repeated id: its last recomputation, in its first place). */
export function recomputeEstimands(
  study: PlainStudy,
  adjudication: Obj,
  excluded: Set<string>,
  problems: Problem[],
): Map<string, XEstimand> {
  const producerEstimands = new Map(arr(adjudication['estimands']).map((e) => [str(obj(e)['id']), obj(e)]));
  const xs = new Map<string, XEstimand>();
  for (const e of protocolEstimands(study.protocol)) {
    const id = str(e['id']);
    const ids = intervalIdsOf(study, e, producerEstimands.get(id));
    const all = [...new Set([...ids.listed, ...ids.registered, ...ids.confirming])];
    const x = recomputeEstimand(study, e, excluded, all, bootstrapFor(study, id));
    xs.set(id, x);
    missingIntervals(x, ids, problems);
  }
  return xs;
}

/** The `estimands` section: the cohort of each, and its numbers when it has any. */
export function estimandsSection(xs: ReadonlyMap<string, XEstimand>): Obj[] {
  return [...xs.values()].map((x) => {
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
}
