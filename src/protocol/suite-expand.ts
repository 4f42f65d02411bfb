/**
 * The expansion of a protocol's `suite:` block (schema-suite.ts), run by the protocol schema's transform at load —
 * deterministic, so the frozen protocol and its hash hold its result (registered up front):
 *
 *   envs          the benchmark's tasks (its simulator declares the set: SimulatorFace.benchmarks), in the order
 *                 `suite.tasks` lists them (default: the set's order), each `{ id: envId, task, kwargs: suite.kwargs }`
 *   estimands     + `<id>@<task>` per task for each id in suite.perTask.estimands: the written estimand with
 *                 `task: <task>` (computed on that task's units only); the written one stays pooled
 *   criteria      + `<id>@<task>` per task for each id in suite.perTask.criteria, on the per-task estimands (its
 *                 estimand, companions and `than` are renamed; each must be in suite.perTask.estimands)
 *   holmFamilies  + `<criterion>_tasks` per per-task criterion when suite.multiplicity is given: its per-task
 *                 contrasts in task order, the family's test from the criterion's direction, α = multiplicity.alpha
 *                 (the criteria then decide on the Holm-adjusted p: adjudication/verdicts.ts holmAdjusted)
 *
 * A protocol without `suite` is returned as it is (its hash is unchanged). The expansion is idempotent: the frozen
 * protocol (suite and its expansion) is parsed again by every later stage, and an entry it would add that is already
 * there, equal, is kept once; `envs` given beside `suite` must be exactly the suite's (else: they are exclusive).
 */
import { canonicalJson, didYouMean, simulatorFaces, type BenchmarkTask } from '../core/index.js';
import { listSome } from './issue-cap.js';
import type { Criterion, Estimand, HolmFamily } from './schema-analysis.js';
import { MAX_ENTRIES } from './schema-common.js';
import type { Suite } from './schema-suite.js';
import type { PathSegment } from './yaml-locate.js';

interface Env {
  id: string;
  task?: string | undefined;
  kwargs?: Record<string, string | number | boolean | null> | undefined;
}

/** The fields of the parsed protocol object the expansion reads and writes. */
export interface SuiteInput {
  readonly simulator: { readonly kind: string } & Readonly<Record<string, unknown>>;
  readonly envs?: Env[] | undefined;
  readonly suite?: Suite | undefined;
  readonly estimands: Estimand[];
  readonly criteria: Criterion[];
  readonly holmFamilies: HolmFamily[];
}

export type Expanded<P extends SuiteInput> = Omit<P, 'envs'> & { envs: Env[] };

export type SuiteIssueSink = (path: PathSegment[], message: string, hint: string) => void;

/** The per-task id of an estimand or criterion. */
export const perTaskId = (id: string, task: string): string => `${id}@${task}`;

/** The Holm family the suite registers over a per-task criterion's contrasts. */
export const suiteFamilyId = (criterion: string): string => `${criterion}_tasks`;

function chosenTasks(suite: Suite, set: readonly BenchmarkTask[], push: SuiteIssueSink): BenchmarkTask[] {
  if (suite.tasks === undefined) return [...set];
  const names = set.map((t) => t.task);
  const seen = new Set<string>();
  const out: BenchmarkTask[] = [];
  suite.tasks.forEach((name, i) => {
    const t = set.find((x) => x.task === name);
    if (t === undefined)
      push(
        ['suite', 'tasks', i],
        `unknown task "${name}" in benchmark ${suite.benchmark}`,
        `${didYouMean(name, names)}its tasks: ${listSome(names)}`,
      );
    else if (seen.has(name)) push(['suite', 'tasks', i], `task "${name}" is listed twice`, 'list each task once');
    else out.push(t);
    seen.add(name);
  });
  return out;
}

function perTaskEstimands(p: SuiteInput, ids: readonly string[], tasks: readonly string[], push: SuiteIssueSink) {
  const out: Estimand[] = [];
  ids.forEach((id, j) => {
    const e = p.estimands.find((x) => x.id === id);
    if (e === undefined) {
      push(
        ['suite', 'perTask', 'estimands', j],
        `unknown estimand "${id}"`,
        `${didYouMean(
          id,
          p.estimands.map((x) => x.id),
        )}list estimands written under estimands: ${listSome(p.estimands.map((x) => x.id))}`,
      );
      return;
    }
    if (e.task !== undefined) {
      push(
        ['suite', 'perTask', 'estimands', j],
        `estimand "${id}" is already restricted to task ${e.task}`,
        'list pooled estimands only (no task)',
      );
      return;
    }
    for (const t of tasks) out.push({ ...e, id: perTaskId(id, t), task: t });
  });
  return out;
}

function perTaskCriteria(
  p: SuiteInput,
  suite: Suite,
  tasks: readonly string[],
  push: SuiteIssueSink,
): { criteria: Criterion[]; families: HolmFamily[] } {
  const criteria: Criterion[] = [];
  const families: HolmFamily[] = [];
  const perTask = new Set(suite.perTask?.estimands ?? []);
  (suite.perTask?.criteria ?? []).forEach((id, j) => {
    const at: PathSegment[] = ['suite', 'perTask', 'criteria', j];
    const c = p.criteria.find((x) => x.id === id);
    if (c === undefined) {
      const ids = p.criteria.map((x) => x.id);
      push(
        at,
        `unknown criterion "${id}"`,
        `${didYouMean(id, ids)}list criteria written under criteria: ${listSome(ids)}`,
      );
      return;
    }
    const refs = [
      c.estimand,
      ...(c.rule === 'lower-bound-above' ? (c.aboveUpperBoundOf ?? []) : []),
      ...(c.rule === 'point-below' ? [c.than] : []),
    ];
    const missing = refs.filter((r) => !perTask.has(r));
    if (missing.length > 0) {
      push(
        at,
        `criterion "${id}" decides on ${missing.join(', ')}, which suite.perTask.estimands does not take per task`,
        `add ${missing.join(', ')} to suite.perTask.estimands`,
      );
      return;
    }
    const m = suite.multiplicity;
    if (m !== undefined) {
      if (c.rule !== 'p-below' || c.direction === 'less') {
        push(
          at,
          `criterion "${id}" (${c.rule}${c.rule === 'p-below' ? `, direction ${c.direction}` : ''}) cannot join a Holm family: multiplicity adjusts exact McNemar p-values of p-below criteria (direction greater or two-sided)`,
          'take it out of suite.perTask.criteria, or remove suite.multiplicity (its per-task verdicts are then unadjusted)',
        );
        return;
      }
      if (c.alpha !== m.alpha) {
        push(
          ['suite', 'multiplicity', 'alpha'],
          `the family-wise alpha ${m.alpha} differs from criterion "${id}"'s alpha ${c.alpha}, whose per-task verdicts decide on the family's adjusted p`,
          `register alpha: ${c.alpha} here, or alpha: ${m.alpha} on criterion ${id}`,
        );
        return;
      }
      families.push({
        id: suiteFamilyId(id),
        contrasts: tasks.map((t) => perTaskId(c.estimand, t)),
        alpha: m.alpha,
        test: c.direction === 'greater' ? 'mcnemar-exact-one-sided' : 'mcnemar-exact-two-sided',
        repairBudget: 0,
        onUnavailable: 'stay-at-p-1',
      });
    }
    for (const t of tasks) {
      const renamed = { ...c, id: perTaskId(id, t), estimand: perTaskId(c.estimand, t) };
      if (renamed.rule === 'lower-bound-above' && renamed.aboveUpperBoundOf !== undefined)
        renamed.aboveUpperBoundOf = renamed.aboveUpperBoundOf.map((x) => perTaskId(x, t));
      if (renamed.rule === 'point-below') renamed.than = perTaskId(renamed.than, t);
      criteria.push(renamed);
    }
  });
  return { criteria, families };
}

/** The written list with the generated entries added (an equal entry already there — the frozen form — kept once). */
function merged<T extends { id: string }>(
  key: 'estimands' | 'criteria' | 'holmFamilies',
  written: readonly T[],
  generated: readonly T[],
  push: SuiteIssueSink,
): T[] {
  const out = [...written];
  for (const g of generated) {
    const k = written.findIndex((x) => x.id === g.id);
    if (k < 0) out.push(g);
    else if (canonicalJson(written[k]) !== canonicalJson(g))
      push(
        [key, k, 'id'],
        `"${g.id}" is an id the suite generates (its per-task entries)`,
        'rename this entry: ids ending in @<task> and <criterion>_tasks are the suite’s',
      );
  }
  if (out.length > MAX_ENTRIES)
    push(
      ['suite', 'perTask'],
      `the suite expands ${key} to ${out.length} entries, over the ${MAX_ENTRIES} a protocol may hold`,
      'take fewer estimands or criteria per task, or fewer tasks (suite.tasks)',
    );
  return out;
}

/**
 * The protocol with its suite expanded; null when a problem was pushed. `state` fills in the kwargs the simulator
 * kind states (schema.ts stateKwargs), so the suite's envs compare with the frozen envs that hold them.
 */
export function expandSuite<P extends SuiteInput>(
  p: P,
  state: (envs: Env[]) => Env[],
  push: SuiteIssueSink,
): Expanded<P> | null {
  const suite = p.suite;
  if (suite === undefined) {
    if (p.envs !== undefined) return p as Expanded<P>;
    push(
      ['envs'],
      'missing required field "envs"',
      'add envs: [{ id: … }] (the environments), or suite: { benchmark: … } (a task set the simulator declares)',
    );
    return null;
  }
  const sets = simulatorFaces.get(p.simulator.kind)?.benchmarks?.(p.simulator) ?? {};
  const set = sets[suite.benchmark];
  if (set === undefined) {
    const names = Object.keys(sets);
    const sim = `${p.simulator.kind}${typeof p.simulator['adapter'] === 'string' ? ` adapter ${p.simulator['adapter']}` : ''}`;
    push(
      ['suite', 'benchmark'],
      `unknown benchmark "${suite.benchmark}" for simulator ${sim}`,
      names.length === 0
        ? `simulator ${sim} declares no task sets: list envs instead`
        : `${didYouMean(suite.benchmark, names)}its task sets: ${names.join(', ')}`,
    );
    return null;
  }
  let problems = 0;
  const sink: SuiteIssueSink = (path, message, hint) => {
    problems++;
    push(path, message, hint);
  };
  const chosen = chosenTasks(suite, set.tasks, sink);
  const envs = state(
    chosen.map((t) => ({ id: t.envId, task: t.task, ...(suite.kwargs ? { kwargs: { ...suite.kwargs } } : {}) })),
  );
  if (p.envs !== undefined && canonicalJson(state(p.envs)) !== canonicalJson(envs))
    sink(
      ['envs'],
      'envs is given beside suite: the suite fills envs with its tasks',
      'remove envs (suite.tasks picks the tasks, suite.kwargs their kwargs), or remove suite and list envs',
    );
  const tasks = chosen.map((t) => t.task);
  const estimands = perTaskEstimands(p, suite.perTask?.estimands ?? [], tasks, sink);
  const { criteria, families } = perTaskCriteria(p, suite, tasks, sink);
  const out = {
    ...p,
    envs,
    estimands: merged('estimands', p.estimands, estimands, sink),
    criteria: merged('criteria', p.criteria, criteria, sink),
    holmFamilies: merged('holmFamilies', p.holmFamilies, families, sink),
  };
  return problems > 0 ? null : out;
}

/**
 * Where env `k` of a protocol is written, for a refusal about it: `envs[k]` (then `sub`, e.g. `.id`), or for the
 * envs a suite filled in, `suite.tasks[i]` when suite.tasks lists the task, else `suite.benchmark`.
 */
export function envField(
  p: { readonly envs: readonly Env[]; readonly suite?: Suite | undefined },
  k: number,
  sub = '',
): string {
  if (p.suite === undefined) return `envs[${k}]${sub}`;
  const task = p.envs[k]?.task;
  const i = task === undefined ? -1 : (p.suite.tasks ?? []).indexOf(task);
  return i >= 0 ? `suite.tasks[${i}]` : 'suite.benchmark';
}
