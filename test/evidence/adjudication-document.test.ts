/**
 * The adjudication document's schema (src/evidence/records/adjudication-document.ts) against what the adjudicator
 * writes: every shipped protocol on a lite simulator (protocols/*.yaml, `simulator: { kind: lite }`) is run through
 * the seal at a smaller n (a copy of the file: seed bands cut to N_SMALL seeds, n = N_SMALL, the bootstrap at fewer
 * replicates, the frozen power table dropped, which no adjudication reads — the document's shape is the same), then
 * adjudicated, cross-checked and read for the report; `readAdjudication` accepts each document and the schema's
 * sections are all exercised (estimands available and unavailable, every verdict word the runs give). Then a
 * document with an unknown version, a missing field, an extra field or a bound on an 'invalid' verdict is refused
 * with one error naming the file and the field.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runCampaign } from '../../src/campaign/campaign.js';
import { adjudicateStep, crossCheckStep } from '../../src/app/pipeline.js';
import { isImepError } from '../../src/core/errors.js';
import { canonicalPrettyJson } from '../../src/core/index.js';
import { crossCheckAdjudication } from '../../src/crosscheck/index.js';
import { ADJUDICATION_VERSION, readAdjudication, type AdjudicationDocument } from '../../src/evidence/index.js';
import { loadReportInputs } from '../../src/report/load.js';
import { ROOT } from '../campaign/helpers.js';
import { removeTree, tempDir } from './helpers.js';

const N_SMALL = 12;

/** The shipped protocols whose simulator is a lite one. */
const LITE = readdirSync(join(ROOT, 'protocols'))
  .filter((n) => n.endsWith('.yaml'))
  .filter((n) => {
    const doc = parseYaml(readFileSync(join(ROOT, 'protocols', n), 'utf8')) as { simulator?: { kind?: string } };
    return doc.simulator?.kind === 'lite';
  })
  .sort();

/** The file at a smaller n: same conditions, gates, estimands, criteria and waves. */
function smaller(text: string): string {
  return text
    .replace(/\{ start: (\d+), end: \d+ \}/g, (_m, s: string) => `{ start: ${s}, end: ${Number(s) + N_SMALL - 1} }`)
    .replace(/^n: \d+/m, `n: ${N_SMALL}`)
    .replace(/replicates: \d+/g, 'replicates: 200')
    .replace(/^mde:\n(?:[ #].*\n|\n)*/m, '');
}

let root: string;
const docs = new Map<string, { unit: string; file: string; raw: unknown; doc: AdjudicationDocument }>();

beforeAll(async () => {
  root = await tempDir('imep-adjudication-document-');
  for (const name of LITE) {
    const file = join(root, name);
    await writeFile(file, smaller(await readFile(join(ROOT, 'protocols', name), 'utf8')));
    const unit = await runCampaign(file, {
      campaignsDir: join(root, name.replace(/\.yaml$/, '')),
      root: ROOT,
      progress: null,
      say: () => undefined,
      operator: { id: 'runner-session', source: 'explicit' },
      through: 'seal',
    });
    const reviewer = { id: 'review-session', source: 'explicit' } as const;
    const a = await adjudicateStep(unit, { operator: reviewer });
    await crossCheckStep(unit, { operator: reviewer });
    const path = join(unit, a.file);
    const raw: unknown = JSON.parse(await readFile(path, 'utf8'));
    docs.set(name, { unit, file: path, raw, doc: readAdjudication(raw, path) });
    // the report reads the same document through the schema
    const inputs = await loadReportInputs(unit);
    expect(JSON.stringify(inputs.adjudication)).toBe(JSON.stringify(raw));
  }
}, 900_000);
afterAll(async () => removeTree(root));

describe('the adjudication document schema', () => {
  it('finds the shipped lite protocols', () => {
    expect(LITE).toEqual(
      expect.arrayContaining([
        'remembercolor-substitution.yaml',
        'shellgame-blackout.yaml',
        'shellgame-donor-swap.yaml',
      ]),
    );
    expect(LITE.length).toBeGreaterThanOrEqual(5);
  });

  it('validates every shipped lite protocol’s adjudication document, unchanged', () => {
    expect([...docs.keys()]).toEqual(LITE);
    for (const { raw, doc } of docs.values()) {
      expect(doc).toEqual(raw);
      // the very object read (the file's key order, which the report renders from), not a copy rebuilt by zod
      expect(JSON.stringify(doc)).toBe(JSON.stringify(raw));
      expect(doc.version).toBe(ADJUDICATION_VERSION);
    }
  });

  it('the documents exercise the schema’s unions', () => {
    const all = [...docs.values()].map((d) => d.doc);
    const statuses = new Set(all.flatMap((d) => d.estimands.map((e) => e.status)));
    expect(statuses).toEqual(new Set(['available', 'unavailable']));
    const kinds = new Set(all.flatMap((d) => d.estimands.map((e) => e.kind)));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['D', 'rho', 'successRate', 'theta', 'thetaBar']));
    const words = new Set(all.flatMap((d) => d.verdicts.map((v) => v.verdict)));
    expect([...words].sort()).toEqual(expect.arrayContaining(['excluded', 'holds', 'not detected', 'unresolved']));
    expect(all.every((d) => d.gates.some((g) => g.kind === 'informative-removal'))).toBe(true);
  });
});

describe('the cross-check reads the document through the schema', () => {
  it('each departure from the schema is a disagreement named by its field; the genuine document has none', async () => {
    const { unit, file, raw } = docs.get('shellgame-blackout.yaml')!;
    const sources = {
      protocolText: await readFile(join(unit, 'protocol.json'), 'utf8'),
      rowsText: await readFile(join(unit, 'rows/rows.jsonl'), 'utf8'),
      sealText: await readFile(join(unit, 'seal.json'), 'utf8'),
    };
    expect(crossCheckAdjudication(sources, await readFile(file, 'utf8')).disagreements).toEqual([]);
    const forged = structuredClone(raw) as Record<string, Record<string, unknown>>;
    delete forged['goNoGo']!['status'];
    forged['unit']!['extra'] = 'x';
    const found = crossCheckAdjudication(sources, canonicalPrettyJson(forged)).disagreements;
    expect(found.filter((d) => d.note.startsWith('does not match the adjudication document schema'))).toEqual([
      {
        path: 'goNoGo.status',
        adjudication: null,
        recomputed: null,
        note: expect.stringMatching(/^does not match the adjudication document schema: /),
      },
      {
        path: 'unit',
        adjudication: null,
        recomputed: null,
        note: 'does not match the adjudication document schema: Unrecognized key: "extra"',
      },
    ]);
  });
});

describe('readAdjudication refuses what is not a version-1 document', () => {
  const sample = (): { file: string; raw: Record<string, unknown> } => {
    const first = docs.values().next().value!;
    return { file: first.file, raw: structuredClone(first.raw) as Record<string, unknown> };
  };
  const refusal = (value: unknown, file: string): { code: string; message: string; file?: string; field?: string } => {
    try {
      readAdjudication(value, file);
    } catch (e) {
      if (!isImepError(e)) throw e;
      return { code: e.code, message: e.message, file: e.file, field: e.field };
    }
    throw new Error('accepted');
  };

  it('an unknown (newer) version: E_USAGE naming the file, upgrade imep', () => {
    const { file, raw } = sample();
    const r = refusal({ ...raw, version: 2 }, file);
    expect(r).toMatchObject({ code: 'E_USAGE', file, field: 'version' });
    expect(r.message).toBe(`${file} is adjudication document version 2; this imep reads version 1`);
  });

  it('a missing field: E_INTERNAL naming the file and the field', () => {
    const { file, raw } = sample();
    const goNoGo = raw['goNoGo'] as Record<string, unknown>;
    delete goNoGo['status'];
    const r = refusal(raw, file);
    expect(r).toMatchObject({ code: 'E_INTERNAL', file, field: 'goNoGo.status' });
    expect(r.message).toMatch(
      /^.*adjudication\.json does not match the adjudication document schema: at goNoGo\.status: /,
    );
  });

  it('an extra field and a number on a withheld verdict are refused too', () => {
    const { file, raw } = sample();
    expect(refusal({ ...raw, extra: 1 }, file)).toMatchObject({ code: 'E_INTERNAL', file });
    const verdicts = raw['verdicts'] as Record<string, unknown>[];
    const bound = {
      interval: 'x',
      label: 'x',
      estimate: 0,
      lower: 0,
      upper: 0,
      threshold: 0,
      companions: [],
      p: null,
      routedOn: 'bound',
    };
    verdicts[0] = { ...verdicts[0], verdict: 'invalid', because: ['path'], bound };
    expect(refusal(raw, file)).toMatchObject({ code: 'E_INTERNAL', file, field: 'verdicts.0.bound' });
  });

  it('not an adjudication at all: E_INTERNAL naming the file', () => {
    expect(refusal({ kind: 'imep.seal', version: 1 }, 'x/seal.json')).toMatchObject({
      code: 'E_INTERNAL',
      file: 'x/seal.json',
    });
    expect(refusal([], 'x/a.json').message).toMatch(/^x\/a\.json is not an IMEP adjudication document/);
  });
});
