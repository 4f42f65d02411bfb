/**
 * Post-seal records in a signed unit: cross-check records are signed by the cross-checker's key and
 * chained to the adjudication they check (the closeout to the cross-check it relies on); post-seal
 * amendment lines are signed by their authors, chained to seal.json or the line before. Verify refuses
 * the reviewer's forgeries (an unsigned "agrees" cross-check after a genuine "disagrees"; a backdated
 * unsigned amendment) naming the record or line; closeout refuses an adjudication whose listed
 * amendments the log no longer holds. Unsigned units (IMEP_SIGNING=off) are unchanged.
 */
import { appendFile, chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adjudicate,
  amend,
  closeout,
  crossCheck,
  explicitOperator,
  verifyUnit,
  type VerifyResult,
} from '../../src/evidence/index.js';
import { closeoutUnit } from '../../src/app/index.js';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { merkleRoot } from '../../src/evidence/manifest.js';
import { sha256Hex } from '../../src/core/hash.js';
import { withSelfHash, writeRecord } from '../../src/evidence/io/record-file.js';
import { signRecord, SIGNING_ENV } from '../../src/signing/sign-record.js';
import { buildUnit, clock, expectImepError, removeTree, REVIEWER, RUNNER, tempDir } from '../evidence/helpers.js';
import { failed, isolateKeys, readJson, rewrite, unitCopies } from './helpers.js';

const CHECKER = explicitOperator('independent-reviewer');
const PI = explicitOperator('pi@lab');
const XC2 = 'adjudication/cross-check-002.json';

let root: string;
let keys: { dir: string; restore: () => void };
let sealed: string;
let adjudicated: string;

beforeAll(async () => {
  keys = await isolateKeys();
  root = await tempDir('imep-post-seal-sig-');
  sealed = join(root, 'sealed');
  adjudicated = join(root, 'adjudicated');
  await buildUnit(sealed, 'sealed', { rich: true });
  await buildUnit(adjudicated, 'adjudicated');
});
afterAll(async () => {
  keys.restore();
  await removeTree(root);
  await removeTree(join(keys.dir, '..'));
});

const copyOf = unitCopies(() => root);

function ok(r: VerifyResult): void {
  if (!r.ok) throw new Error(`expected the unit to verify: ${r.first.path} ${r.first.kind}: ${r.first.detail}`);
}

/** What forge-xc.mjs does: a self-hashed, unsigned "agrees" cross-check by independent-reviewer. */
async function forgeCrossCheck(
  dir: string,
  nnn: string,
  sign?: { prev: { file: string; sha256: string } },
): Promise<void> {
  const adj = 'adjudication-001.json';
  const body = {
    kind: 'imep.cross-check',
    version: 1,
    unitId: 'unit-under-test',
    number: Number(nnn),
    at: new Date().toISOString(),
    operator: CHECKER,
    adjudicationFile: adj,
    adjudicationSha256: sha256Hex(await readFile(join(dir, 'adjudication', adj))),
    outcome: 'agrees',
    method: 'independent recomputation on a second machine',
    detail: null,
  };
  await chmod(join(dir, 'adjudication'), 0o755);
  await writeRecord(
    join(dir, 'adjudication', `cross-check-${nnn}.json`),
    withSelfHash(sign ? await signRecord(body, { signer: CHECKER.id, prev: sign.prev, force: true }) : body),
  );
}

/** What forge-amend.mjs does: an unsigned, backdated A<n> by pi@lab appended by hand. */
async function forgeAmendment(dir: string): Promise<void> {
  const file = join(dir, 'amendments.jsonl');
  const text = await readFile(file, 'utf8').catch(() => '');
  const lines = text.split('\n').filter((l) => l !== '');
  const a = {
    affects: ['protocol'],
    at: '2026-12-03T12:00:00.000Z',
    author: PI,
    classification: 'after-formal-data',
    id: `A${lines.length + 1}`,
    prevSha256: lines.length === 0 ? null : sha256Hex(lines.at(-1)!),
    stateAtAmendment: 'sealed',
    text: 'Q1 withdrawn by the PI',
  };
  await chmod(dir, 0o755);
  await chmod(file, 0o644).catch(() => undefined);
  await appendFile(file, `${canonicalJson(a)}\n`);
}

describe('cross-check records in a signed unit', () => {
  it('a genuine cross-check is signed by the cross-checker, chained to the adjudication; the closeout is chained to it', async () => {
    const dir = await copyOf(adjudicated);
    await crossCheck(dir, { outcome: 'agrees', method: 'rerun on a second machine', operator: CHECKER, now: clock });
    await closeout(dir, { operator: REVIEWER, now: clock });
    for (const requireSignatures of [false, true]) {
      const r = await verifyUnit(dir, { requireSignatures });
      ok(r);
      expect(r.signatures?.status).toBe('signed');
      expect(r.signatures?.findings.filter((f) => f.finding !== 'identity')).toEqual([]); // identity: keys made by this test process
    }
    const r = await verifyUnit(dir);
    const hashOf = async (rel: string): Promise<string> => sha256Hex(await readFile(join(dir, rel)));
    const bySigner = Object.fromEntries((r.signatures?.signed ?? []).map((s) => [s.path, [s.signer, s.prev]]));
    expect(bySigner['adjudication/cross-check-001.json']).toEqual([
      CHECKER.id,
      { file: 'adjudication/adjudication-001.json', sha256: await hashOf('adjudication/adjudication-001.json') },
    ]);
    expect(bySigner['closeout.json']).toEqual([
      REVIEWER.id,
      { file: 'adjudication/cross-check-001.json', sha256: await hashOf('adjudication/cross-check-001.json') },
    ]);
  });

  it("refuses forge-xc: an unsigned 'agrees' after a genuine 'disagrees' — verify names the record, closeout refuses", async () => {
    const dir = await copyOf(adjudicated);
    await crossCheck(dir, { outcome: 'disagrees', method: 'rerun on a second machine', operator: CHECKER, now: clock });
    await forgeCrossCheck(dir, '002');
    for (const requireSignatures of [false, true]) {
      const r = failed(await verifyUnit(dir, { requireSignatures }));
      const issue = r.issues.find((i) => i.path === XC2);
      expect(issue).toMatchObject({ kind: 'signature', detail: expect.stringContaining('unsigned: is not signed') });
    }
    const e = await expectImepError(closeoutUnit(dir, { operator: REVIEWER, now: clock }), 'E_UNIT_TAMPERED');
    expect(e.message).toContain('is not signed');
    expect(await readFile(join(dir, 'closeout.json')).catch(() => null)).toBeNull();
  });

  it('refuses a cross-check signed but chained to another record, or by a key the store does not hold', async () => {
    const dir = await copyOf(adjudicated);
    await crossCheck(dir, { outcome: 'disagrees', method: 'rerun', operator: CHECKER, now: clock });
    await forgeCrossCheck(dir, '002', {
      prev: { file: 'seal.json', sha256: sha256Hex(await readFile(join(dir, 'seal.json'))) },
    });
    const r = failed(await verifyUnit(dir));
    expect(r.issues.find((i) => i.path === XC2)?.detail).toContain(
      'chain-broken: names seal.json as the previous signed record; the chain has adjudication/adjudication-001.json before it',
    );

    const other = await copyOf(adjudicated);
    await crossCheck(other, { outcome: 'disagrees', method: 'rerun', operator: CHECKER, now: clock });
    await forgeCrossCheck(other, '002');
    const adj = 'adjudication/adjudication-001.json';
    await rewrite(other, XC2, () => undefined, {
      signer: CHECKER.id,
      prev: { file: adj, sha256: sha256Hex(await readFile(join(other, adj))) },
      keysDir: join(root, 'forger-keys'),
    });
    const r2 = await verifyUnit(other);
    expect(r2.ok && r2.trust.untrusted.map((u) => u.paths)).toEqual([[XC2]]);
  });

  it('a genuine cross-check record changed after signing (outcome flipped, self-hash redone) is refused', async () => {
    const dir = await copyOf(adjudicated);
    await crossCheck(dir, { outcome: 'disagrees', method: 'rerun', operator: CHECKER, now: clock });
    await rewrite(dir, 'adjudication/cross-check-001.json', (r) => {
      r['outcome'] = 'agrees';
    });
    const r = failed(await verifyUnit(dir));
    expect(r.issues.find((i) => i.path === 'adjudication/cross-check-001.json')?.detail).toContain('bad-signature');
  });
});

describe('post-seal amendments in a signed unit', () => {
  it('a genuine post-seal amendment is signed by its author and verifies, through adjudication, cross-check and closeout', async () => {
    const dir = await copyOf(sealed);
    await amend(dir, { text: 'Q1 is exploratory', affects: ['questions.Q1'], author: PI, now: clock });
    await amend(dir, { text: 'Q2 too', affects: ['questions.Q2'], author: RUNNER, now: clock });
    const lines = (await readFile(join(dir, 'amendments.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['signature'] === undefined)).toEqual([true, false, false]); // the pre-seal line stays as it was
    expect(lines[1]!['signature'] as { keyOwner: string; prev: { file: string } }).toMatchObject({
      keyOwner: PI.id,
      prev: { file: 'seal.json' },
    });
    expect((lines[2]!['signature'] as { prev: { file: string; sha256: string } }).prev).toEqual({
      file: 'amendments.jsonl#A2',
      sha256: lines[2]!['prevSha256'],
    });
    ok(await verifyUnit(dir, { requireSignatures: true }));
    await adjudicate(dir, {
      adjudicator: { name: 'a' },
      result: { amendments: { log: lines.map((l) => ({ id: l['id'], at: l['at'], text: l['text'] })) } },
      operator: REVIEWER,
      now: clock,
    });
    await crossCheck(dir, { outcome: 'agrees', method: 'rerun', operator: CHECKER, now: clock });
    const c = await closeout(dir, { operator: REVIEWER, now: clock });
    expect(c.amendments.map((a) => a.id)).toEqual(['A1', 'A2', 'A3']);
    ok(await verifyUnit(dir, { requireSignatures: true }));
  });

  it('refuses forge-amend: an unsigned backdated line appended by hand, naming the line', async () => {
    const dir = await copyOf(sealed);
    await forgeAmendment(dir);
    for (const requireSignatures of [false, true]) {
      const r = failed(await verifyUnit(dir, { requireSignatures }));
      const issue = r.issues.find((i) => i.path === 'amendments.jsonl' && i.kind === 'signature');
      expect(issue?.detail).toContain('unsigned: post-seal line 1 (A2 by pi@lab, line 2 of the log) is not signed');
    }
  });

  it('refuses a post-seal line changed after signing, re-signed to another chain, or signed by an unknown key', async () => {
    const dir = await copyOf(sealed);
    await amend(dir, { text: 'Q1 is exploratory', affects: ['questions.Q1'], author: PI, now: clock });
    const file = join(dir, 'amendments.jsonl');
    const original = await readFile(file, 'utf8');
    const lines = original.trim().split('\n');
    const last = JSON.parse(lines[1]!) as Record<string, unknown>;
    const put = async (line: Record<string, unknown>): Promise<void> => {
      await chmod(dir, 0o755);
      await chmod(file, 0o644);
      await writeFile(file, `${lines[0]}\n${canonicalJson(line)}\n`);
    };
    await put({ ...last, text: 'Q1 withdrawn' });
    expect(failed(await verifyUnit(dir)).issues.find((i) => i.path === 'amendments.jsonl')?.detail).toContain(
      'bad-signature: post-seal line 1 (A2 by pi@lab, line 2 of the log): the signature does not verify',
    );

    const body = { ...last };
    delete body['signature'];
    await put(
      await signRecord(body, { signer: PI.id, prev: { file: 'seal.json', sha256: '0'.repeat(64) }, force: true }),
    );
    expect(failed(await verifyUnit(dir)).issues.find((i) => i.path === 'amendments.jsonl')?.detail).toContain(
      'chain-broken: post-seal line 1 (A2 by pi@lab, line 2 of the log) is chained to seal.json (000000000000…), but must be chained to seal.json',
    );

    const seal = sha256Hex(await readFile(join(dir, 'seal.json')));
    await put(
      await signRecord(body, {
        signer: PI.id,
        prev: { file: 'seal.json', sha256: seal },
        force: true,
        keysDir: join(root, 'forger-keys'),
      }),
    );
    const r = await verifyUnit(dir);
    expect(r.ok && r.trust.untrusted).toEqual([
      {
        keyOwner: PI.id,
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        paths: ['amendments.jsonl'],
        detail: expect.stringContaining('post-seal line 1 (A2 by pi@lab, line 2 of the log): signed by pi@lab'),
      },
    ]);
  });

  it('closeout refuses when the current adjudication lists an amendment amendments.jsonl no longer holds', async () => {
    const fresh = join(root, 'fresh-listing');
    await buildUnit(fresh, 'sealed');
    const a = await amend(fresh, { text: 'Q1 withdrawn', affects: ['questions.Q1'], author: PI, now: clock });
    await adjudicate(fresh, {
      adjudicator: { name: 'a' },
      result: { amendments: { log: [{ id: a.id, at: a.at, text: a.text }] } },
      operator: REVIEWER,
      now: clock,
    });
    await crossCheck(fresh, { outcome: 'agrees', method: 'rerun', operator: CHECKER, now: clock });
    await chmod(fresh, 0o755);
    await rm(join(fresh, 'amendments.jsonl'));
    const e = await expectImepError(closeoutUnit(fresh, { operator: REVIEWER, now: clock }), 'E_UNIT_TAMPERED');
    expect(e.message).toContain('adjudication/adjudication-001.json lists amendment A1');
    expect(e.message).toContain('amendments.jsonl does not hold');
    expect(await readFile(join(fresh, 'closeout.json')).catch(() => null)).toBeNull();

    // as the adjudicator writes it: the listing in the artifact adjudication/NNN/adjudication.json
    const viaArtifact = join(root, 'fresh-artifact');
    await buildUnit(viaArtifact, 'sealed');
    const b = await amend(viaArtifact, { text: 'Q1 withdrawn', affects: ['questions.Q1'], author: PI, now: clock });
    const artifact = JSON.stringify({ amendments: { log: [{ id: b.id, at: b.at, text: b.text }], protocol: [] } });
    await adjudicate(viaArtifact, {
      adjudicator: { name: 'a' },
      result: { file: 'adjudication/001/adjudication.json' },
      artifacts: { 'adjudication.json': artifact },
      operator: REVIEWER,
      now: clock,
    });
    await crossCheck(viaArtifact, { outcome: 'agrees', method: 'rerun', operator: CHECKER, now: clock });
    await chmod(viaArtifact, 0o755);
    await rm(join(viaArtifact, 'amendments.jsonl'));
    const e2 = await expectImepError(closeoutUnit(viaArtifact, { operator: REVIEWER, now: clock }), 'E_UNIT_TAMPERED');
    expect(e2.message).toContain('adjudication/001/adjudication.json lists amendment A1');
  });
});

describe('unsigned units (IMEP_SIGNING=off)', () => {
  it('write unsigned cross-checks and amendments, and verify as before', async () => {
    const before = process.env[SIGNING_ENV];
    process.env[SIGNING_ENV] = 'off';
    try {
      const dir = join(root, 'unsigned');
      await buildUnit(dir, 'sealed');
      await amend(dir, { text: 'Q1 is exploratory', affects: ['questions.Q1'], author: PI, now: clock });
      await adjudicate(dir, { adjudicator: { name: 'a' }, result: {}, operator: REVIEWER, now: clock });
      await crossCheck(dir, { outcome: 'agrees', method: 'rerun', operator: CHECKER, now: clock });
      await closeout(dir, { operator: REVIEWER, now: clock });
      expect((await readJson(dir, 'adjudication/cross-check-001.json'))['signature']).toBeUndefined();
      expect(await readFile(join(dir, 'amendments.jsonl'), 'utf8')).not.toContain('signature');
      const r = await verifyUnit(dir);
      ok(r);
      expect(r.signatures?.status).toBe('unsigned');
      expect(
        failed(await verifyUnit(dir, { requireSignatures: true })).issues.some(
          (i) => i.path === 'amendments.jsonl' && i.detail.includes('signatures are required'),
        ),
      ).toBe(true);
    } finally {
      if (before === undefined) delete process.env[SIGNING_ENV];
      else process.env[SIGNING_ENV] = before;
    }
  });
});

describe('a signed unit closed before cross-checks were signed', () => {
  /** Turns a closed unit into what the earlier code wrote: an unsigned cross-check, the closeout chained to the adjudication. */
  async function legacyClosed(): Promise<string> {
    const dir = await copyOf(adjudicated);
    await crossCheck(dir, { outcome: 'agrees', method: 'rerun', operator: CHECKER, now: clock });
    await closeout(dir, { operator: REVIEWER, now: clock });
    const xc = 'adjudication/cross-check-001.json';
    await rewrite(dir, xc, (r) => {
      delete r['signature'];
    });
    const bytes = await readFile(join(dir, xc));
    const adj = 'adjudication/adjudication-001.json';
    await rewrite(
      dir,
      'closeout.json',
      (r) => {
        const files = r['files'] as { path: string; size: number; sha256: string }[];
        const entry = files.find((f) => f.path === xc)!;
        entry.sha256 = sha256Hex(bytes);
        entry.size = bytes.length;
        (r['merkle'] as { root: string }).root = merkleRoot(files as Parameters<typeof merkleRoot>[0]);
      },
      { signer: REVIEWER.id, prev: { file: adj, sha256: sha256Hex(await readFile(join(dir, adj))) } },
    );
    return dir;
  }

  it('still verifies (its unsigned cross-check is bound by the signed closeout), with --require-signatures too', async () => {
    const dir = await legacyClosed();
    ok(await verifyUnit(dir));
    ok(await verifyUnit(dir, { requireSignatures: true }));
  });

  it('but an unsigned cross-check the closeout does not bind is refused', async () => {
    const dir = await legacyClosed();
    await forgeCrossCheck(dir, '002');
    const r = failed(await verifyUnit(dir));
    expect(r.issues.some((i) => i.path === XC2)).toBe(true);
  });
});
