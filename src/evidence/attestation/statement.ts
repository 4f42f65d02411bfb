import { z } from 'zod';
import { claimText, type Criterion } from '../../protocol/index.js';
import { VerdictSchema } from '../records/adjudication-verdicts.js';

/**
 * The in-toto Statement v1 (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md) a unit carries
 * for each stage (seal, each adjudication, closeout), in a DSSE envelope (src/signing/dsse.ts):
 *
 *   { _type: "https://in-toto.io/Statement/v1",
 *     subject: [{ name: <the stage's manifest file, e.g. "seal.json">, digest: { sha256: <of its bytes> } }],
 *     predicateType: "https://imep.dev/attestation/unit-stage/v1",
 *     predicate: { unitId, stage, protocolHash, merkle: { scheme, root }, sealRoot, verdicts: [...] } }
 *
 * `stage` is 'sealed', 'adjudicated' or 'closed'; `merkle` the root the stage's manifest binds (the seal's for the
 * seal and each adjudication, the closeout's for the closeout); `verdicts` one entry per criterion (empty before the
 * adjudication): { criterion, estimand, verdict, claim, bound } — the verdict word, the registered claim in words,
 * and the bound it routed on ({ interval, estimate, lower, upper, threshold }; null when withheld or not formed).
 */

export const IN_TOTO_STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const IMEP_PREDICATE_TYPE = 'https://imep.dev/attestation/unit-stage/v1';
export const ATTESTATION_STAGES = ['sealed', 'adjudicated', 'closed'] as const;
export type AttestationStage = (typeof ATTESTATION_STAGES)[number];

export interface VerdictSummary {
  readonly criterion: string;
  readonly estimand: string | null;
  readonly verdict: string;
  readonly claim: string | null;
  readonly bound: {
    readonly interval: string;
    readonly estimate: number;
    readonly lower: number;
    readonly upper: number;
    readonly threshold: number;
  } | null;
}

export interface StagePredicate {
  readonly unitId: string;
  readonly stage: AttestationStage;
  readonly protocolHash: string;
  readonly merkle: { readonly scheme: string; readonly root: string };
  readonly sealRoot: string;
  readonly verdicts: readonly VerdictSummary[];
}

export interface InTotoStatement {
  readonly _type: typeof IN_TOTO_STATEMENT_TYPE;
  readonly subject: readonly { readonly name: string; readonly digest: { readonly sha256: string } }[];
  readonly predicateType: typeof IMEP_PREDICATE_TYPE;
  readonly predicate: StagePredicate;
}

export function stageStatement(manifest: { name: string; sha256: string }, predicate: StagePredicate): InTotoStatement {
  return {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: [{ name: manifest.name, digest: { sha256: manifest.sha256 } }],
    predicateType: IMEP_PREDICATE_TYPE,
    predicate,
  };
}

const BriefVerdictSchema = z.looseObject({ criterion: z.string(), verdict: z.string() });

/** Summaries of an adjudication document's verdicts (full schema), or of a record's brief `{criterion, verdict}` list. */
export function summarizeVerdicts(verdicts: readonly unknown[], criteria: readonly Criterion[] = []): VerdictSummary[] {
  const out: VerdictSummary[] = [];
  // the claim in the words the terminal and the report use (src/protocol/claim-words.ts), from the frozen criterion
  const claimOf = (id: string, bounded: boolean): string | null => {
    const c = bounded ? criteria.find((x) => x.id === id) : undefined;
    return c === undefined ? null : claimText(c);
  };
  for (const v of verdicts) {
    const full = VerdictSchema.safeParse(v);
    if (full.success) {
      const f = full.data;
      const b = f.bound ?? null;
      out.push({
        criterion: f.criterion,
        estimand: f.estimand,
        verdict: f.verdict,
        claim: claimOf(f.criterion, b !== null),
        bound:
          b === null
            ? null
            : { interval: b.interval, estimate: b.estimate, lower: b.lower, upper: b.upper, threshold: b.threshold },
      });
      continue;
    }
    const brief = BriefVerdictSchema.safeParse(v);
    if (brief.success)
      out.push({
        criterion: brief.data.criterion,
        estimand: null,
        verdict: brief.data.verdict,
        claim: null,
        bound: null,
      });
  }
  return out;
}
