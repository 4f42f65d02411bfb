/**
 * The cross-check's recomputation of the retrospective readings under each question (see src/adjudication
 * questions.ts), one function per reading kind, keyed by the part of the reading's id before ':':
 *   Q3:<condition@wave>  the one-sided 95% CP lower bound of its ρ against the anchor; floor: the largest such upper
 *                        bound over the kind-C conditions (null when none has a contrast)
 *   Q2:<estimand>        the exact difference bound's lower end at α 0.05 per component; floor 0
 *   Q4:<estimand>        (and any other kind) that lower end at α 0.025; floor: the largest one-sided upper bound
 *                        of ρ over the kind-U conditions of the estimand's wave, and 0
 * Which readings carry numbers is the producer's choice (a reading with lower null is withheld); every number
 * under one that carries them is recomputed here.
 */
import { arr, obj, str, type Obj, type PlainStudy } from './cross-check-model.js';
import { ends, type ExpectCtx } from './cross-check-context.js';

type ReadingFn = (ctx: ExpectCtx, conditions: readonly Obj[], id: string, subject: string) => Obj;

/** The one-sided 95% CP upper bound of ρ of every condition of the kind with an anchor contrast, ids ending `suffix`. */
function rhoUppers(study: PlainStudy, conditions: readonly Obj[], kind: string, suffix: string): number[] {
  return conditions
    .filter(
      (c) =>
        str(c['id']).endsWith(suffix) && study.kindOf(str(c['id']).split('@')[0]!) === kind && c['vsAnchor'] !== null,
    )
    .map((c) => obj(obj(c['vsAnchor'])['rhoCpOneSided95'])['upper'] as number);
}

const q3: ReadingFn = (ctx, conditions, id, subject) => {
  const c = conditions.find((x) => str(x['id']) === subject);
  const ups = rhoUppers(ctx.study, conditions, 'C', '');
  return {
    id,
    lower: c?.['vsAnchor'] ? (obj(obj(c['vsAnchor'])['rhoCpOneSided95'])['lower'] as number) : null,
    floor: ups.length === 0 ? null : Math.max(...ups),
  };
};

const q2: ReadingFn = (ctx, _conditions, id, subject) => {
  const x = ctx.xs.get(subject);
  return { id, lower: x ? (ends(x, 'exact-cp-difference/a0.05')?.lower ?? null) : null, floor: 0 };
};

const q4: ReadingFn = (ctx, conditions, id, subject) => {
  const x = ctx.xs.get(subject);
  const ups = rhoUppers(ctx.study, conditions, 'U', `@w${x?.cohort.wave}`);
  return {
    id,
    lower: x ? (ends(x, 'exact-cp-difference/a0.025')?.lower ?? null) : null,
    floor: Math.max(0, ...ups),
  };
};

/** One reading per kind; a kind not listed reads as Q4. */
const READINGS: Readonly<Record<string, ReadingFn>> = { Q2: q2, Q3: q3, Q4: q4 };

/** The `questions` section: the adjudication's questions and readings, in its order, every number recomputed. */
export function expectedQuestions(ctx: ExpectCtx, conditions: readonly Obj[]): Obj[] {
  return arr(ctx.adjudication['questions'])
    .map(obj)
    .map((q) => ({
      question: str(q['question']),
      retrospective: arr(q['retrospective'])
        .map(obj)
        .map((r): Obj => {
          const id = str(r['id']);
          if (r['lower'] === null) return { id };
          const [kind, subject] = id.split(':') as [string, string];
          const read = Object.hasOwn(READINGS, kind) ? READINGS[kind]! : q4;
          return read(ctx, conditions, id, subject);
        }),
    }));
}
