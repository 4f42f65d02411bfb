/**
 * informative-removal (protocol `validity.informativeRemoval`, run on every protocol): a fail-closed rule (a donor
 * holding too few records: E_DONOR_SHORT) removes a unit's row from a condition, and an estimand reading that
 * condition then covers its KEPT units only. When the removed units differ from the kept ones, the estimand is taken
 * on a selected sub-population. The check compares them where both are observed: for each estimand with removed
 * units (its paired units — a registered row in each of its conditions, competent tasks — split into removed: some
 * row 'removed', and kept), and each condition Y of its wave, the estimand's readout of Y on the removed units against
 * the kept ones (Y's rows resolved, not themselves removed), by Fisher's exact test (two-sided). The estimand's
 * tables are one Holm family (src/stats holm): the estimand is informative when some Holm-adjusted p < the registered
 * α, so a non-informative removal flags it with probability ≤ α (family-wise), not up to k·α as k unadjusted tests
 * would. Each table records its raw p and its Holm-adjusted p (`pAdjusted`, over that estimand's tables).
 *
 * Failing: the informative ESTIMANDS (by id; validity.ts matches them by id, not by condition). onInformative
 * 'withhold' → a hard 'invalid' gate (their numbers are withheld); 'qualify' → a 'warn' gate whose words the
 * verdicts carry (validity.ts qualificationsOf).
 */
import type { Protocol } from '../protocol/index.js';
import { fisherExact, holm } from '../stats/index.js';
import type { EpisodeRow } from '../evidence/index.js';
import { anatomy } from './estimands.js';
import { outcomeOf, type RowIndex } from './joint-cohort.js';
import type { GateResult, Readout } from './types.js';

export const INFORMATIVE_REMOVAL_GATE = 'informative-removal';

interface RemovalTable {
  readonly estimand: string;
  readonly wave: number;
  readonly outcome: string;
  readonly readout: Readout;
  readonly kept: { readonly successes: number; readonly n: number };
  readonly removed: { readonly successes: number; readonly n: number };
  /** Fisher's exact p, two-sided, unadjusted. */
  readonly p: number;
  /** Holm-adjusted p within the estimand's tables (its family: one table per condition of its wave). */
  readonly pAdjusted: number;
  /** pAdjusted < α. */
  readonly informative: boolean;
}

const unitKey = (r: EpisodeRow): string => `${r.task}\u001f${r.seed}\u001f${r.attempt}`;
const pct = (k: number, n: number): string => (n === 0 ? '—' : `${k}/${n}`);

/** The wave of an estimand's contrast (the first running all its conditions), or null when none does. */
function waveOf(protocol: Protocol, conditions: readonly string[]): Protocol['waves'][number] | null {
  return protocol.waves.find((w) => conditions.every((c) => w.conditions.includes(c))) ?? null;
}

export function informativeRemoval(
  protocol: Protocol,
  index: RowIndex,
  excludedTasks: ReadonlySet<string>,
): GateResult {
  const { alpha, onInformative } = protocol.validity.informativeRemoval;
  const usable = (r: EpisodeRow): boolean => !excludedTasks.has(r.task);
  const tables: RemovalTable[] = [];
  const removedCounts: { estimand: string; wave: number; removed: number; kept: number }[] = [];
  for (const e of protocol.estimands) {
    const { conditions, readout } = anatomy(e);
    const wave = waveOf(protocol, conditions);
    if (wave === null) continue;
    // the estimand's paired units: a registered row in every one of its conditions; removed: any of them 'removed'
    const rowsBy = conditions.map(
      (c) =>
        new Map(
          index
            .registeredRowsOf(wave.id, c)
            .filter((r) => usable(r) && (e.task === undefined || r.task === e.task))
            .map((r) => [unitKey(r), r]),
        ),
    );
    const removedKeys = new Set<string>(),
      keptKeys = new Set<string>();
    for (const k of (rowsBy[0] as Map<string, EpisodeRow>).keys()) {
      const rows = rowsBy.map((m) => m.get(k));
      if (rows.some((r) => r === undefined)) continue;
      (rows.some((r) => r?.status === 'removed') ? removedKeys : keptKeys).add(k);
    }
    if (removedKeys.size === 0) continue;
    removedCounts.push({ estimand: e.id, wave: wave.id, removed: removedKeys.size, kept: keptKeys.size });
    const family: Omit<RemovalTable, 'pAdjusted' | 'informative'>[] = [];
    for (const y of wave.conditions) {
      const kept = { successes: 0, n: 0 },
        removed = { successes: 0, n: 0 };
      for (const r of index.registeredRowsOf(wave.id, y).filter(usable)) {
        const k = unitKey(r);
        const group = removedKeys.has(k) ? removed : keptKeys.has(k) ? kept : null;
        const o = outcomeOf(r, readout);
        if (group === null || o === null) continue;
        group.n++;
        group.successes += o;
      }
      if (kept.n === 0 || removed.n === 0) continue;
      const p = fisherExact(kept.successes, kept.n - kept.successes, removed.successes, removed.n - removed.successes);
      family.push({ estimand: e.id, wave: wave.id, outcome: y, readout, kept, removed, p });
    }
    const adjusted = holm(family.map((t) => t.p));
    family.forEach((t, i) => {
      const pAdjusted = adjusted[i] as number;
      tables.push({ ...t, pAdjusted, informative: pAdjusted < alpha });
    });
  }
  const failing = [...new Set(tables.filter((t) => t.informative).map((t) => t.estimand))];
  const hit = tables.filter((t) => t.informative);
  const familySize = (estimand: string): number => tables.filter((t) => t.estimand === estimand).length;
  const line = (t: RemovalTable): string =>
    `${t.estimand}: ${t.outcome}${t.readout === 'decision' ? ' (decision)' : ''} succeeds ${pct(t.removed.successes, t.removed.n)} on the removed units against ${pct(t.kept.successes, t.kept.n)} on the kept (Fisher p = ${t.p.toPrecision(3)}, Holm-adjusted over ${t.estimand}'s ${familySize(t.estimand)} outcome${familySize(t.estimand) === 1 ? '' : 's'}: ${t.pAdjusted.toPrecision(3)})`;
  const one = failing.length === 1;
  const consequence =
    onInformative === 'withhold'
      ? `${one ? 'its number is' : 'their numbers are'} withheld`
      : `${one ? 'its verdicts are' : 'their verdicts are'} qualified`;
  const detail =
    removedCounts.length === 0
      ? 'no unit was removed: every estimand covers all its paired units'
      : hit.length === 0
        ? `removal not shown informative: ${removedCounts.map((c) => `${c.estimand} ${c.kept} kept, ${c.removed} removed`).join('; ')}; kept and removed units do not differ on any of ${tables.length} outcome${tables.length === 1 ? '' : 's'} (Fisher's exact test, Holm-adjusted within each estimand, α = ${alpha})${tables.length === 0 ? ' — no outcome was observed on both' : ''}`
        : `informative removal: ${hit.map(line).join('; ')} — ${failing.join(', ')} ${one ? 'is' : 'are'} taken on a selected sub-population (the kept units) and ${consequence} (${hit.length} of ${tables.length} outcomes differ at α = ${alpha}, Fisher's exact test, Holm-adjusted within each estimand)`;
  return {
    gate: INFORMATIVE_REMOVAL_GATE,
    kind: 'informative-removal',
    hard: true,
    onFail: onInformative === 'withhold' ? 'invalid' : 'warn',
    passed: failing.length === 0,
    evaluable: true,
    observed: { removed: removedCounts, tables },
    expected: { test: 'fisher-exact/two-sided', multiplicity: 'holm-per-estimand', alpha, onInformative },
    detail,
    failing,
  };
}
