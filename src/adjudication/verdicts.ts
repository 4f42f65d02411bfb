/**
 * Verdict routing — on BOUNDS, never on point estimates (rule ii), against the criterion registered
 * before launch. In order:
 *   1. excluded   — every task failed a hard competence gate (rule i): no number.
 *   2. invalid    — a failed hard path/wiring gate touches a condition of the estimand (or of a companion
 *                   estimand), or a condition is unavailable: the number is withheld (no bound field).
 *   3. the bound, per rule — the verdict word answers the rule's registered CLAIM (decide.ts; L, U: the
 *      routed interval's ends, its envelope over the extreme fillings when units are unresolved;
 *      τ = max(margin, every companion upper bound)):
 *        lower-bound-above  claim "above the margin": L > τ → holds; U < margin → not detected; else
 *                           unresolved. A registered discordance floor (minDiscordant) not met → unresolved.
 *        upper-bound-below  claim "below the margin": U < margin → holds; L > margin → not detected; else
 *                           unresolved.
 *        equivalence        TOST: the registered (1 − 2α) interval strictly inside ±margin → holds; wholly
 *                           outside → not detected; straddling a margin → unresolved.
 *        p-below            exact McNemar p (Holm-adjusted when the estimand is in a family) < α → holds,
 *                           else unresolved (a test without a margin excludes no effect).
 *        point-below        a registered point check (eligibility): holds / not detected, stated with bounds;
 *                           a point estimate carries no error control.
 *      A conditional-exact criterion routes on its conditional bound only against a threshold of 0 (the exact
 *      conditional sign test); otherwise on the unconditional exact bound on θ (estimands.ts routingRequest).
 *      A word routed on a score interval or a bootstrap stands only when the exact bound at the same stated
 *      level gives it too (estimands.ts exactConfirmation; for θ̄ the union of per-task exact bounds at α/K), else
 *      unresolved. docs/error-rates.md enumerates the resulting error rates exactly.
 *   4. descriptive — a go/no-go rule (or a hard 'descriptive' gate) failed: the numbers stay, no word.
 */
import { ImepError } from '../core/index.js';
import type { Criterion, Protocol } from '../protocol/index.js';
import { mcnemarExact } from '../stats/index.js';
import { decideBound } from './decide.js';
import { anatomy, companionRequest, exactConfirmation, findInterval, routingRequest } from './estimands.js';
import { discordantPair, holmAdjusted } from './holm-families.js';
import { intervalId } from './intervals.js';
import type { AvailableEstimand, EstimandResult, GateResult, GoNoGoResult, HolmFamilyResult } from './types.js';
import { everythingExcluded, exclusionGates, invalidBecause, qualificationsOf } from './validity.js';
import type { RoutedBound, Verdict } from './verdict-types.js';

export interface VerdictContext {
  readonly protocol: Protocol;
  readonly estimands: readonly EstimandResult[];
  readonly gates: readonly GateResult[];
  readonly holm: readonly HolmFamilyResult[];
  readonly goNoGo: GoNoGoResult;
  readonly tasks: readonly string[];
}

const pp = (x: number): string => `${(100 * x).toFixed(2)} pp`;

function estimandOf(ctx: VerdictContext, id: string, field: string): EstimandResult {
  const e = ctx.estimands.find((x) => x.id === id);
  if (e === undefined)
    throw new ImepError('E_PROTOCOL_INVALID', `criterion names estimand '${id}', which the protocol does not define`, {
      field,
    });
  return e;
}

function ends(e: AvailableEstimand, id: string): { lower: number; upper: number; label: string } {
  const iv = findInterval(e, id);
  return {
    lower: iv.envelope?.lower ?? iv.lower,
    upper: iv.envelope?.upper ?? iv.upper,
    label: iv.envelope ? `${iv.boundLabel}; envelope over unresolved units` : iv.boundLabel,
  };
}

type Routed = { verdict: 'holds' | 'not detected' | 'unresolved'; bound: RoutedBound; met: boolean; reason: string };

function route(c: Criterion, e: AvailableEstimand, ctx: VerdictContext): Routed {
  const r = routeWord(c, e, ctx);
  if (r.bound.routedOn !== 'bound' || r.verdict === 'unresolved') return r;
  const confirm = exactConfirmation(
    c,
    anatomy(ctx.protocol.estimands.find((x) => x.id === e.id)!).spec.shape,
    ctx.protocol,
  );
  if (confirm === null) return r; // routed on an exact bound
  // an approximate interval's word stands only when the exact bound at the same level gives it too
  const id = intervalId(confirm);
  const { lower, upper } = ends(e, id);
  const rule = c.rule as 'lower-bound-above' | 'upper-bound-below' | 'equivalence';
  const margin = (c as { margin: number }).margin;
  // a companion's floor is confirmed too: its exact bound at the same level, never its approximate upper bound
  const exactCompanions = (c.rule === 'lower-bound-above' ? (c.aboveUpperBoundOf ?? []) : []).map((cid) => {
    const shape = anatomy(ctx.protocol.estimands.find((x) => x.id === cid)!).spec.shape;
    const cidInterval = intervalId(exactConfirmation(c, shape, ctx.protocol)!);
    const ce = estimandOf(ctx, cid, `criteria.${c.id}.aboveUpperBoundOf`) as AvailableEstimand;
    return { estimand: cid, interval: cidInterval, upper: ends(ce, cidInterval).upper };
  });
  const threshold =
    c.rule === 'lower-bound-above' ? Math.max(margin, ...exactCompanions.map((x) => x.upper)) : r.bound.threshold;
  const exactWord = decideBound(rule, { lower, upper, margin, threshold });
  const floors = exactCompanions.map((x) => `UB of ${x.estimand} by ${x.interval} ${pp(x.upper)}`).join(', ');
  const exactText = `the exact bound ${id} [${pp(lower)}, ${pp(upper)}]${floors === '' ? '' : ` against max(margin ${pp(margin)}, ${floors})`}`;
  if (exactWord === r.verdict) return { ...r, reason: `${r.reason}; confirmed by ${exactText}` };
  return {
    verdict: 'unresolved',
    bound: r.bound,
    met: false,
    reason: `${r.reason}, but ${exactText} does not confirm it (${exactWord}): an approximate interval alone decides nothing`,
  };
}

/** The record of a bound rule's routed interval `interval` (its ends), compared against `threshold`. */
function boundRecord(
  base: Pick<RoutedBound, 'estimate' | 'companions' | 'p'>,
  interval: RoutedBound['interval'],
  ends: { lower: number; upper: number; label: RoutedBound['label'] },
  threshold: number,
  companions: RoutedBound['companions'] = base.companions,
): RoutedBound {
  const { lower, upper, label } = ends;
  return { ...base, interval, label, lower, upper, threshold, companions, routedOn: 'bound' };
}

function routeWord(c: Criterion, e: AvailableEstimand, ctx: VerdictContext): Routed {
  const base = { estimate: e.estimate, companions: [] as RoutedBound['companions'], p: null as number | null };
  switch (c.rule) {
    case 'lower-bound-above': {
      const id = intervalId(routingRequest(c, ctx.protocol)!);
      const { lower: L, upper: U, label } = ends(e, id);
      const companions = (c.aboveUpperBoundOf ?? []).map((cid) => {
        const ce = estimandOf(ctx, cid, `criteria.${c.id}.aboveUpperBoundOf`) as AvailableEstimand;
        const cidInterval = intervalId(
          companionRequest(anatomy(ctx.protocol.estimands.find((x) => x.id === cid)!).spec.shape, c, ctx.protocol),
        );
        return { estimand: cid, interval: cidInterval, upper: ends(ce, cidInterval).upper };
      });
      const tau = Math.max(c.margin, ...companions.map((x) => x.upper));
      const bound = boundRecord(base, id, { lower: L, upper: U, label }, tau, companions);
      const what =
        companions.length > 0
          ? `max(margin ${pp(c.margin)}, UB of ${companions.map((x) => x.estimand).join(', ')})`
          : `margin ${pp(c.margin)}`;
      if (c.minDiscordant !== undefined) {
        const pair = discordantPair(e);
        const m = pair === null ? 0 : pair[0] + pair[1];
        if (m < c.minDiscordant) {
          const expand = c.expandToN !== undefined ? `; the registered expansion to n = ${c.expandToN} applies` : '';
          return {
            verdict: 'unresolved',
            bound,
            met: false,
            reason: `${m} discordant pairs, below the registered floor of ${c.minDiscordant}${expand}`,
          };
        }
      }
      const word = decideBound('lower-bound-above', { lower: L, upper: U, margin: c.margin, threshold: tau });
      if (word === 'holds') return { verdict: word, bound, met: true, reason: `LB ${pp(L)} > ${pp(tau)} (${what})` };
      if (word === 'not detected')
        return {
          verdict: word,
          bound,
          met: false,
          reason: `UB ${pp(U)} < margin ${pp(c.margin)}: the bound excludes the claim`,
        };
      const degenerate = findInterval(e, id).degenerate ? '; the bound is degenerate (no information)' : '';
      return {
        verdict: word,
        bound,
        met: false,
        reason: `[${pp(L)}, ${pp(U)}]: LB not above ${pp(tau)} (${what}), UB not below margin ${pp(c.margin)}${degenerate}`,
      };
    }
    case 'upper-bound-below': {
      const id = intervalId(routingRequest(c, ctx.protocol)!);
      const { lower: L, upper: U, label } = ends(e, id);
      const bound = boundRecord(base, id, { lower: L, upper: U, label }, c.margin);
      const word = decideBound('upper-bound-below', { lower: L, upper: U, margin: c.margin });
      if (word === 'holds')
        return {
          verdict: word,
          bound,
          met: true,
          reason: `UB ${pp(U)} < ${pp(c.margin)}: effects of the registered size are excluded; smaller ones are not`,
        };
      if (word === 'not detected')
        return {
          verdict: word,
          bound,
          met: false,
          reason: `LB ${pp(L)} > ${pp(c.margin)}: the bound excludes the claim`,
        };
      const degenerate = findInterval(e, id).degenerate ? '; the bound is degenerate (no information)' : '';
      return {
        verdict: word,
        bound,
        met: false,
        reason: `[${pp(L)}, ${pp(U)}] straddles ${pp(c.margin)}${degenerate}`,
      };
    }
    case 'equivalence': {
      const id = intervalId(routingRequest(c, ctx.protocol)!);
      const { lower: L, upper: U, label } = ends(e, id);
      const bound = boundRecord(base, id, { lower: L, upper: U, label }, c.margin);
      const word = decideBound('equivalence', { lower: L, upper: U, margin: c.margin });
      if (word === 'holds')
        return {
          verdict: word,
          bound,
          met: true,
          reason: `[${pp(L)}, ${pp(U)}] lies inside ±${pp(c.margin)} (TOST at ${c.level})`,
        };
      if (word === 'not detected')
        return {
          verdict: word,
          bound,
          met: false,
          reason: `[${pp(L)}, ${pp(U)}] lies outside ±${pp(c.margin)}: equivalence is excluded`,
        };
      return {
        verdict: word,
        bound,
        met: false,
        reason: `[${pp(L)}, ${pp(U)}] crosses ±${pp(c.margin)}: not shown equivalent (nonsignificance is not equivalence)`,
      };
    }
    case 'p-below': {
      const pair = discordantPair(e);
      if (pair === null)
        throw new ImepError('E_PROTOCOL_INVALID', `p-below needs a paired contrast; ${e.id} is a ${e.kind}`, {
          field: `criteria.${c.id}`,
        });
      const raw = mcnemarExact(pair[0], pair[1], c.direction);
      const fam = holmAdjusted(ctx.holm, e.id);
      const p = fam?.adjusted ?? raw;
      const dflt = e.intervals[0]!;
      const { lower: L, upper: U, label } = ends(e, dflt.id);
      const bound: RoutedBound = {
        ...base,
        interval: dflt.id,
        label,
        lower: L,
        upper: U,
        threshold: c.alpha,
        p,
        routedOn: 'test',
      };
      const which = `exact McNemar (${c.direction})${fam ? `, Holm-adjusted in family ${fam.family}` : ''}`;
      if (p < c.alpha)
        return { verdict: 'holds', bound, met: true, reason: `p = ${p.toPrecision(4)} < ${c.alpha} (${which})` };
      // a test without a margin excludes no effect: non-rejection is unresolved, never 'not detected'
      return {
        verdict: 'unresolved',
        bound,
        met: false,
        reason: `p = ${p.toPrecision(4)} ≥ ${c.alpha} (${which}): the test does not reject, and a test without a margin excludes no effect; bound [${pp(L)}, ${pp(U)}]`,
      };
    }
    case 'point-below': {
      const than = estimandOf(ctx, c.than, `criteria.${c.id}.than`) as AvailableEstimand;
      const dflt = e.intervals[0]!;
      const { lower: L, upper: U, label } = ends(e, dflt.id);
      const bound: RoutedBound = {
        ...base,
        interval: dflt.id,
        label,
        lower: L,
        upper: U,
        threshold: than.estimate,
        routedOn: 'point',
      };
      if (e.estimate < than.estimate)
        return {
          verdict: 'holds',
          bound,
          met: true,
          reason: `registered point check: ${e.id} ${pp(e.estimate)} < ${c.than} ${pp(than.estimate)}`,
        };
      return {
        verdict: 'not detected',
        bound,
        met: false,
        reason: `registered point check: ${e.id} ${pp(e.estimate)} ≥ ${c.than} ${pp(than.estimate)}`,
      };
    }
  }
}

export function verdictFor(c: Criterion, ctx: VerdictContext): Verdict {
  const base = { criterion: c.id, estimand: c.estimand, question: c.question ?? null, role: c.role, rule: c.rule };
  // an estimand restricted to a task (a suite's <id>@<task>) that competence excluded: excluded, like a pooled one
  // whose every cell was
  const task = ctx.protocol.estimands.find((e) => e.id === c.estimand)?.task;
  const taskExcluded = task === undefined ? [] : exclusionGates(ctx.gates).filter((g) => g.failing.includes(task));
  if (taskExcluded.length > 0) {
    return {
      ...base,
      verdict: 'excluded',
      because: taskExcluded.map((g) => `gate ${g.gate}`),
      registeredRuleMet: null,
      reason: `task ${task} failed competence: excluded from the analysis`,
    };
  }
  if (everythingExcluded(ctx.gates, ctx.tasks)) {
    const because = exclusionGates(ctx.gates).map((g) => `gate ${g.gate}`);
    return {
      ...base,
      verdict: 'excluded',
      because,
      registeredRuleMet: null,
      reason: 'every cell failed competence: excluded from the analysis',
    };
  }
  const deps = [
    c.estimand,
    ...(c.rule === 'lower-bound-above' ? (c.aboveUpperBoundOf ?? []) : []),
    ...(c.rule === 'point-below' ? [c.than] : []),
  ];
  const because = [
    ...new Set(
      deps.flatMap((id) =>
        invalidBecause(estimandOf(ctx, id, `criteria.${c.id}`), ctx.gates).map((r) =>
          id === c.estimand ? r : `${id}: ${r}`,
        ),
      ),
    ),
  ];
  if (because.length > 0) {
    return {
      ...base,
      verdict: 'invalid',
      because,
      registeredRuleMet: null,
      reason: `number withheld: ${because.join('; ')}`,
    };
  }
  const routed = route(c, estimandOf(ctx, c.estimand, `criteria.${c.id}`) as AvailableEstimand, ctx);
  if (ctx.goNoGo.status !== 'confirmatory') {
    const down = [
      ...ctx.goNoGo.rules.filter((r) => !r.passed).map((r) => `go/no-go ${r.rule} (${r.subject})`),
      ...ctx.goNoGo.descriptiveGates.map((g) => `gate ${g}`),
    ];
    return {
      ...base,
      verdict: 'descriptive',
      because: down,
      bound: routed.bound,
      registeredRuleMet: null,
      reason: `campaign ${ctx.goNoGo.status}: ${down.join('; ')}; reported without a verdict`,
    };
  }
  const qualified = deps.flatMap((id) => qualificationsOf(estimandOf(ctx, id, `criteria.${c.id}`), ctx.gates));
  return {
    ...base,
    verdict: routed.verdict,
    bound: routed.bound,
    registeredRuleMet: routed.met,
    reason:
      qualified.length === 0 ? routed.reason : `${routed.reason} — QUALIFIED: ${[...new Set(qualified)].join('; ')}`,
  };
}

export function verdicts(ctx: VerdictContext): Verdict[] {
  return ctx.protocol.criteria.map((c) => verdictFor(c, ctx));
}
