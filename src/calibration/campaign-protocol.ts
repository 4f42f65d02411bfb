/**
 * The protocol of one campaign-level calibration unit: the suite's registered template (its SHA-256
 * checked against `campaigns.template.sha256`) with exactly four fields substituted —
 *   id                 `<suite id>-<design id>-band-<i>` (also the unit id)
 *   checkpoint         path, file and sha256 of the design's checkpoint (from the suite's checkpoints list)
 *   seeds.bands        the band's seeds, one range, the same for every task of the template
 *   n                  seeds per band
 *   simulator.executionNoise   a noisy design's registered execution noise (only when the design has one)
 * — and nothing else. A design may register its own template (`designs[i].template`, checked the same way). The
 * derived text is validated by src/protocol (parseProtocol) before it is written; its protocol and plan hashes
 * are deterministic (no clock, no path enters them).
 *
 * The template must register the criterion the suite names (`campaigns.criterion`), deciding on a θ
 * estimand by `lower-bound-above`: its verdict word is the detection (campaign-designs.ts).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { ImepError, sha256Hex } from '../core/index.js';
import { buildPlan, parseProtocol, type Protocol } from '../protocol/index.js';
import type { LoadedSuite } from './load-suite.js';
import type { CampaignDesign, Campaigns, SuiteCheckpoint } from './suite-schema.js';

export interface CampaignTemplate {
  readonly file: string;
  readonly sha256: string;
  /** The template as plain data (YAML → JS), the base every derived protocol copies. */
  readonly data: Record<string, unknown>;
  readonly protocol: Protocol;
  readonly criterion: {
    readonly id: string;
    readonly estimand: string;
    readonly rule: string;
    readonly method: string;
  };
}

export interface DerivedProtocol {
  readonly id: string;
  readonly text: string;
  readonly protocol: Protocol;
  readonly protocolHash: string;
  readonly planHash: string;
  readonly seeds: readonly [number, number];
}

const bad = (file: string, field: string, message: string, hint: string): ImepError =>
  new ImepError('E_PROTOCOL_INVALID', message, { file, field, hint });

/**
 * Reads and checks a template the suite registers: `campaigns.template` by default, or a design's own
 * (`ref`, registered at `field`, e.g. campaigns.designs[2].template).
 */
export async function loadCampaignTemplate(
  loaded: LoadedSuite,
  root: string,
  ref?: { readonly file: string; readonly sha256: string },
  field = 'campaigns.template',
): Promise<CampaignTemplate> {
  const c = { ...(loaded.suite.campaigns as Campaigns) };
  if (ref !== undefined) c.template = ref;
  const path = resolve(root, c.template.file);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new ImepError('E_IO', `cannot read the campaign template ${c.template.file}: ${(e as Error).message}`, {
      file: loaded.file,
      field: `${field}.file`,
      hint: 'run from the repository root, or fix the path',
    });
  }
  const sha256 = sha256Hex(bytes);
  if (sha256 !== c.template.sha256) {
    throw bad(
      loaded.file,
      `${field}.sha256`,
      `${c.template.file} has SHA-256 ${sha256}, the suite registers ${c.template.sha256}`,
      'the template is registered: restore it, or register the new file’s sha256sum (a changed template is a new suite)',
    );
  }
  const text = bytes.toString('utf8');
  const protocol = parseProtocol(text, c.template.file).protocol;
  const criterion = protocol.criteria.find((x) => x.id === c.criterion);
  if (criterion === undefined) {
    throw bad(
      loaded.file,
      'campaigns.criterion',
      `the template ${c.template.file} registers no criterion '${c.criterion}'`,
      `use one of: ${protocol.criteria.map((x) => x.id).join(', ') || '(none)'}`,
    );
  }
  const estimand = protocol.estimands.find((e) => e.id === criterion.estimand);
  if (criterion.rule !== 'lower-bound-above' || estimand?.kind !== 'theta') {
    throw bad(
      loaded.file,
      'campaigns.criterion',
      `criterion ${criterion.id} is '${criterion.rule}' on a ${estimand?.kind ?? 'missing'} estimand; detection needs a lower bound on θ`,
      'register { estimand: <theta>, rule: lower-bound-above, margin: 0, method: conditional-exact } in the template',
    );
  }
  const data = parseDocument(text).toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
  return {
    file: c.template.file,
    sha256,
    data,
    protocol,
    criterion: { id: criterion.id, estimand: criterion.estimand, rule: criterion.rule, method: criterion.method },
  };
}

/** Seeds of campaign band i (inclusive range) at `n` seeds per band. */
export function campaignBandSeeds(c: Pick<Campaigns, 'bands'>, n: number, band: number): readonly [number, number] {
  const start = c.bands.start + band * n;
  return [start, start + n - 1];
}

/** The template with id, checkpoint, seed band and n substituted, validated by src/protocol. */
export function deriveProtocol(
  template: CampaignTemplate,
  suiteId: string,
  design: CampaignDesign,
  checkpoint: SuiteCheckpoint,
  n: number,
  seeds: readonly [number, number],
  band: number,
): DerivedProtocol {
  const id = `${suiteId}-${design.id}-band-${band}`;
  const data = structuredClone(template.data);
  const seedsBlock = (data['seeds'] ?? {}) as Record<string, unknown>;
  data['id'] = id;
  data['checkpoint'] = {
    ...((data['checkpoint'] ?? {}) as Record<string, unknown>),
    path: checkpoint.path,
    file: checkpoint.file,
    sha256: checkpoint.sha256,
  };
  data['seeds'] = { ...seedsBlock, bands: [{ start: seeds[0], end: seeds[1] }] };
  data['n'] = n;
  if (design.executionNoise !== undefined)
    data['simulator'] = {
      ...((data['simulator'] ?? {}) as Record<string, unknown>),
      executionNoise: { ...design.executionNoise },
    };
  const noise = design.executionNoise === undefined ? '' : ', simulator.executionNoise';
  const text = `# derived by imep calibrate from ${template.file} (sha256 ${template.sha256}): id, checkpoint, seeds.bands, n${noise} substituted\n${stringify(data, { lineWidth: 0 })}`;
  const parsed = parseProtocol(text, `${id}.yaml`);
  return {
    id,
    text,
    protocol: parsed.protocol,
    protocolHash: parsed.hash,
    planHash: buildPlan(parsed.protocol).planHash,
    seeds,
  };
}
