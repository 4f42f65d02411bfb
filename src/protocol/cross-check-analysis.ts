/**
 * Cross-field rules of the registered analysis:
 *
 * - estimands: ids unique; conditions exist and are compatible (θ/θ̄: T of kind T or T_mu, S of kind
 *   S or S_pi, matched — T with S, T_mu with S_pi — against a reference of kind A; G: O against N;
 *   D/ρ: two different conditions); the conditions of a contrast share a wave (each contrast is taken
 *   within a wave, against that wave's units); θ̄ weights and `task` name tasks.
 * - criteria: ids unique; the estimand exists; the method fits the estimand; exact-component methods
 *   take alphaPerComponent and interval methods take level (never both); the θ discordance floor only
 *   with the conditional exact bound; bootstrap settings available.
 * - gates: ids unique; conditions exist with the kinds each gate is about.
 * - Holm families: contrasts exist, are D or θ (exact McNemar), once each.
 * - go/no-go and MDE references resolve.
 */
import { ALPHA_METHODS, type BoundMethod } from './schema-analysis.js';
import { faceOf, kindsWithRole } from './schema-conditions.js';
import type { CheckContext } from './cross-check-context.js';
import type { Estimand, EstimandKind } from './schema.js';
import { listSome } from './issue-cap.js';
import { didYouMean } from './issues.js';
import { seedCount } from './seeds.js';
import type { PathSegment } from './yaml-locate.js';

const BOOTSTRAPS: readonly BoundMethod[] = ['unit-bootstrap', 'task-stratified-bootstrap', 'cluster-bootstrap'];

/** Which estimand kinds each bound method can bound. */
const METHOD_FITS: Readonly<Record<BoundMethod, readonly EstimandKind[]>> = {
  'exact-cp-difference': ['D', 'theta', 'thetaBar'],
  'clopper-pearson': ['rho', 'successRate'],
  'conditional-exact': ['theta'],
  wilson: ['rho', 'successRate'],
  newcombe: ['D', 'G'],
  tango: ['D'],
  'unit-bootstrap': ['D', 'rho', 'theta', 'thetaBar', 'G', 'successRate'],
  'task-stratified-bootstrap': ['D', 'rho', 'theta', 'thetaBar', 'G', 'successRate'],
  'cluster-bootstrap': ['D', 'rho', 'theta', 'thetaBar', 'G', 'successRate'],
};

function estimandConditions(e: Estimand): Array<[string, string]> {
  switch (e.kind) {
    case 'D':
    case 'rho':
      return [
        ['reference', e.reference],
        ['intervention', e.intervention],
      ];
    case 'theta':
    case 'thetaBar':
      return [
        ['T', e.T],
        ['S', e.S],
        ['reference', e.reference],
      ];
    case 'G':
      return [
        ['oracle', e.oracle],
        ['none', e.none],
      ];
    case 'successRate':
      return [['condition', e.condition]];
  }
}

function checkEstimands(ctx: CheckContext): void {
  const p = ctx.protocol;
  ctx.unique(p.estimands, ['estimands'], 'estimand');
  const tasks = p.envs.map((e) => e.task ?? e.id);
  p.estimands.forEach((e, i) => {
    const at = (k: string): PathSegment[] => ['estimands', i, k];
    if (e.task !== undefined && !tasks.includes(e.task))
      ctx.push(at('task'), `unknown task "${e.task}"`, `${didYouMean(e.task, tasks)}tasks: ${listSome(tasks)}`);
    const refs = estimandConditions(e);
    const found = refs.map(([k, id]) => ctx.condition(at(k), id));
    if (found.some((c) => c === undefined)) return;
    if (e.kind === 'D' || e.kind === 'rho') {
      if (e.reference === e.intervention)
        ctx.push(
          at('intervention'),
          `estimand "${e.id}" compares "${e.reference}" with itself`,
          'name two different conditions',
        );
    }
    if (e.kind === 'theta' || e.kind === 'thetaBar') {
      const t = ctx.conditionOfRole(at('T'), e.T, ['target'], 'the T (different-fact) side of θ');
      const s = ctx.conditionOfRole(at('S'), e.S, ['sham'], 'the S (same-fact) side of θ');
      ctx.conditionOfRole(at('reference'), e.reference, ['reference'], 'the reference of θ');
      if (t && s && faceOf(t).family !== faceOf(s).family) {
        ctx.push(at('S'), `θ pairs ${t.kind} with ${s.kind}; substitutions must be of one family`, pairHint());
      }
      if (e.kind === 'thetaBar' && e.weights) {
        for (const task of Object.keys(e.weights)) {
          if (!tasks.includes(task))
            ctx.push(
              ['estimands', i, 'weights', task],
              `unknown task "${task}"`,
              `tasks: ${listSome(tasks)}`,
              'E_PROTOCOL_INVALID',
              true,
            );
        }
      }
    }
    if (e.kind === 'G') {
      ctx.conditionOfKind(at('oracle'), e.oracle, ['O'], 'the oracle side of G');
      ctx.conditionOfKind(at('none'), e.none, ['N'], 'the no-access side of G');
    }
    const ids = refs.map(([, id]) => id);
    if (ids.length > 1 && !ctx.shareWave(ids)) {
      ctx.push(
        at(refs[refs.length - 1]?.[0] ?? 'kind'),
        `the conditions of estimand "${e.id}" (${listSome(ids)}) never run in the same wave`,
        'a contrast is taken within one wave: put them in a common wave',
      );
    }
  });
}

function checkCriteria(ctx: CheckContext): void {
  const p = ctx.protocol;
  ctx.unique(p.criteria, ['criteria'], 'criterion');
  const seeds = seedCount(p.seeds);
  p.criteria.forEach((c, i) => {
    const at = (k: string): PathSegment[] => ['criteria', i, k];
    const e = ctx.estimand(at('estimand'), c.estimand);
    if (c.rule === 'point-below') {
      ctx.estimand(at('than'), c.than);
      return;
    }
    if (c.rule === 'p-below') {
      if (e && e.kind !== 'D' && e.kind !== 'theta')
        ctx.push(
          at('estimand'),
          `the exact McNemar test needs a D or theta estimand, "${e.id}" is ${e.kind}`,
          'name a D or theta estimand',
        );
      // Its p is then the family's Holm-adjusted p (verdicts.ts, the first family listing it), computed with the
      // family's test and judged against α: the criterion must register that same hypothesis and level.
      const family = p.holmFamilies.find((f) => f.contrasts.includes(c.estimand));
      if (family !== undefined) {
        const direction = family.test === 'mcnemar-exact-one-sided' ? 'greater' : 'two-sided';
        if (c.direction !== direction) {
          ctx.push(
            at('direction'),
            `criterion "${c.id}" tests ${c.estimand} ${c.direction}, but ${c.estimand} is in Holm family "${family.id}" (${family.test}), whose adjusted p it is judged by`,
            `register direction: ${direction}, or take ${c.estimand} out of the family`,
          );
        }
        if (c.alpha !== family.alpha) {
          ctx.push(
            at('alpha'),
            `criterion "${c.id}" has alpha ${c.alpha}, but its estimand ${c.estimand} is in Holm family "${family.id}" with alpha ${family.alpha}`,
            `register alpha: ${family.alpha}, or take ${c.estimand} out of the family`,
          );
        }
      }
      return;
    }
    if (e && !METHOD_FITS[c.method].includes(e.kind)) {
      const fitting = (Object.keys(METHOD_FITS) as BoundMethod[]).filter((m) => METHOD_FITS[m].includes(e.kind));
      ctx.push(
        at('method'),
        `method ${c.method} cannot bound a ${e.kind} estimand ("${e.id}")`,
        `for ${e.kind} use one of: ${fitting.join(', ')}`,
      );
    }
    if (c.rule !== 'equivalence') {
      const wantsAlpha = ALPHA_METHODS.includes(c.method);
      if (wantsAlpha && c.alphaPerComponent === undefined)
        ctx.push(
          at('alphaPerComponent'),
          `missing required field "alphaPerComponent" for method ${c.method}`,
          'add alphaPerComponent: 0.05 (each component bound one-sided 95%)',
        );
      if (wantsAlpha && c.level !== undefined)
        ctx.push(at('level'), `method ${c.method} is set by alphaPerComponent, not level`, 'remove level');
      if (!wantsAlpha && c.level === undefined)
        ctx.push(
          at('level'),
          `missing required field "level" for method ${c.method}`,
          'add level: 0.95 (the two-sided interval level)',
        );
      if (!wantsAlpha && c.alphaPerComponent !== undefined)
        ctx.push(
          at('alphaPerComponent'),
          `method ${c.method} is set by level, not alphaPerComponent`,
          'remove alphaPerComponent',
        );
    }
    if (c.rule === 'lower-bound-above') {
      c.aboveUpperBoundOf?.forEach((id, j) => ctx.estimand(['criteria', i, 'aboveUpperBoundOf', j], id));
      if ((c.minDiscordant !== undefined || c.expandToN !== undefined) && c.method !== 'conditional-exact') {
        ctx.push(
          at(c.minDiscordant !== undefined ? 'minDiscordant' : 'expandToN'),
          'a discordance floor belongs to the conditional exact θ bound',
          'use method: conditional-exact, or remove it',
        );
      }
      if (c.expandToN !== undefined && (c.expandToN <= p.n || c.expandToN > seeds)) {
        ctx.push(
          at('expandToN'),
          `expandToN = ${c.expandToN} must exceed n = ${p.n} and fit the ${seeds} registered seeds`,
          'register enough seeds for the expansion',
        );
      }
    }
    const usesBootstrap = BOOTSTRAPS.includes(c.method);
    if (usesBootstrap && !p.bootstrap) {
      const own = c.rule === 'equivalence' && c.replicates !== undefined && c.seed !== undefined;
      if (!own)
        ctx.push(
          at('method'),
          `method ${c.method} needs bootstrap replicates and a seed`,
          'add bootstrap: { replicates: 10000, seed: … } to the protocol',
        );
    }
  });
}

function checkGates(ctx: CheckContext): void {
  const p = ctx.protocol;
  ctx.unique(p.gates, ['gates'], 'gate');
  p.gates.forEach((g, i) => {
    const at = (...k: PathSegment[]): PathSegment[] => ['gates', i, ...k];
    switch (g.kind) {
      case 'competence':
        ctx.condition(at('condition'), g.condition);
        if (g.minSuccess === undefined && g.wilsonLowerAbove === undefined)
          ctx.push(
            at('kind'),
            'a competence gate needs minSuccess or wilsonLowerAbove',
            'add minSuccess: 0.5 and/or wilsonLowerAbove: 0.3333333333333333',
          );
        break;
      case 'path':
        g.reads.forEach((id, j) => ctx.condition(at('reads', j), id));
        g.emptyReads?.forEach((id, j) =>
          ctx.conditionOfRole(at('emptyReads', j), id, ['no-access'], 'a condition with empty reads'),
        );
        break;
      case 'replicate':
        ctx.conditionOfRole(at('condition'), g.condition, ['replicate'], 'the replicate');
        ctx.condition(at('reference'), g.reference);
        break;
      case 'survival':
        g.conditions.forEach((id, j) =>
          ctx.conditionOfRole(at('conditions', j), id, ['substituting'], 'a survival-gated condition'),
        );
        break;
      case 'clock':
        g.conditions.forEach((id, j) =>
          ctx.conditionOfRole(at('conditions', j), id, ['no-access'], 'a clock-gated condition'),
        );
        break;
      case 'candidate':
        g.conditions.forEach((id, j) =>
          ctx.conditionOfRole(
            at('conditions', j),
            id,
            ['substituting', 'no-access', 'replicate'],
            'a candidate-gated condition',
          ),
        );
        break;
      case 'sham-validity':
        ctx.conditionOfRole(at('sham'), g.sham, ['sham'], 'the sham');
        break;
      case 'read-canary':
        ctx.conditionOfRole(at('canary'), g.canary, ['read-canary'], 'the read canary');
        g.guards.forEach((id, j) => ctx.condition(at('guards', j), id));
        break;
      case 'empty-read':
        g.conditions.forEach((id, j) => ctx.condition(at('conditions', j), id));
        if (g.rule === 'predicted-count' && g.predicted === undefined)
          ctx.push(at('rule'), 'rule predicted-count needs the predicted count', 'add predicted: <count>');
        if (g.rule === 'identical-positions' && g.predicted !== undefined)
          ctx.push(
            at('predicted'),
            'rule identical-positions takes no predicted count',
            'remove predicted (or use rule: predicted-count)',
          );
        break;
    }
  });
}

function checkFamilies(ctx: CheckContext): void {
  const p = ctx.protocol;
  ctx.unique(p.holmFamilies, ['holmFamilies'], 'Holm family');
  p.holmFamilies.forEach((f, i) => {
    const seen = new Set<string>();
    f.contrasts.forEach((id, j) => {
      const path = ['holmFamilies', i, 'contrasts', j];
      const e = ctx.estimand(path, id);
      if (e && e.kind !== 'D' && e.kind !== 'theta')
        ctx.push(
          path,
          `"${id}" is a ${e.kind} estimand; a Holm family tests D or theta contrasts`,
          'list D or theta estimands',
        );
      if (seen.has(id)) ctx.push(path, `contrast "${id}" is listed twice`, 'list each contrast once');
      seen.add(id);
    });
  });
  p.goNoGo.forEach((g, i) => {
    const at = (k: string): PathSegment[] => ['goNoGo', i, k];
    if (g.rule === 'min-competent-cells') {
      const gate = p.gates.find((x) => x.id === g.gate);
      if (!gate || gate.kind !== 'competence')
        ctx.push(
          at('gate'),
          `"${g.gate}" is not a competence gate`,
          `competence gates: ${listSome(p.gates.filter((x) => x.kind === 'competence').map((x) => x.id)) || 'none'}`,
        );
      if (g.min > p.envs.length)
        ctx.push(at('min'), `min = ${g.min} exceeds the ${p.envs.length} cell(s)`, 'a cell is one task; lower min');
    } else if (g.rule === 'reference-success-floor') {
      ctx.condition(at('condition'), g.condition);
    } else {
      ctx.estimand(at('estimand'), g.estimand);
    }
  });
  const mde = p.mde;
  if (mde) {
    if (mde.estimand !== undefined) ctx.estimand(['mde', 'estimand'], mde.estimand);
    mde.outputs.forEach((o, i) => {
      if (!mde.inputs.assumedDiscordance.includes(o.assumedDiscordance)) {
        ctx.push(
          ['mde', 'outputs', i, 'assumedDiscordance'],
          `output row for discordance ${o.assumedDiscordance} has no input`,
          `inputs.assumedDiscordance: ${listSome(mde.inputs.assumedDiscordance.map(String))}`,
        );
      }
    });
  }
}

export function checkAnalysis(ctx: CheckContext): void {
  checkEstimands(ctx);
  checkCriteria(ctx);
  checkGates(ctx);
  checkFamilies(ctx);
}

/** How θ pairs targets with shams: each family's targets with its shams, e.g. "pair T with S (donor swaps) or …". */
function pairHint(): string {
  const shams = kindsWithRole('sham').map((k) => ({ k, family: faceOfName(k) }));
  const pairs = kindsWithRole('target').map((t) => {
    const family = faceOfName(t);
    const same = shams.filter((s) => s.family === family).map((s) => s.k);
    return `${t} with ${same.join(' or ')}${family === undefined ? '' : ` (${family})`}`;
  });
  return `pair ${pairs.join(' or ')}`;
}

const faceOfName = (kind: string): string | undefined => faceOf({ id: kind, kind }).family;
