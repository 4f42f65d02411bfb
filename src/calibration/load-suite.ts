/**
 * Reading a calibration suite: YAML → schema → cross-field rules → Suite and its SHA-256 (of its
 * canonical JSON). Every refusal is one ImepError (E_PROTOCOL_INVALID) naming the file, the field and
 * the fix. Checks beyond the schema: design ids unique; every design names a listed checkpoint;
 * n = mde.inputs.n; the frozen analysis is Monte-Carlo with replicates and seed, and its test is the
 * detection rule; the decoder fit band does not meet the campaign bands; the env has a fact field;
 * campaign designs (when present) have ids unique across all designs, name listed checkpoints, run and
 * adjudicate under two different operators, and their bands fit in 32-bit seeds. The template itself is
 * checked when it is read (campaign-protocol.ts).
 */
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { canonicalHash, ImepError } from '../core/index.js';
import { makeLiteEnv } from '../sims/index.js';
import { factsOf, type TaskFacts } from '../runtime/index.js';
import { SuiteSchema, type Suite } from './suite-schema.js';

export interface LoadedSuite {
  readonly file: string;
  readonly suite: Suite;
  readonly hash: string;
}

const bad = (file: string, field: string, message: string, hint: string): ImepError =>
  new ImepError('E_PROTOCOL_INVALID', message, { file, field, hint });

/** Inclusive seed range of band i. */
export function bandSeeds(suite: Pick<Suite, 'bands'>, n: number, band: number): number[] {
  return Array.from({ length: n }, (_, j) => suite.bands.start + band * n + j);
}

export function checkSuite(suite: Suite, file: string): void {
  const ids = new Set<string>();
  suite.designs.forEach((d, i) => {
    if (ids.has(d.id))
      throw bad(file, `designs[${i}].id`, `design id ${d.id} appears twice`, 'give every design its own id');
    ids.add(d.id);
    if (!suite.checkpoints.some((c) => c.name === d.checkpoint)) {
      throw bad(
        file,
        `designs[${i}].checkpoint`,
        `design ${d.id} names checkpoint ${d.checkpoint}, which checkpoints does not list`,
        `use one of: ${suite.checkpoints.map((c) => c.name).join(', ')}`,
      );
    }
  });
  const inputs = suite.mde.inputs;
  if (inputs.n !== suite.n)
    throw bad(
      file,
      'mde.inputs.n',
      `the frozen power analysis is at n = ${inputs.n}, the suite runs n = ${suite.n}`,
      'freeze the analysis at the n the campaigns run',
    );
  if (inputs.method !== 'monte-carlo' || inputs.replicates === undefined || inputs.seed === undefined) {
    throw bad(
      file,
      'mde.inputs.method',
      'the calibration compares observed power with a Monte-Carlo prediction',
      'set method: monte-carlo with replicates and seed',
    );
  }
  if (suite.mde.outputs.length !== inputs.assumedDiscordance.length) {
    throw bad(
      file,
      'mde.outputs',
      `${suite.mde.outputs.length} frozen rows for ${inputs.assumedDiscordance.length} assumed discordance rates`,
      'one output row per assumed discordance, in the same order',
    );
  }
  const maxBands = suite.bands.count;
  const lo = suite.bands.start;
  const hi = suite.bands.start + maxBands * suite.n - 1;
  const f = suite.decoder.fitSeeds;
  if (f.end < f.start)
    throw bad(file, 'decoder.fitSeeds', `fit band ${f.start}–${f.end} is empty`, 'end must be ≥ start');
  if (!(f.end < lo || f.start > hi)) {
    throw bad(
      file,
      'decoder.fitSeeds',
      `fit band ${f.start}–${f.end} meets the campaign bands ${lo}–${hi}`,
      'move the fit band outside the campaign bands',
    );
  }
  if (hi > 0xffffffff)
    throw bad(file, 'bands', `the last campaign seed ${hi} exceeds 2^32 − 1`, 'lower bands.start or bands.count');
  let facts: TaskFacts;
  try {
    facts = suiteFacts(suite);
  } catch (e) {
    throw bad(
      file,
      'env',
      e instanceof Error ? e.message : String(e),
      'use a lite environment id with kwargs it accepts',
    );
  }
  if (facts.factField === null)
    throw bad(
      file,
      'env.id',
      `${suite.env.id} declares no fact for S/T donor swaps`,
      'use ShellGameTouch-lite or a RememberColor-lite task',
    );
  if (suite.planted.targets.length !== suite.decoder.classes) {
    throw bad(
      file,
      'planted.targets',
      `${suite.planted.targets.length} targets for ${suite.decoder.classes} fact values`,
      'one target per fact value',
    );
  }
  if (suite.campaigns !== undefined) checkCampaigns(suite, file, ids);
}

function checkCampaigns(suite: Suite, file: string, ids: Set<string>): void {
  const c = suite.campaigns!;
  c.designs.forEach((d, i) => {
    if (ids.has(d.id))
      throw bad(
        file,
        `campaigns.designs[${i}].id`,
        `design id ${d.id} appears twice`,
        'give every design and campaign design its own id',
      );
    ids.add(d.id);
    if (!suite.checkpoints.some((k) => k.name === d.checkpoint)) {
      throw bad(
        file,
        `campaigns.designs[${i}].checkpoint`,
        `campaign design ${d.id} names checkpoint ${d.checkpoint}, which checkpoints does not list`,
        `add it to checkpoints (name, path, file, sha256) or use one of: ${suite.checkpoints.map((k) => k.name).join(', ')}`,
      );
    }
  });
  if (c.operators.runner === c.operators.adjudicator) {
    throw bad(
      file,
      'campaigns.operators',
      `runner and adjudicator are both '${c.operators.runner}'`,
      'adjudication must come from another operator than the run: give them different ids',
    );
  }
  if (c.quick.campaigns > c.bands.count || c.quick.n * c.quick.campaigns > c.n * c.bands.count) {
    throw bad(
      file,
      'campaigns.quick',
      'the quick design does not fit in the registered campaign bands',
      'lower quick.n or quick.campaigns',
    );
  }
  const last = c.bands.start + Math.max(c.bands.count, ...c.designs.map((d) => d.campaigns ?? 0)) * c.n - 1;
  if (last > 0xffffffff)
    throw bad(
      file,
      'campaigns.bands',
      `the last campaign seed ${last} exceeds 2^32 − 1`,
      'lower campaigns.bands.start or count',
    );
}

export function parseSuite(text: string, file: string): LoadedSuite {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false, logLevel: 'error' });
  if (doc.errors.length > 0) {
    const e = doc.errors[0] as { message: string };
    throw bad(
      file,
      '(yaml)',
      `YAML error: ${e.message.split('\n')[0] ?? e.message}`,
      'fix the YAML syntax (indentation, brackets, quotes, duplicate keys)',
    );
  }
  const parsed = SuiteSchema.safeParse(doc.toJS({ maxAliasCount: 100 }));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.');
    throw bad(
      file,
      field,
      issue?.message ?? 'invalid calibration suite',
      'see src/calibration/suite-schema.ts for the format',
    );
  }
  checkSuite(parsed.data, file);
  return { file, suite: parsed.data, hash: canonicalHash(parsed.data) };
}

export async function loadSuite(file: string): Promise<LoadedSuite> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ImepError('E_IO', `cannot read the calibration suite: ${(e as Error).message}`, {
      file,
      hint: 'pass an existing file with --suite',
    });
  }
  return parseSuite(text, file);
}

/** The facts the suite's lite environment declares (its spec's fact and decision step). */
export function suiteFacts(suite: {
  readonly env: { readonly id: string; readonly kwargs?: Readonly<Record<string, unknown>> | undefined };
}): TaskFacts {
  const env = makeLiteEnv(suite.env.id, { ...(suite.env.kwargs ?? {}) });
  return factsOf(env.spec);
}
