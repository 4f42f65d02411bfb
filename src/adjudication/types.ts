/**
 * The adjudication result (`adjudication.json`, kind `imep.adjudication-result`, version 1): the typed
 * model every other adjudication file, the cross-check and the report read. One object per sealed unit,
 * computed only from the frozen protocol.json and the sealed rows; it holds no timestamps, so a
 * regeneration of the same unit reproduces its bytes exactly.
 *
 * Conventions (src/stats): b = reference succeeds, intervention fails; c the reverse;
 * D = (b − c)/n (positive: the intervention lowers success); ρ = (b + c)/n; θ = ρ_T − ρ_S = (b′ − c′)/n
 * on the flip indicators; θ̄ the task-weighted θ; G = Acc_O − Acc_N. Rates are proportions (0.1 = 10 pp).
 */
import type { BoundMethod, EstimandKind, Gate } from '../protocol/index.js';
import type { Verdict } from './verdict-types.js';

export const ADJUDICATION_KIND = 'imep.adjudication-result';
export const ADJUDICATION_VERSION = 1;
/**
 * The frozen adjudicator's identity; bump the version whenever any number or rule could change.
 * v2 (issues #31): a bootstrap or score verdict on θ̄ and companion floors stands only when an exact bound gives the
 * same word; the informative-removal and blocked-reads validity checks run on every protocol.
 */
export const ADJUDICATOR = { name: 'imep-adjudicator', version: 2 } as const;
export { ADJUDICATION_FILE } from '../evidence/index.js';

export type Readout = 'success' | 'decision';

/** How a cohort lost or kept its units (reported for every estimand). */
export interface CohortSummary {
  readonly wave: number;
  /** Units with a row in every listed condition (registered attempts, competent tasks). */
  readonly paired: number;
  /** Units present in some but not all listed conditions (e.g. a condition run at a smaller n). */
  readonly unpaired: number;
  /**
   * Units that left the contrast because a row was 'removed' (fail-closed rule): by failure code, by the condition
   * whose row was removed (a unit removed in two conditions counts in both), and the first message of each code.
   */
  readonly removed: {
    readonly total: number;
    readonly byCode: Readonly<Record<string, number>>;
    readonly byCondition: Readonly<Record<string, number>>;
    readonly reasons: Readonly<Record<string, string>>;
  };
  /** The population the estimand covers, in words (units kept and removed, per condition and why). */
  readonly population: string;
  /** Units kept in the denominator with an unresolved outcome ('failed' rows, unobservable readouts). */
  readonly unresolved: number;
  /** Units resolved in every listed condition (the n of the exact statistics). */
  readonly resolved: number;
  readonly excludedTasks: readonly string[];
}

export interface BootstrapInfo {
  readonly replicates: number;
  readonly seed: number | string;
  readonly prng: { readonly name: string; readonly version: number };
  readonly resampling: 'unit' | 'task-stratified' | 'cluster';
  readonly quantileRule: 'hyndman-fan-7';
}

/** One interval on one estimand, labelled at the coverage of the quantity bounded. */
export interface Interval {
  /** `<method>/a<α>` for α-methods, `<method>/l<level>` for level-methods. */
  readonly id: string;
  readonly method: BoundMethod;
  readonly lower: number;
  readonly upper: number;
  /** α of each one-sided component (exact Clopper–Pearson family), else null. */
  readonly alphaPerComponent: number | null;
  /** Level of the two-sided interval (null for the α-methods: see the labels). */
  readonly level: number | null;
  /** Label of the interval [lower, upper]. */
  readonly label: string;
  /** Label of each bound used alone (e.g. "≥90% (Bonferroni, one-sided bound)"). */
  readonly boundLabel: string;
  /** A conditional bound (θ given b′ + c′), never an unconditional interval. */
  readonly conditional: boolean;
  /** The bound carries no information (e.g. b′ + c′ = 0). */
  readonly degenerate: boolean;
  /**
   * With unresolved units: the same interval over the two extreme fillings of the unresolved outcomes
   * ([min lower, max upper]); verdicts route on it. Null when every unit is resolved.
   */
  readonly envelope: { readonly lower: number; readonly upper: number } | null;
  readonly bootstrap: BootstrapInfo | null;
}

export interface TestResult {
  /** e.g. `mcnemar-exact/two-sided`, `mcnemar-exact/greater` (on b, c; on b′, c′ for θ). */
  readonly id: string;
  readonly p: number;
}

export interface TaskTheta {
  readonly task: string;
  readonly n: number;
  readonly bPrime: number;
  readonly cPrime: number;
  readonly theta: number | null;
  readonly weight: number;
}

export interface EstimandConditions {
  readonly reference?: string;
  readonly intervention?: string;
  readonly target?: string;
  readonly sham?: string;
  readonly oracle?: string;
  readonly none?: string;
  readonly condition?: string;
}

interface EstimandCommon {
  readonly id: string;
  readonly kind: EstimandKind;
  readonly readout: Readout;
  readonly conditions: EstimandConditions;
  readonly cohort: CohortSummary;
}

export interface UnavailableEstimand extends EstimandCommon {
  readonly status: 'unavailable';
  /** Conditions marked unavailable (failed conformance within their repair budget). */
  readonly unavailable: readonly string[];
  /** Why there is no number (an unavailable condition, no resolved unit, a task without units…). */
  readonly reason: string;
}

export interface Counts {
  readonly n: number;
  readonly b?: number;
  readonly c?: number;
  readonly bPrime?: number;
  readonly cPrime?: number;
  readonly flipsT?: number;
  readonly flipsS?: number;
  readonly successes?: number;
}

export interface AvailableEstimand extends EstimandCommon {
  readonly status: 'available';
  readonly counts: Counts;
  readonly estimate: number;
  readonly intervals: readonly Interval[];
  readonly tests: readonly TestResult[];
  /** Identification bounds over the unresolved outcomes (not a confidence interval); null when none. */
  readonly identification: { readonly lower: number; readonly upper: number; readonly label: string } | null;
  /** θ̄ only: the per-task θ_t and normalised weights. */
  readonly perTask: readonly TaskTheta[] | null;
}

export type EstimandResult = UnavailableEstimand | AvailableEstimand;

/**
 * The validity checks every protocol runs (protocol `validity`), reported as gates with ids 'informative-removal' and
 * 'blocked-reads' — hyphenated, so no registered gate (an identifier: letters, digits, _) can take them.
 */
export type ValidityCheckKind = 'informative-removal' | 'blocked-reads';

export interface GateResult {
  readonly gate: string;
  readonly kind: Gate['kind'] | ValidityCheckKind;
  readonly hard: boolean;
  readonly onFail: Gate['onFail'];
  readonly passed: boolean;
  /** False when the sealed rows cannot show the gate's evidence (then `passed` is false). */
  readonly evaluable: boolean;
  readonly observed: Readonly<Record<string, unknown>>;
  readonly expected: Readonly<Record<string, unknown>>;
  readonly detail: string;
  /** The conditions (or, for competence, the tasks) the failure is attributed to. */
  readonly failing: readonly string[];
}

export interface ConditionSummary {
  /** `<condition>@w<wave>`. */
  readonly id: string;
  readonly condition: string;
  readonly wave: number;
  readonly kind: string;
  readonly anchor: boolean;
  readonly rows: {
    readonly total: number;
    readonly ok: number;
    readonly failed: number;
    readonly removed: number;
    readonly unavailable: number;
  };
  /** Success on the registered attempts (resolved rows), with Wilson and Clopper–Pearson 95%. */
  readonly success: {
    readonly successes: number;
    readonly n: number;
    readonly rate: number;
    readonly wilson95: { readonly lower: number; readonly upper: number };
    readonly cp95: { readonly lower: number; readonly upper: number };
  } | null;
  /** Against the wave's anchor (success readout). */
  readonly vsAnchor: {
    readonly anchor: string;
    readonly n: number;
    readonly b: number;
    readonly c: number;
    readonly D: number;
    readonly rho: number;
    /** Two-sided Clopper–Pearson 95% on ρ (the figure's interval). */
    readonly rhoCp95: { readonly lower: number; readonly upper: number };
    /** Clopper–Pearson bounds on ρ, each one-sided 95% (α = 0.05): the retrospective Q3/Q4 rules use them. */
    readonly rhoCpOneSided95: { readonly lower: number; readonly upper: number };
  } | null;
  /** Substituting conditions: units whose every decision query was covered. */
  readonly coverage: { readonly covered: number; readonly units: number; readonly rate: number } | null;
}

export interface HolmMember {
  readonly estimand: string;
  readonly status: 'available' | 'unavailable' | 'invalid';
  readonly p: number | null;
  readonly adjusted: number | null;
  /** adjusted < the family's α (the p-below rule); null when unavailable or invalid. */
  readonly rejected: boolean | null;
}

export interface HolmFamilyResult {
  readonly id: string;
  readonly alpha: number;
  readonly test: 'mcnemar-exact-two-sided' | 'mcnemar-exact-one-sided';
  readonly repairBudget: number;
  readonly members: readonly HolmMember[];
}

export interface GoNoGoRuleResult {
  readonly rule: string;
  readonly subject: string;
  readonly passed: boolean;
  readonly observed: number | null;
  readonly expected: number;
  readonly outcome: 'descriptive' | 'abort';
  readonly detail: string;
}

export interface GoNoGoResult {
  readonly status: 'confirmatory' | 'descriptive' | 'aborted';
  readonly rules: readonly GoNoGoRuleResult[];
  /** Hard gates with onFail 'descriptive' that failed. */
  readonly descriptiveGates: readonly string[];
}

export interface RetrospectiveReading {
  /** `<rule>:<estimand or condition>`. */
  readonly id: string;
  readonly rule: string;
  readonly verdict: 'holds' | 'not detected' | 'unresolved' | 'invalid' | 'not applicable';
  readonly lower: number | null;
  readonly floor: number | null;
  readonly reason: string;
}

export interface QuestionResult {
  readonly question: 'Q1' | 'Q2' | 'Q3' | 'Q4';
  /** The registered criteria of the question (primary role), with their verdict words. */
  readonly registered: readonly { readonly criterion: string; readonly verdict: string }[];
  readonly verdict: 'holds' | 'not detected' | 'unresolved' | 'invalid' | 'excluded' | 'descriptive' | 'not registered';
  readonly reason: string;
  /** The paper's retrospective (post hoc) readings; never a registered verdict. */
  readonly retrospective: readonly RetrospectiveReading[];
}

export interface AmendmentListing {
  readonly id: string;
  readonly at: string;
  readonly classification: string;
  readonly stateAtAmendment: string;
  readonly affects: readonly string[];
  readonly text: string;
}

export interface ProtocolAmendmentListing {
  readonly id: string;
  readonly date: string;
  readonly stage: string;
  readonly summary: string;
}

export interface Adjudication {
  readonly kind: typeof ADJUDICATION_KIND;
  readonly version: typeof ADJUDICATION_VERSION;
  readonly adjudicator: { readonly name: string; readonly version: number };
  readonly unit: { readonly id: string; readonly sealRoot: string; readonly sealSha256: string };
  readonly provenance: {
    readonly protocolId: string;
    readonly protocolHash: string;
    readonly planHash: string;
    readonly precommitSha256: string;
    readonly rowsSha256: string;
    readonly rowCount: number;
    readonly code: {
      readonly gitCommit: string | null;
      readonly dirty: boolean | null;
      readonly packageVersion: string;
    };
    readonly checkpointHashes: Readonly<Record<string, string>>;
    readonly packageVersions: Readonly<Record<string, string>>;
    readonly nodeVersion: string;
    readonly prng: { readonly name: string; readonly version: number };
  };
  readonly operator: { readonly id: string; readonly source: string };
  readonly ranBy: readonly string[];
  readonly sameOperatorOverride: {
    readonly by: string;
    readonly reason: string;
    readonly ranBy: readonly string[];
  } | null;
  readonly design: {
    readonly registeredAttempts: readonly number[];
    readonly tasks: readonly string[];
    readonly excludedTasks: readonly string[];
    readonly waves: readonly { readonly id: number; readonly anchor: string; readonly conditions: readonly string[] }[];
  };
  readonly conditions: readonly ConditionSummary[];
  readonly gates: readonly GateResult[];
  readonly estimands: readonly EstimandResult[];
  readonly holm: readonly HolmFamilyResult[];
  readonly goNoGo: GoNoGoResult;
  readonly verdicts: readonly Verdict[];
  readonly questions: readonly QuestionResult[];
  readonly amendments: {
    readonly log: readonly AmendmentListing[];
    readonly protocol: readonly ProtocolAmendmentListing[];
  };
}
