/**
 * ChainBench results, computed from decisions and replay rows by code (pure; no I/O).
 *
 * Decision level (from a decision table):
 *  - per condition: decision accuracy with an exact Clopper–Pearson 95% CI, on the condition's cohort;
 *  - the chance floor (mean 1/K over the cohort's chains, = 1/K when every chain has the same K) and
 *    whether the no-memory accuracy's CI contains it (non-rejection, not equivalence);
 *  - G = Acc_full − Acc_none on the chains both decided (referenceOnly = #(full right, none wrong) — the
 *    paper's b with full memory as reference — and againstOnly the reverse),
 *    with a seeded chain-bootstrap 95% percentile interval (cluster level, one chain per cluster) and
 *    the Newcombe square-and-add interval beside it;
 *  - the ladder: per C/U/S/T, decisions changed vs the archived full-memory decisions (ρ, exact CI),
 *    decisions correct, and θ = ρ_T − ρ_S with a chain-bootstrap interval, on the chains with both an S and a
 *    T row (ρ_S, ρ_T restated on that set: a rung's own ρ may cover other chains).
 * Replay level (from replay rows): per condition decision accuracy AND task success, reported side by
 * side and never pooled; the execution ceiling SR* = SR_oracle; the paired task-success contrast of every
 * condition against no-memory, Δ = SR_X − SR_N (referenceOnly = #(X succeeds, N fails) — the paper's
 * Appendix-F c —, againstOnly = #(N succeeds, X fails) — its b) with a seeded chain-bootstrap 95% interval; the replay
 * floor (O vs R discordance, exact CI); and the descriptive Acc_X·SR* check.
 * Every Δ bootstrap uses the same seed (`<seed>/delta`), so two conditions with identical per-chain
 * outcomes on the same chains get identical intervals (common random numbers across contrasts).
 */
import { clopperPearson, pairedBootstrap, type BootstrapResult, newcombe, pairedDesign } from '../stats/index.js';
import type { Chain, ChainManifest } from './manifest-schema.js';
import type { DecisionTable } from './decisions.js';
import { LADDER_CONDITIONS } from './ladder.js';
import type { ReplayResult } from './replay.js';

export interface Interval {
  readonly lower: number;
  readonly upper: number;
}

export interface BootstrapInterval extends Interval {
  readonly seed: string;
  readonly replicates: number;
  readonly level: 'cluster';
}

export interface AccuracyRow {
  readonly condition: string;
  readonly label: string;
  readonly cohort: 'all' | 'rewritten';
  readonly n: number;
  readonly correct: number;
  readonly accuracy: number;
  readonly ci: Interval;
  /** Mean 1/K over this condition's chains. */
  readonly chanceFloor: number;
}

export interface PairedGain {
  readonly reference: string;
  readonly against: string;
  readonly n: number;
  /** (referenceOnly − againstOnly)/n = rate(reference) − rate(against). */
  readonly estimate: number;
  /** Chains where the reference is 1 and the comparator 0. */
  readonly referenceOnly: number;
  /** Chains where the comparator is 1 and the reference 0. */
  readonly againstOnly: number;
  readonly bootstrap: BootstrapInterval;
  readonly newcombe: Interval;
}

export interface LadderSummaryRow {
  readonly condition: string;
  readonly n: number;
  readonly changed: number;
  readonly rho: number;
  readonly rhoCi: Interval;
  readonly correct: number;
}

export interface DecisionSummary {
  readonly chains: number;
  readonly rows: readonly AccuracyRow[];
  readonly noMemoryFloor: { readonly floor: number; readonly ci: Interval; readonly contains: boolean } | null;
  readonly G: PairedGain | null;
  readonly ladder: {
    readonly chains: number;
    readonly rows: readonly LadderSummaryRow[];
    /** C decisions identical to the archived full-memory decisions. */
    readonly reproduced: number;
    /**
     * θ = ρ_T − ρ_S on the chains that have both an S and a T row (`chains` of them; a chain whose final drawer
     * is alone of its kind in its K group has no S donor), with ρ_S and ρ_T on that same set — which can
     * differ from the rows' ρ, each taken on its own rung's chains.
     */
    readonly theta: {
      readonly estimate: number;
      readonly bootstrap: BootstrapInterval;
      readonly chains: number;
      readonly rhoS: number;
      readonly rhoT: number;
    } | null;
  } | null;
}

export interface StatsOptions {
  readonly bootstrapSeed?: number | string;
  readonly replicates?: number;
}

const DEFAULT_BOOTSTRAP_SEED = 'chainbench';

function interval(x: readonly [number, number] | readonly number[]): Interval {
  return { lower: x[0] as number, upper: x[1] as number };
}

function cp(x: number, n: number): Interval {
  return n === 0 ? { lower: Number.NaN, upper: Number.NaN } : interval(clopperPearson(x, n));
}

function chanceFloor(chains: readonly Chain[]): number {
  return chains.length === 0 ? Number.NaN : chains.reduce((s, c) => s + 1 / c.K, 0) / chains.length;
}

/** A seeded chain-bootstrap of estimand D(reference, intervention) over per-chain 0/1 outcomes. */
function chainBootstrap(
  chainIds: readonly string[],
  outcomes: Readonly<Record<string, readonly number[]>>,
  estimand: Parameters<typeof pairedBootstrap>[1],
  opts: StatsOptions,
  label: string,
): { result: BootstrapResult; interval: BootstrapInterval } {
  const seed = `${String(opts.bootstrapSeed ?? DEFAULT_BOOTSTRAP_SEED)}/${label}`;
  const replicates = opts.replicates ?? 10_000;
  const design = pairedDesign({ outcomes, clusters: chainIds, unitIds: chainIds });
  const result = pairedBootstrap(design, estimand, { level: 'cluster', seed, replicates });
  const ci = result.intervals[0] as { lower: number; upper: number };
  return { result, interval: { lower: ci.lower, upper: ci.upper, seed, replicates, level: 'cluster' } };
}

/** Paired gain of `reference` over `against` on per-chain 0/1 outcomes (maps chain → 0/1). */
export function pairedGain(
  reference: string,
  against: string,
  ref: ReadonlyMap<string, number>,
  alt: ReadonlyMap<string, number>,
  order: readonly string[],
  opts: StatsOptions,
  label: string,
): PairedGain | null {
  const ids = order.filter((id) => ref.has(id) && alt.has(id));
  if (ids.length === 0) return null;
  const r = ids.map((id) => ref.get(id) as number);
  const a = ids.map((id) => alt.get(id) as number);
  let both = 0,
    b = 0,
    c = 0,
    neither = 0;
  for (let i = 0; i < ids.length; i++) {
    if (r[i] === 1 && a[i] === 1) both++;
    else if (r[i] === 1) b++;
    else if (a[i] === 1) c++;
    else neither++;
  }
  const boot = chainBootstrap(
    ids,
    { ref: r, alt: a },
    { kind: 'D', reference: 'ref', intervention: 'alt' },
    opts,
    label,
  );
  const nc = newcombe({ a: both, b, c, d: neither });
  return {
    reference,
    against,
    n: ids.length,
    estimate: (b - c) / ids.length,
    referenceOnly: b,
    againstOnly: c,
    bootstrap: boot.interval,
    newcombe: interval(nc.interval),
  };
}

export function summarizeDecisions(
  manifest: ChainManifest,
  table: DecisionTable,
  opts: StatsOptions = {},
): DecisionSummary {
  const byId = new Map(manifest.chains.map((c) => [c.id, c]));
  const order = manifest.chains.map((c) => c.id);
  const correctness = new Map<string, Map<string, number>>();
  const rows: AccuracyRow[] = table.conditions.map((cond) => {
    const m = new Map<string, number>();
    const chains: Chain[] = [];
    for (const d of cond.decisions) {
      const chain = byId.get(d.chainId);
      if (chain === undefined) continue;
      chains.push(chain);
      m.set(d.chainId, d.choice === chain.finalFact.drawer ? 1 : 0);
    }
    correctness.set(cond.name, m);
    const correct = [...m.values()].reduce((s, v) => s + v, 0);
    return {
      condition: cond.name,
      label: cond.label,
      cohort: cond.cohort,
      n: m.size,
      correct,
      accuracy: m.size === 0 ? Number.NaN : correct / m.size,
      ci: cp(correct, m.size),
      chanceFloor: chanceFloor(chains),
    };
  });
  const none = rows.find((r) => r.condition === 'no-memory');
  const noMemoryFloor =
    none === undefined || none.n === 0
      ? null
      : {
          floor: none.chanceFloor,
          ci: none.ci,
          contains: none.ci.lower <= none.chanceFloor && none.chanceFloor <= none.ci.upper,
        };
  const full = correctness.get('full-memory');
  const nm = correctness.get('no-memory');
  const G =
    full === undefined || nm === undefined ? null : pairedGain('full-memory', 'no-memory', full, nm, order, opts, 'G');

  let ladder: DecisionSummary['ladder'] = null;
  if (table.ladder !== undefined) {
    const L = table.ladder;
    const ladderRows = LADDER_CONDITIONS.map((cond) => {
      const rs = L.rows[cond];
      const changed = rs.filter((r) => r.changed).length;
      return {
        condition: cond,
        n: rs.length,
        changed,
        rho: rs.length === 0 ? Number.NaN : changed / rs.length,
        rhoCi: cp(changed, rs.length),
        correct: rs.filter((r) => r.correct).length,
      };
    });
    const s = new Map(L.rows.S.map((r) => [r.chainId, r.changed ? 1 : 0]));
    const t = new Map(L.rows.T.map((r) => [r.chainId, r.changed ? 1 : 0]));
    const ids = order.filter((id) => s.has(id) && t.has(id));
    let theta: NonNullable<DecisionSummary['ladder']>['theta'] = null;
    if (ids.length > 0) {
      // Outcome "agrees with the archived decision": the reference agrees everywhere, so the flip of X is "X changed".
      const boot = chainBootstrap(
        ids,
        {
          ref: ids.map(() => 1),
          S: ids.map((id) => 1 - (s.get(id) as number)),
          T: ids.map((id) => 1 - (t.get(id) as number)),
        },
        { kind: 'theta', reference: 'ref', target: 'T', sham: 'S' },
        opts,
        'theta',
      );
      const rhoOf = (m: Map<string, number>): number =>
        ids.reduce((sum, id) => sum + (m.get(id) as number), 0) / ids.length;
      theta = {
        estimate: boot.result.estimate,
        bootstrap: boot.interval,
        chains: ids.length,
        rhoS: rhoOf(s),
        rhoT: rhoOf(t),
      };
    }
    ladder = { chains: L.chains, rows: ladderRows, reproduced: L.rows.C.filter((r) => !r.changed).length, theta };
  }
  return { chains: manifest.chains.length, rows, noMemoryFloor, G, ladder };
}

export interface ReplayConditionSummary {
  readonly condition: string;
  readonly n: number;
  readonly correct: number;
  readonly accuracy: number;
  readonly accuracyCi: Interval;
  readonly executed: number;
  readonly successes: number;
  readonly taskSuccess: number;
  readonly taskSuccessCi: Interval;
  /** Acc_X · SR* (descriptive; assumes correct choices execute at the oracle's rate and wrong ones fail). */
  readonly predictedFromCeiling: number | null;
  readonly predictionInsideCi: boolean | null;
}

export interface ReplaySummary {
  readonly rows: readonly ReplayConditionSummary[];
  /** SR* = SR_oracle, the observed execution ceiling. */
  readonly ceiling: number | null;
  /** Δ = SR_X − SR_N for each X ≠ no-memory (R excluded). */
  readonly contrasts: readonly PairedGain[];
  readonly replayFloor: {
    readonly n: number;
    readonly b: number;
    readonly c: number;
    readonly rho: number;
    readonly ci: Interval;
  } | null;
  readonly verification: ReplayResult['verification'];
}

export function summarizeReplay(replay: ReplayResult, manifest: ChainManifest, opts: StatsOptions = {}): ReplaySummary {
  const order = manifest.chains.map((c) => c.id);
  const success = new Map<string, Map<string, number>>();
  const rows = replay.conditions.map((name) => {
    const rs = replay.rows.filter((r) => r.condition === name);
    success.set(name, new Map(rs.map((r) => [r.chainId, r.success ? 1 : 0])));
    const correct = rs.filter((r) => r.correct).length;
    const successes = rs.filter((r) => r.success).length;
    return {
      condition: name,
      n: rs.length,
      correct,
      accuracy: rs.length === 0 ? Number.NaN : correct / rs.length,
      accuracyCi: cp(correct, rs.length),
      executed: rs.filter((r) => r.executed).length,
      successes,
      taskSuccess: rs.length === 0 ? Number.NaN : successes / rs.length,
      taskSuccessCi: cp(successes, rs.length),
    };
  });
  const oracle = rows.find((r) => r.condition === 'oracle');
  const ceiling = oracle === undefined || oracle.n === 0 ? null : oracle.taskSuccess;
  const withPrediction: ReplayConditionSummary[] = rows.map((r) => {
    if (ceiling === null || r.condition === 'R') return { ...r, predictedFromCeiling: null, predictionInsideCi: null };
    const p = r.accuracy * ceiling;
    return {
      ...r,
      predictedFromCeiling: p,
      predictionInsideCi: r.taskSuccessCi.lower <= p && p <= r.taskSuccessCi.upper,
    };
  });
  const N = success.get('no-memory');
  const contrasts: PairedGain[] = [];
  if (N !== undefined) {
    for (const name of replay.conditions) {
      if (name === 'no-memory' || name === 'R') continue;
      const g = pairedGain(name, 'no-memory', success.get(name) as Map<string, number>, N, order, opts, 'delta');
      if (g !== null) contrasts.push(g);
    }
  }
  const O = success.get('oracle');
  const R = success.get('R');
  let replayFloor: ReplaySummary['replayFloor'] = null;
  if (O !== undefined && R !== undefined) {
    const ids = order.filter((id) => O.has(id) && R.has(id));
    let b = 0,
      c = 0;
    for (const id of ids) {
      const o = O.get(id) as number,
        r = R.get(id) as number;
      if (o > r) b++;
      else if (o < r) c++;
    }
    replayFloor = {
      n: ids.length,
      b,
      c,
      rho: ids.length === 0 ? Number.NaN : (b + c) / ids.length,
      ci: cp(b + c, ids.length),
    };
  }
  return { rows: withPrediction, ceiling, contrasts, replayFloor, verification: replay.verification };
}
