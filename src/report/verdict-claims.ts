/**
 * The report's verdict table: each criterion's registered claim in plain words (src/protocol/claim-words.ts,
 * from the frozen protocol), whether its rule was met, the verdict word, and the bound it routed on
 * beside the margin — so a reader sees what was claimed and what the word answers.
 */
import { claimText } from '../protocol/index.js';
import type { Adjudication, Verdict } from '../adjudication/index.js';
import type { Criterion, Protocol } from '../protocol/index.js';
import { pValue, signedPp } from './text-table.js';
import { frozenPowerText } from './context.js';

const ppText = (x: number): string => `${signedPp(x)} pp`;
const intervalText = (lo: number, hi: number): string => `[${signedPp(lo)}, ${signedPp(hi)}] pp`;

/** The registered claim of one criterion in words (src/adjudication/verdict-words.ts, shared with the terminal). */
export { claimText };

/** "yes" / "no" / "—" (withheld or downgraded: no rule was judged). */
export function metText(v: Verdict): string {
  return v.registeredRuleMet === null ? '—' : v.registeredRuleMet ? 'yes' : 'no';
}

/** The bound beside the margin (or the p beside α), with the bound's label. */
export function boundBesideMargin(v: Verdict, c: Criterion | undefined): string {
  if (v.verdict === 'invalid' || v.verdict === 'excluded') return 'withheld';
  const b = v.bound;
  if (b === null) return '—';
  if (b.routedOn === 'test') return `p = ${pValue(b.p ?? 1)} vs α = ${b.threshold}; ${intervalText(b.lower, b.upper)}`;
  if (b.routedOn === 'point') return `estimate ${ppText(b.estimate)} vs ${ppText(b.threshold)}`;
  const margin = c !== undefined && 'margin' in c ? c.margin : b.threshold;
  const m = c?.rule === 'equivalence' ? `±${(100 * margin).toFixed(2)} pp` : ppText(margin);
  const comp =
    b.companions.length > 0
      ? `; holds needs LB > ${ppText(b.threshold)} (${b.companions.map((x) => `UB ${x.estimand} ${ppText(x.upper)}`).join(', ')})`
      : '';
  return `${intervalText(b.lower, b.upper)} vs margin ${m}${comp} (${b.label})`;
}

export function verdictRows(a: Adjudication, protocol: Protocol): { header: string[]; rows: string[][] } {
  const byId = new Map(protocol.criteria.map((c) => [c.id, c]));
  return {
    header: [
      'criterion',
      'question',
      'role',
      'registered claim',
      'met',
      'verdict',
      'bound beside the margin',
      'reason',
      'frozen power analysis',
    ],
    rows: a.verdicts.map((v) => {
      const c = byId.get(v.criterion);
      return [
        v.criterion,
        v.question ?? '—',
        v.role,
        c ? claimText(c) : `${v.estimand} (${v.rule})`,
        metText(v),
        v.verdict,
        boundBesideMargin(v, c),
        v.reason,
        frozenPowerText(protocol, v.estimand),
      ];
    }),
  };
}
