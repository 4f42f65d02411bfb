import { appendFile, mkdir, readFile, rename, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adjudicate,
  assertUnitIntact,
  readSeal,
  readUnitState,
  seal,
  unitPaths,
  verifyUnit,
  type TamperKind,
  type VerifyResult,
} from '../../src/evidence/index.js';
import { listEntries } from '../../src/evidence/manifest.js';
import { buildUnit, copyUnit, expectImepError, removeTree, REVIEWER, RUNNER, tempDir } from './helpers.js';

let root: string;
let sealedDir: string;
let closedDir: string;
let closedRoot: string;
let caseNo = 0;

beforeAll(async () => {
  root = await tempDir('imep-seal-');
  sealedDir = join(root, 'sealed');
  closedDir = join(root, 'closed');
  await buildUnit(sealedDir, 'sealed', { rich: true });
  await buildUnit(closedDir, 'closed', { rich: true });
  const v = await verifyUnit(closedDir);
  if (!v.ok) throw new Error('closed template does not verify');
  closedRoot = v.root;
});
afterAll(async () => removeTree(root));

type Mutation = { name: string; kind: TamperKind; apply: (dir: string, rel: string) => Promise<void> };

const flip = (where: 'first' | 'middle' | 'last'): Mutation => ({
  name: `flip ${where} byte`,
  kind: 'modified',
  apply: async (dir, rel) => {
    const p = join(dir, rel);
    const b = await readFile(p);
    const i = where === 'first' ? 0 : where === 'last' ? b.length - 1 : Math.floor(b.length / 2);
    b[i] = b[i]! ^ 0x01;
    await writeFile(p, b);
  },
});

const MUTATIONS: Mutation[] = [
  flip('first'),
  flip('middle'),
  flip('last'),
  {
    name: 'truncate',
    kind: 'truncated',
    apply: async (d, r) => truncate(join(d, r), Math.floor((await stat(join(d, r))).size / 2)),
  },
  { name: 'append', kind: 'appended', apply: (d, r) => appendFile(join(d, r), '{"seq":99}\n') },
  { name: 'rename', kind: 'renamed', apply: (d, r) => rename(join(d, r), join(d, `${r}.moved`)) },
  { name: 'move', kind: 'renamed', apply: (d, r) => rename(join(d, r), join(d, `moved-${r.replaceAll('/', '_')}`)) },
  { name: 'delete', kind: 'missing', apply: (d, r) => rm(join(d, r)) },
];

/**
 * Record files whose damage can only be reported as 'modified' or 'missing' (no trusted size/hash for them): seal.json,
 * closeout.json, and the stock tools' attestations (src/evidence/verify/verify-attestations.ts), which sign records
 * written after any manifest that could bind them.
 */
const SELF_BOUND = new Set(['seal.json', 'closeout.json']);
const selfBound = (rel: string): boolean => SELF_BOUND.has(rel) || rel.startsWith('attestations/');

async function tamperMatrix(
  template: string,
  opts: { expectedRoot?: string },
): Promise<{ tried: number; detected: number; failures: string[] }> {
  const files = (await listEntries(template)).map((e) => e.path);
  let tried = 0;
  let detected = 0;
  const failures: string[] = [];
  const check = (label: string, r: VerifyResult, path: string, kinds: readonly TamperKind[]): void => {
    tried++;
    if (!r.ok && r.first.path === path && kinds.includes(r.first.kind)) detected++;
    else failures.push(`${label}: got ${r.ok ? 'ok' : `${r.first.path} ${r.first.kind} (${r.first.detail})`}`);
  };
  for (const rel of files) {
    for (const m of MUTATIONS) {
      const dir = join(root, `case-${caseNo++}`);
      await copyUnit(template, dir);
      await m.apply(dir, rel);
      const kinds: TamperKind[] =
        selfBound(rel) && !(rel === 'seal.json' && opts.expectedRoot) ? ['modified', 'missing'] : [m.kind];
      // a moved closeout is named as moved; a deleted one, against the cited closeout root, is a root mismatch
      if (rel === 'closeout.json')
        kinds.push(
          m.kind === 'renamed' ? 'renamed' : 'missing',
          ...(opts.expectedRoot && m.kind === 'missing' ? (['root-mismatch'] as const) : []),
        );
      check(`${rel} / ${m.name}`, await verifyUnit(dir, opts), rel, kinds);
      await removeTree(dir);
    }
  }
  const strays = [
    'stray.txt',
    'rows/extra.jsonl',
    'traces/.hidden',
    'new-dir/deep/x.bin',
    'adjudication/notes.txt',
    'smoke/smoke-2/rows.jsonl',
  ];
  for (const rel of strays) {
    const dir = join(root, `case-${caseNo++}`);
    await copyUnit(template, dir);
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), 'not evidence\n');
    check(`stray ${rel}`, await verifyUnit(dir, opts), rel, ['stray']);
    await removeTree(dir);
  }
  const dir = join(root, `case-${caseNo++}`);
  await copyUnit(template, dir);
  await symlink('/etc/hostname', join(dir, 'link'));
  check('stray symlink', await verifyUnit(dir, opts), 'link', ['stray']);
  await removeTree(dir);
  return { tried, detected, failures };
}

describe('seal and verify', () => {
  it('a freshly sealed unit verifies, with every file read-only and listed', async () => {
    const r = await verifyUnit(sealedDir);
    expect(r.ok).toBe(true);
    const record = await readSeal(sealedDir);
    const listed = record.files.map((f) => f.path);
    expect(listed).toContain('unit.json');
    expect(listed).toContain('rows/rows.jsonl');
    expect(listed).toContain('rows/timings.jsonl');
    expect(listed).toContain('failed-runs/formal-failed/rows/rows.jsonl');
    expect(listed).toContain('smoke/smoke-1/rows.jsonl');
    expect(listed).not.toContain('seal.json');
    expect(record.amendments.count).toBe(1);
    expect(((await stat(unitPaths(sealedDir).rows)).mode & 0o777).toString(8)).toBe('444');
    expect(((await stat(unitPaths(sealedDir).rowsDir)).mode & 0o777).toString(8)).toBe('555');
    if (r.ok) expect(r.root).toBe(record.merkle.root);
  });

  it('sealed unit: every tamper of every file is detected and named (flip ×3, truncate, append, rename, move, delete, strays)', async () => {
    const { tried, detected, failures } = await tamperMatrix(sealedDir, {});
    console.log(`sealed unit tamper matrix: detected ${detected}/${tried}`);
    expect(failures).toEqual([]);
    expect(detected).toBe(tried);
  });

  it('closed unit (verified against its cited root): every tamper is detected and named', async () => {
    const { tried, detected, failures } = await tamperMatrix(closedDir, { expectedRoot: closedRoot });
    console.log(`closed unit tamper matrix: detected ${detected}/${tried}`);
    expect(failures).toEqual([]);
    expect(detected).toBe(tried);
  });

  it('assertUnitIntact throws E_UNIT_TAMPERED naming the first bad file in sorted order', async () => {
    const dir = join(root, 'two-bad');
    await copyUnit(sealedDir, dir);
    await appendFile(join(dir, 'rows/rows.jsonl'), 'x');
    await appendFile(join(dir, 'plan.json'), 'x');
    const err = await expectImepError(assertUnitIntact(dir), 'E_UNIT_TAMPERED');
    expect(err.file).toBe(join(dir, 'plan.json'));
    expect(err.message).toContain('(+1 more)');
    const r = await verifyUnit(dir);
    expect(r.ok ? [] : r.issues.map((i) => i.path)).toEqual(['plan.json', 'rows/rows.jsonl']);
  });

  it('verify before the seal is out of order', async () => {
    const dir = join(root, 'unsealed');
    await buildUnit(dir, 'run-complete');
    await expectImepError(verifyUnit(dir), 'E_OUT_OF_ORDER');
  });

  it('a seal interrupted between its two writes can be run again', async () => {
    const dir = join(root, 'interrupted-seal');
    await copyUnit(sealedDir, dir);
    await rm(join(dir, 'seal.json'));
    const r = await verifyUnit(dir);
    expect(r.ok ? null : r.first).toMatchObject({ path: 'seal.json', kind: 'missing' });
    expect((await readUnitState(dir)).sealInterrupted).toBe(true);
    await seal(dir, { operator: RUNNER });
    expect((await verifyUnit(dir)).ok).toBe(true);
  });

  it('adjudication records before closeout: self-hashed, artifacts bound, strays and gaps caught', async () => {
    const base = join(root, 'adjudicated');
    await buildUnit(base, 'adjudicated', { rich: true });
    await adjudicate(base, { adjudicator: 'frozen', result: { verdict: 'holds' }, operator: REVIEWER });
    const ok = await verifyUnit(base);
    expect(ok.ok && ok.pending).toEqual([
      'adjudication/001/report.md',
      'adjudication/adjudication-001.json',
      'adjudication/adjudication-002.json',
    ]);
    const cases: [string, (d: string) => Promise<void>, string, TamperKind][] = [
      [
        'edit record',
        (d) => appendFile(join(d, 'adjudication/adjudication-002.json'), ' '),
        'adjudication/adjudication-002.json',
        'modified',
      ],
      [
        'edit artifact',
        (d) => appendFile(join(d, 'adjudication/001/report.md'), 'x'),
        'adjudication/001/report.md',
        'appended',
      ],
      ['delete artifact', (d) => rm(join(d, 'adjudication/001/report.md')), 'adjudication/001/report.md', 'missing'],
      [
        'delete superseded record',
        (d) => rm(join(d, 'adjudication/adjudication-001.json')),
        'adjudication/adjudication-001.json',
        'missing',
      ],
      [
        'stray artifact',
        (d) => writeFile(join(d, 'adjudication/001/extra.csv'), 'x'),
        'adjudication/001/extra.csv',
        'stray',
      ],
    ];
    for (const [label, apply, path, kind] of cases) {
      const d = join(root, `adj-${caseNo++}`);
      await copyUnit(base, d);
      await apply(d);
      const r = await verifyUnit(d);
      expect(r.ok, label).toBe(false);
      if (!r.ok) expect(r.issues, label).toContainEqual(expect.objectContaining({ path, kind }));
      // Removing record 001 also orphans its artifact folder, which sorts first ('0' < 'a') and is named first.
      if (!r.ok && label !== 'delete superseded record') expect(r.first, label).toMatchObject({ path, kind });
      if (!r.ok && label === 'delete superseded record')
        expect(r.first).toMatchObject({ path: 'adjudication/001/report.md', kind: 'stray' });
      await removeTree(d);
    }
  });
});
