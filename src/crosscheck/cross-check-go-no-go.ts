/**
 * The cross-check's recomputation of the go/no-go observations (see src/adjudication go-no-go.ts), one function
 * per rule: how many cells the competence gate passed, the reference condition's success rate in its first wave,
 * and otherwise an estimand's discordant pairs (b + c, or b′ + c′).
 */
import { arr, obj, str, type Json, type Obj } from './cross-check-model.js';
import type { XEstimand } from './cross-check-estimands.js';

interface RuleInputs {
  readonly gates: readonly { gate: string; observed: Obj }[];
  readonly conditions: readonly Obj[];
  readonly xs: ReadonlyMap<string, XEstimand>;
}

interface RuleX {
  rule: string;
  subject: string;
  observed: number | null;
}

type RuleFn = (rule: string, r: Obj, inputs: RuleInputs) => RuleX;

const minCompetentCells: RuleFn = (rule, r, { gates }) => {
  const g = gates.find((x) => x.gate === str(r['gate']));
  const tasks = arr(g?.observed['tasks'] as Json).map(obj);
  return { rule, subject: str(r['gate']), observed: tasks.filter((t) => t['passed'] === true).length };
};

const referenceSuccessFloor: RuleFn = (rule, r, { conditions }) => {
  const cond = str(r['condition']);
  const first = conditions.find((c) => str(c['id']).startsWith(`${cond}@w`));
  const s = first?.['success'];
  return { rule, subject: cond, observed: s === null || s === undefined ? null : (obj(s)['rate'] as number) };
};

const discordantPairs: RuleFn = (rule, r, { xs }) => {
  const x = xs.get(str(r['estimand']));
  return { rule, subject: str(r['estimand']), observed: x?.available && x.pair ? x.pair[0] + x.pair[1] : null };
};

/** One observation per rule kind; a rule not listed reads its estimand's discordant pairs, as min-discordant does. */
const RULES: Readonly<Record<string, RuleFn>> = {
  'min-competent-cells': minCompetentCells,
  'reference-success-floor': referenceSuccessFloor,
  'min-discordant': discordantPairs,
};

/** The go/no-go rules the cross-check recomputes. */
export const GO_NO_GO_RULES_X: readonly string[] = Object.keys(RULES);

/** The `goNoGo.rules` section, in protocol order. */
export function expectedGoNoGo(protocol: Obj, inputs: RuleInputs): RuleX[] {
  return arr(protocol['goNoGo'])
    .map(obj)
    .map((r) => {
      const rule = str(r['rule']);
      const observe = Object.hasOwn(RULES, rule) ? RULES[rule]! : discordantPairs;
      return observe(rule, r, inputs);
    });
}
