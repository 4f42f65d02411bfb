/**
 * Post-seal records may bind only their own scope (src/evidence/verify/verify-claims.ts): the attacks a review
 * mounted on copies of units — a forged, validly signed adjudication record or closeout that re-claims a
 * sealed file with the hash of changed bytes, artifacts outside the record's own adjudication/NNN/, a
 * closeout that rebinds changed artifacts or amendments — and the empty directories named like records
 * that changed a unit's state without verify seeing them (src/evidence/unit-directories.ts).
 */
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adjudicate,
  assertUnitIntact,
  readAdjudications,
  readSeal,
  readUnitState,
  seal,
  verifyUnit,
  type CloseoutRecord,
  type VerifyResult,
} from '../../src/evidence/index.js';
import { sha256Hex } from '../../src/core/hash.js';
import { buildManifest, merkleRoot } from '../../src/evidence/manifest.js';
import { withSelfHash, writeRecord } from '../../src/evidence/io/record-file.js';
import { listAdjudicationRecords } from '../../src/evidence/unit-state.js';
import { prevLink, signRecord } from '../../src/signing/sign-record.js';
import { imep } from '../campaign/cli-support.js';
import { buildUnit, clock, copyUnit, expectImepError, removeTree, REVIEWER, RUNNER, tempDir } from './helpers.js';

let root: string;
let sealedDir: string;
let adjudicatedDir: string;
let closedDir: string;
let plainSealedDir: string;
let n = 0;

beforeAll(async () => {
  root = await tempDir('imep-claims-');
  sealedDir = join(root, 'sealed');
  adjudicatedDir = join(root, 'adjudicated');
  closedDir = join(root, 'closed');
  plainSealedDir = join(root, 'plain-sealed');
  await buildUnit(sealedDir, 'sealed', { rich: true });
  await buildUnit(adjudicatedDir, 'adjudicated', { rich: true });
  await buildUnit(closedDir, 'closed', { rich: true });
  await buildUnit(plainSealedDir, 'sealed');
});
afterAll(async () => removeTree(root));

/** A writable copy of a template (sealed units are 0444/0555; root ignores that, other users do not). */
async function copyOf(template: string): Promise<string> {
  const dir = join(root, `case-${n++}`);
  await copyUnit(template, dir);
  const walk = async (d: string): Promise<void> => {
    await chmod(d, 0o755);
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(d, e.name));
      else if (e.isFile()) await chmod(join(d, e.name), 0o644);
    }
  };
  await walk(dir);
  return dir;
}

/** Every failed formal row becomes a success — the change the forged records are meant to vouch for. */
async function tamperRows(dir: string): Promise<void> {
  const p = join(dir, 'rows/rows.jsonl');
  const text = await readFile(p, 'utf8');
  const changed = text.replaceAll('"success":false', '"success":true');
  expect(changed).not.toBe(text);
  await writeFile(p, changed);
}

/**
 * Writes adjudication-NNN.json as imep would — self-hashed, signed by the adjudicating operator's own key,
 * chained to seal.json or the previous record — but listing `claimed` (hashed as they now are) as artifacts.
 */
async function forgeAdjudication(
  dir: string,
  number: number,
  claimed: string[],
  over: { number?: number } = {},
): Promise<string> {
  const s = await readSeal(dir);
  const nnn = String(number).padStart(3, '0');
  const previous = number === 1 ? 'seal.json' : `adjudication/adjudication-${String(number - 1).padStart(3, '0')}.json`;
  const body = {
    kind: 'imep.adjudication' as const,
    version: 1 as const,
    unitId: s.unitId,
    number: over.number ?? number,
    at: clock().toISOString(),
    operator: REVIEWER,
    ranBy: [RUNNER.id],
    sameOperatorOverride: null,
    sealRoot: s.merkle.root,
    sealSha256: sha256Hex(await readFile(join(dir, 'seal.json'))),
    supersedes: number === 1 ? null : `adjudication-${String(number - 1).padStart(3, '0')}.json`,
    adjudicator: { name: 'forged' },
    result: { verdict: 'holds' },
    artifacts: await buildManifest(dir, claimed),
  };
  const path = `adjudication/adjudication-${nnn}.json`;
  await mkdir(join(dir, 'adjudication'), { recursive: true });
  await writeRecord(
    join(dir, path),
    withSelfHash(await signRecord(body, { signer: REVIEWER.id, prev: await prevLink(dir, previous), force: true })),
  );
  return path;
}

/** Rewrites closeout.json — signed by the closer's key, chained as imep chains it — with `rebind` re-hashed as they now are. */
async function forgeCloseout(dir: string, rebind: string[], over: Partial<CloseoutRecord> = {}): Promise<string> {
  const c = JSON.parse(await readFile(join(dir, 'closeout.json'), 'utf8')) as CloseoutRecord & {
    signature?: unknown;
    sha256?: string;
  };
  const { signature: _s, sha256: _h, ...body } = c;
  const files = [...body.files.filter((f) => !rebind.includes(f.path)), ...(await buildManifest(dir, rebind))];
  const next = { ...body, ...over, files, merkle: { scheme: 'imep-merkle-v1' as const, root: merkleRoot(files) } };
  const signed = await signRecord(next, {
    signer: c.operator.id,
    prev: await prevLink(dir, `adjudication/${c.adjudication.file}`),
    force: true,
  });
  await writeRecord(join(dir, 'closeout.json'), withSelfHash(signed));
  return next.merkle.root;
}

function issuesOf(r: VerifyResult): { path: string; kind: string; detail: string }[] {
  return r.ok ? [] : r.issues.map((i) => ({ path: i.path, kind: i.kind, detail: i.detail }));
}

describe('a post-seal record cannot re-claim a sealed file', () => {
  it('override.mjs: a signed adjudication listing the changed rows.jsonl as its artifact is refused, naming the record, its field and the path', async () => {
    const dir = await copyOf(sealedDir);
    const sealRoot = (await readSeal(dir)).merkle.root;
    await tamperRows(dir);
    await mkdir(join(dir, 'adjudication/001'), { recursive: true });
    await writeFile(join(dir, 'adjudication/001/adjudication.json'), '{}\n');
    const record = await forgeAdjudication(dir, 1, ['adjudication/001/adjudication.json', 'rows/rows.jsonl']);
    const r = await verifyUnit(dir, { expectedRoot: sealRoot, requireSignatures: true });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.first).toMatchObject({ path: record, kind: 'modified' });
    expect(r.first.detail).toContain("its field 'artifacts' claims rows/rows.jsonl: seal.json binds it");
    // the sealed rows are judged by the seal, not by the forged entry
    expect(issuesOf(r)).toContainEqual(expect.objectContaining({ path: 'rows/rows.jsonl', kind: 'truncated' }));
    const err = await expectImepError(assertUnitIntact(dir), 'E_UNIT_TAMPERED');
    expect(err.file).toBe(join(dir, record));
    expect(err.message).toContain('rows/rows.jsonl');
  });

  it('the same forgery by anyone in an unsigned unit is refused alike', async () => {
    const dir = await copyOf(sealedDir);
    await tamperRows(dir);
    const s = await readSeal(dir);
    const body = {
      kind: 'imep.adjudication',
      version: 1,
      unitId: s.unitId,
      number: 1,
      at: clock().toISOString(),
      operator: REVIEWER,
      ranBy: [RUNNER.id],
      sameOperatorOverride: null,
      sealRoot: s.merkle.root,
      sealSha256: sha256Hex(await readFile(join(dir, 'seal.json'))),
      supersedes: null,
      adjudicator: null,
      result: null,
      artifacts: await buildManifest(dir, ['rows/rows.jsonl']),
    };
    await writeRecord(join(dir, 'adjudication/adjudication-001.json'), withSelfHash(body));
    const r = await verifyUnit(dir);
    expect(r.ok ? null : r.first).toMatchObject({ path: 'adjudication/adjudication-001.json', kind: 'modified' });
  });

  it('forge-closeout.mjs: a signed closeout rebinding the changed rows.jsonl is refused, also against the seal root', async () => {
    const dir = await copyOf(closedDir);
    const sealRoot = (await readSeal(dir)).merkle.root;
    await tamperRows(dir);
    const forgedRoot = await forgeCloseout(dir, ['rows/rows.jsonl']);
    for (const expectedRoot of [sealRoot, forgedRoot, undefined]) {
      const r = await verifyUnit(dir, {
        requireSignatures: true,
        ...(expectedRoot === undefined ? {} : { expectedRoot }),
      });
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.first).toMatchObject({ path: 'closeout.json', kind: 'modified' });
      expect(issuesOf(r)).toContainEqual(
        expect.objectContaining({
          path: 'closeout.json',
          detail: expect.stringContaining("its field 'files' claims rows/rows.jsonl: seal.json binds it"),
        }),
      );
      expect(issuesOf(r)).toContainEqual(expect.objectContaining({ path: 'rows/rows.jsonl', kind: 'truncated' }));
    }
  });

  it('a closeout may bind only seal.json, amendments.jsonl and adjudication/', async () => {
    const dir = await copyOf(closedDir);
    await writeFile(join(dir, 'notes.txt'), 'added after the closeout\n');
    await forgeCloseout(dir, ['notes.txt']);
    const r = await verifyUnit(dir);
    expect(issuesOf(r)).toContainEqual(
      expect.objectContaining({
        path: 'closeout.json',
        kind: 'modified',
        detail: expect.stringContaining(
          "its field 'files' claims notes.txt: a closeout binds only seal.json, amendments.jsonl and adjudication/",
        ),
      }),
    );
    expect(issuesOf(r)).toContainEqual(expect.objectContaining({ path: 'notes.txt', kind: 'stray' }));
  });
});

describe("an adjudication's artifacts lie under its own adjudication/NNN/", () => {
  it("a later record claiming the earlier record's artifact (after changing it) is refused; the earlier record still judges the file", async () => {
    const dir = await copyOf(adjudicatedDir);
    await writeFile(join(dir, 'adjudication/001/report.md'), '# verdict\nholds!!!!!!!\n');
    const record = await forgeAdjudication(dir, 2, ['adjudication/001/report.md']);
    const r = await verifyUnit(dir, { requireSignatures: true });
    expect(issuesOf(r)).toContainEqual(
      expect.objectContaining({
        path: record,
        kind: 'modified',
        detail: expect.stringContaining(
          "its field 'artifacts' claims adjudication/001/report.md: it lies outside adjudication/002/",
        ),
      }),
    );
    expect(issuesOf(r)).toContainEqual(
      expect.objectContaining({ path: 'adjudication/001/report.md', kind: 'modified' }),
    );
  });

  it('artifacts outside adjudication/NNN/ (a file of adjudication/, another number, an unsealed top-level file) are refused and the files stay strays', async () => {
    for (const claimed of ['adjudication/notes.txt', 'adjudication/007/x.csv', 'extra.txt']) {
      const dir = await copyOf(sealedDir);
      await mkdir(join(dir, claimed, '..'), { recursive: true });
      await writeFile(join(dir, claimed), 'x\n');
      const record = await forgeAdjudication(dir, 1, [claimed]);
      const r = await verifyUnit(dir);
      expect(issuesOf(r), claimed).toContainEqual(
        expect.objectContaining({
          path: record,
          kind: 'modified',
          detail: expect.stringContaining(`claims ${claimed}: it lies outside adjudication/001/`),
        }),
      );
      expect(issuesOf(r), claimed).toContainEqual(expect.objectContaining({ path: claimed, kind: 'stray' }));
    }
  });

  it("a record whose number field is not its file name's is refused", async () => {
    const dir = await copyOf(sealedDir);
    const record = await forgeAdjudication(dir, 1, [], { number: 2 });
    const r = await verifyUnit(dir);
    expect(r.ok ? null : r.first).toMatchObject({
      path: record,
      kind: 'modified',
      detail: 'its number field says 2, its file name 001',
    });
  });

  it('after the closeout, each record is still checked against its artifacts: a closeout rebinding a changed artifact is refused', async () => {
    const dir = await copyOf(closedDir);
    await writeFile(join(dir, 'adjudication/001/report.md'), '# verdict\nholds, yes!!\n');
    const forgedRoot = await forgeCloseout(dir, ['adjudication/001/report.md']);
    const r = await verifyUnit(dir, { expectedRoot: forgedRoot, requireSignatures: true });
    expect(r.ok ? null : r.first).toMatchObject({
      path: 'adjudication/001/report.md',
      kind: 'modified',
      detail: 'same size, different SHA-256 from what adjudication/adjudication-001.json artifacts recorded',
    });
  });

  it('after the closeout, the seal still binds the amendments it sealed: a closeout rebinding a rewritten log is refused', async () => {
    const dir = await copyOf(closedDir);
    const p = join(dir, 'amendments.jsonl');
    await writeFile(p, (await readFile(p, 'utf8')).replace('tighten', 'loosen '));
    await forgeCloseout(dir, ['amendments.jsonl']);
    const r = await verifyUnit(dir);
    expect(r.ok ? null : r.first).toMatchObject({
      path: 'amendments.jsonl',
      kind: 'modified',
      detail: 'the amendments bound by the seal were changed',
    });
  });

  it('a closeout whose sealRoot field names another seal is refused', async () => {
    const dir = await copyOf(closedDir);
    await forgeCloseout(dir, [], { sealRoot: 'f'.repeat(64) });
    const r = await verifyUnit(dir);
    expect(r.ok ? null : r.first).toMatchObject({
      path: 'closeout.json',
      kind: 'modified',
      detail: expect.stringContaining('sealSha256/sealRoot'),
    });
  });
});

describe('intact units verify; a closed unit answers to its seal root too', () => {
  it('sealed, adjudicated and closed units verify', async () => {
    for (const dir of [sealedDir, adjudicatedDir, closedDir, plainSealedDir])
      expect((await verifyUnit(dir, { requireSignatures: true })).ok, dir).toBe(true);
    const adj = await verifyUnit(adjudicatedDir);
    expect(adj.ok && adj.pending).toEqual(['adjudication/001/report.md', 'adjudication/adjudication-001.json']);
  });

  it('--expected-root: the seal root of a closed unit matches (and says so); the closeout root too; anything else is a root mismatch naming closeout.json', async () => {
    const sealRoot = (await readSeal(closedDir)).merkle.root;
    const closed = await verifyUnit(closedDir);
    if (!closed.ok) throw new Error('closed template does not verify');
    const bySeal = await verifyUnit(closedDir, { expectedRoot: sealRoot });
    expect(bySeal).toMatchObject({ ok: true, scope: 'closeout', root: closed.root, sealRoot, rootMatched: 'seal' });
    expect(await verifyUnit(closedDir, { expectedRoot: closed.root })).toMatchObject({
      ok: true,
      rootMatched: 'closeout',
    });
    expect(await verifyUnit(sealedDir, { expectedRoot: (await readSeal(sealedDir)).merkle.root })).toMatchObject({
      ok: true,
      scope: 'seal',
      rootMatched: 'seal',
    });
    const wrong = await verifyUnit(closedDir, { expectedRoot: 'a'.repeat(64) });
    expect(wrong.ok ? null : wrong.first).toMatchObject({
      path: 'closeout.json',
      kind: 'root-mismatch',
      detail: `root mismatch: expected ${'a'.repeat(64)}; the unit's closeout root is ${closed.root} and the root of the seal it binds ${sealRoot}`,
    });
    // a root is 64 hex digits: anything else is refused as a usage error before the unit is read
    await expectImepError(verifyUnit(closedDir, { expectedRoot: closed.root.slice(0, 12) }), 'E_USAGE');
    expect(await verifyUnit(closedDir, { expectedRoot: closed.root.toUpperCase() })).toMatchObject({
      ok: true,
      rootMatched: 'closeout',
    });
  });

  it('the CLI says which root matched (the built CLI, dist/)', async () => {
    const sealRoot = (await readSeal(closedDir)).merkle.root;
    const r = await imep(['campaign', 'verify', closedDir, '--expected-root', sealRoot], root);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`; the expected root is the seal root ${sealRoot} (the closeout binds seal.json)`);
    const bad = await imep(['campaign', 'verify', closedDir, '--expected-root', 'b'.repeat(64)], root);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain(`closeout.json: root-mismatch (root mismatch: expected ${'b'.repeat(64)}`);
    expect(bad.stderr).not.toContain('restore the unit');
    for (const notRoot of ['b'.repeat(12), 'z'.repeat(64), `${'b'.repeat(64)}0`]) {
      const usage = await imep(['campaign', 'verify', closedDir, '--expected-root', notRoot], root);
      expect(usage.code, notRoot).toBe(2);
      expect(usage.stderr).toContain('--expected-root');
      expect(usage.stderr).toContain('is not a Merkle root (64 hex digits expected)');
    }
  });

  it('a closed unit whose closeout does not bind seal.json does not answer to the seal root', async () => {
    const dir = await copyOf(closedDir);
    const c = JSON.parse(await readFile(join(dir, 'closeout.json'), 'utf8')) as CloseoutRecord;
    const { signature: _s, sha256: _h, ...body } = c as CloseoutRecord & { signature?: unknown };
    const files = body.files.filter((f) => f.path !== 'seal.json');
    await writeRecord(
      join(dir, 'closeout.json'),
      withSelfHash({ ...body, files, merkle: { scheme: 'imep-merkle-v1', root: merkleRoot(files) } }),
    );
    const r = await verifyUnit(dir, { expectedRoot: (await readSeal(dir)).merkle.root });
    expect(r.ok).toBe(false);
    expect(issuesOf(r)).toContainEqual(
      expect.objectContaining({
        path: 'closeout.json',
        kind: 'root-mismatch',
        detail: expect.stringContaining('root mismatch'),
      }),
    );
  });
});

describe('directories', () => {
  it('a sealed unit: an empty directory named like a record is a stray, changes no state, and adjudication refuses naming it', async () => {
    const dir = await copyOf(sealedDir);
    await mkdir(join(dir, 'adjudication/adjudication-001.json'));
    const r = await verifyUnit(dir);
    expect(r.ok ? null : r.first).toMatchObject({
      path: 'adjudication/adjudication-001.json',
      kind: 'stray',
      detail: 'a directory holding no file, not part of the unit layout',
    });
    expect((await readUnitState(dir)).state).toBe('sealed');
    const err = await expectImepError(
      adjudicate(dir, { adjudicator: 'frozen', result: null, operator: REVIEWER }),
      'E_UNIT_TAMPERED',
    );
    expect(err.file).toBe(join(dir, 'adjudication/adjudication-001.json'));
  });

  it('a closed unit: a directory named like a record is a stray and the records read as before (no "the record is a directory")', async () => {
    const dir = await copyOf(closedDir);
    await mkdir(join(dir, 'adjudication/adjudication-002.json'));
    await mkdir(join(dir, 'adjudication/cross-check-002.json'));
    const r = await verifyUnit(dir);
    expect(issuesOf(r).map((i) => `${i.path} ${i.kind}`)).toEqual([
      'adjudication/adjudication-002.json stray',
      'adjudication/cross-check-002.json stray',
    ]);
    expect((await readUnitState(dir)).state).toBe('closed');
    expect(await listAdjudicationRecords(dir)).toEqual({
      adjudications: ['adjudication-001.json'],
      crossChecks: ['cross-check-001.json'],
    });
    expect((await readAdjudications(dir)).length).toBe(1);
  });

  it('closeout.json as a directory or link does not close a unit; verify names it', async () => {
    const d1 = await copyOf(sealedDir);
    await mkdir(join(d1, 'closeout.json'));
    expect((await readUnitState(d1)).state).toBe('sealed');
    const r1 = await verifyUnit(d1);
    expect(r1.ok ? null : r1.first).toMatchObject({ path: 'closeout.json', kind: 'modified' });
    const d2 = await copyOf(sealedDir);
    await symlink(join(closedDir, 'closeout.json'), join(d2, 'closeout.json'));
    await symlink(
      join(closedDir, 'adjudication/adjudication-001.json'),
      join(d2, 'adjudication/adjudication-001.json'),
    );
    expect((await readUnitState(d2)).state).toBe('sealed');
    const r2 = await verifyUnit(d2);
    expect(issuesOf(r2)).toContainEqual(
      expect.objectContaining({ path: 'closeout.json', kind: 'modified', detail: 'replaced by a symbolic link' }),
    );
    expect(issuesOf(r2)).toContainEqual(
      expect.objectContaining({ path: 'adjudication/adjudication-001.json', kind: 'stray' }),
    );
  });

  it("the layout's own empty folders verify; any other empty folder is one stray (the top-most), also a fake run", async () => {
    expect((await verifyUnit(plainSealedDir)).ok).toBe(true); // traces/, probe/, smoke/, adjudication/ are empty there
    const dir = await copyOf(plainSealedDir);
    await mkdir(join(dir, 'new/a/b'), { recursive: true });
    await mkdir(join(dir, 'probe/probe-fake/traces'), { recursive: true });
    await mkdir(join(dir, 'traces/x'));
    const r = await verifyUnit(dir);
    expect(issuesOf(r).map((i) => `${i.path} ${i.kind}`)).toEqual([
      'new stray',
      'probe/probe-fake stray',
      'traces/x stray',
    ]);
  });

  it('a directory emptied by deleting its sealed file reports the file missing, not the folder', async () => {
    const dir = await copyOf(adjudicatedDir);
    const { rm } = await import('node:fs/promises');
    await rm(join(dir, 'adjudication/001/report.md'));
    const r = await verifyUnit(dir);
    expect(issuesOf(r).map((i) => `${i.path} ${i.kind}`)).toEqual(['adjudication/001/report.md missing']);
  });

  it('seal refuses a unit holding an empty folder outside the layout, before writing anything', async () => {
    const dir = join(root, `case-${n++}`);
    await buildUnit(dir, 'run-complete');
    await mkdir(join(dir, 'adjudication/adjudication-001.json'));
    const err = await expectImepError(seal(dir, { operator: RUNNER }), 'E_UNIT_TAMPERED');
    expect(err.file).toBe(join(dir, 'adjudication/adjudication-001.json'));
    expect((await readUnitState(dir)).state).toBe('run-complete');
  });
});
