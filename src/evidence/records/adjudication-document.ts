/**
 * The adjudication document (`adjudication/NNN/adjudication.json`, kind `imep.adjudication-result`): the typed model
 * the adjudicator writes and the cross-check and the report read. One object per sealed unit, computed only from the
 * frozen protocol.json and the sealed rows; it holds no timestamps, so a regeneration of the same unit reproduces its
 * bytes exactly. Its sections: adjudication-estimands.ts, adjudication-sections.ts, adjudication-verdicts.ts; the
 * adjudicator's types (src/adjudication/types.ts) are these schemas' z.infer, made deeply read-only.
 *
 * Versions. `version` is a literal per document version; `readAdjudication` is the one entry every reader goes
 * through, and it branches on the version. Version 1 is the only one so far. When the document changes, add
 * `AdjudicationDocumentV2Schema`, keep V1, and make `readAdjudication` migrate a v1 document to the newest shape
 * on read (the migration goes there, nowhere else); a version newer than this imep knows is refused with a hint to
 * upgrade, never misread. Exported as JSON Schema to schemas/adjudication.schema.json (records/json-schemas.ts).
 */
import { z } from 'zod';
import { ImepError } from '../../core/index.js';
import { EstimandResultSchema } from './adjudication-estimands.js';
import {
  AmendmentListingSchema,
  ConditionSummarySchema,
  GateResultSchema,
  GoNoGoResultSchema,
  HolmFamilyResultSchema,
  ProtocolAmendmentListingSchema,
  QuestionResultSchema,
} from './adjudication-sections.js';
import { VerdictSchema } from './adjudication-verdicts.js';
import { parseJsonText, parseRecordText } from './json-text.js';

export const ADJUDICATION_KIND = 'imep.adjudication-result';
export const ADJUDICATION_VERSION = 1;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase SHA-256 hex digest');

export const AdjudicationDocumentV1Schema = z.strictObject({
  kind: z.literal(ADJUDICATION_KIND),
  version: z.literal(ADJUDICATION_VERSION),
  /** The frozen adjudicator's identity (src/adjudication/types.ts ADJUDICATOR). */
  adjudicator: z.strictObject({ name: z.string(), version: z.number().int() }),
  unit: z.strictObject({ id: z.string(), sealRoot: sha256, sealSha256: sha256 }),
  provenance: z.strictObject({
    protocolId: z.string(),
    protocolHash: sha256,
    planHash: z.string(),
    precommitSha256: sha256,
    rowsSha256: sha256,
    rowCount: z.number().int().nonnegative(),
    code: z.strictObject({
      gitCommit: z.string().nullable(),
      dirty: z.boolean().nullable(),
      packageVersion: z.string(),
    }),
    checkpointHashes: z.record(z.string(), z.string()),
    packageVersions: z.record(z.string(), z.string()),
    nodeVersion: z.string(),
    prng: z.strictObject({ name: z.string(), version: z.number().int() }),
  }),
  operator: z.strictObject({ id: z.string(), source: z.string() }),
  /** The operators who ran the formal run's conditions. */
  ranBy: z.array(z.string()),
  sameOperatorOverride: z.strictObject({ by: z.string(), reason: z.string(), ranBy: z.array(z.string()) }).nullable(),
  design: z.strictObject({
    registeredAttempts: z.array(z.number().int().positive()),
    tasks: z.array(z.string()),
    excludedTasks: z.array(z.string()),
    waves: z.array(z.strictObject({ id: z.number().int(), anchor: z.string(), conditions: z.array(z.string()) })),
  }),
  conditions: z.array(ConditionSummarySchema),
  gates: z.array(GateResultSchema),
  estimands: z.array(EstimandResultSchema),
  holm: z.array(HolmFamilyResultSchema),
  goNoGo: GoNoGoResultSchema,
  verdicts: z.array(VerdictSchema),
  questions: z.array(QuestionResultSchema),
  amendments: z.strictObject({
    /** The unit's amendment log as it stood when adjudicated. */
    log: z.array(AmendmentListingSchema),
    /** The protocol's own amendment history (protocol `amendments`). */
    protocol: z.array(ProtocolAmendmentListingSchema),
  }),
});

/** The newest document version's schema (what the adjudicator writes and `readAdjudication` returns). */
export const AdjudicationDocumentSchema = AdjudicationDocumentV1Schema;

/** A parsed JSON value, deeply read-only (the adjudicator's types: built once, never changed). */
export type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

export type AdjudicationDocument = DeepReadonly<z.infer<typeof AdjudicationDocumentSchema>>;

const HEADER = z.looseObject({ kind: z.literal(ADJUDICATION_KIND), version: z.number().int() });

/**
 * The adjudication document in `value` (parsed JSON) as the newest version's type, or an ImepError naming `where`
 * (the file) and the first field that does not fit: E_USAGE for a version this imep does not know (upgrade imep),
 * E_INTERNAL for a document that is not an IMEP adjudication or does not match its version's schema. Version 1
 * needs no migration; a future version's migration of older documents goes here, branching on `version`.
 */
export function readAdjudication(value: unknown, where: string): AdjudicationDocument {
  const header = HEADER.safeParse(value);
  if (!header.success) {
    throw new ImepError('E_INTERNAL', `${where} is not an IMEP adjudication document (${firstIssue(header.error)})`, {
      file: where,
      hint: `an adjudication document has kind '${ADJUDICATION_KIND}' and a version; regenerate it with \`imep campaign adjudicate\``,
    });
  }
  const { version } = header.data;
  switch (version) {
    case 1:
      return parseV1(value, where);
    default:
      throw new ImepError(
        'E_USAGE',
        `${where} is adjudication document version ${version}; this imep reads version ${ADJUDICATION_VERSION}`,
        { file: where, field: 'version', hint: 'upgrade imep to read this adjudication' },
      );
  }
}

/** Where a value departs from the adjudication document schema: its field path (dot-separated) and zod's message. */
export interface AdjudicationSchemaIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * Every place `value` departs from the schema of its document version ([] when `readAdjudication` would accept it):
 * for a reader that reports each departure and goes on (the cross-check records them as disagreements) rather than
 * stopping at the first.
 */
export function adjudicationSchemaIssues(value: unknown): readonly AdjudicationSchemaIssue[] {
  const header = HEADER.safeParse(value);
  if (!header.success) return issuesOf(header.error);
  if (header.data.version !== ADJUDICATION_VERSION) {
    return [
      { path: 'version', message: `version ${header.data.version}; this imep reads version ${ADJUDICATION_VERSION}` },
    ];
  }
  const r = AdjudicationDocumentV1Schema.safeParse(value);
  return r.success ? [] : issuesOf(r.error);
}

function issuesOf(error: z.ZodError): AdjudicationSchemaIssue[] {
  return error.issues.map((i) => ({ path: i.path.length > 0 ? i.path.join('.') : '(root)', message: i.message }));
}

/** `readAdjudication` on the JSON text of adjudication.json (bytes already read, verified against their hash). */
export function readAdjudicationText(text: string, where: string): AdjudicationDocument {
  return readAdjudication(parseJsonText(text, where), where);
}

/**
 * What a regeneration needs from a stored document of ANY adjudicator or document version — who wrote it and how
 * many amendments it lists — read leniently, so that a document this imep cannot read in full still gets the
 * "written by another adjudicator" answer (src/adjudication/adjudicate.ts reproduceAdjudication).
 */
const StoredAdjudicationHeaderSchema = z.looseObject({
  adjudicator: z.looseObject({ name: z.string(), version: z.number() }).optional(),
  amendments: z.looseObject({ log: z.array(z.unknown()).optional() }).optional(),
});

export function readAdjudicationHeader(
  text: string,
  where: string,
): {
  readonly adjudicator: { readonly name: string; readonly version: number } | undefined;
  readonly listedAmendments: number;
} {
  const header = parseRecordText(StoredAdjudicationHeaderSchema, text, where);
  return { adjudicator: header.adjudicator, listedAmendments: header.amendments?.log?.length ?? 0 };
}

/**
 * A type guard rather than zod's output, so a reader gets the very object it parsed — its key order is the file's
 * (zod rebuilds objects in schema order) — and what it renders from the document cannot change with the schema. The
 * schema has no defaults or transforms: the accepted value and zod's output hold the same fields and values.
 */
function isDocumentV1(value: unknown): value is z.infer<typeof AdjudicationDocumentV1Schema> {
  return AdjudicationDocumentV1Schema.safeParse(value).success;
}

function parseV1(value: unknown, where: string): AdjudicationDocument {
  if (isDocumentV1(value)) return value;
  const issues = AdjudicationDocumentV1Schema.safeParse(value).error?.issues ?? [];
  const issue = issues[0];
  throw new ImepError(
    'E_INTERNAL',
    `${where} does not match the adjudication document schema: ${describeIssue(issue)}`,
    {
      file: where,
      ...(issue !== undefined && issue.path.length > 0 ? { field: issue.path.join('.') } : {}),
      hint: 'it was not written by this version of the IMEP adjudicator; regenerate it with `imep campaign adjudicate`',
    },
  );
}

function firstIssue(error: z.ZodError): string {
  return describeIssue(error.issues[0]);
}

function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue === undefined) return 'invalid';
  return `at ${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`;
}
