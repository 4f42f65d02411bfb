/**
 * Issue #35 item 9: a sealed unit checked with STOCK tools, no IMEP code — Debian's `minisign -V` and PyPI's
 * securesystemslib (DSSE + in-toto Statement), by the two recipe blocks of docs/verify.md ("Without IMEP") run
 * verbatim: on a fresh lite unit (sealed, adjudicated, closed out) they pass; on a copy with one byte of seal.json
 * changed both fail; on a copy whose closeout statement's payload was changed the in-toto check fails.
 * The tools: `minisign` on PATH (scripts/setup-system.sh), .venvs/formats (scripts/formats/setup.sh). Without them
 * the test is skipped — except under CI=true, where it fails.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blackoutYaml, ROOT } from '../campaign/helpers.js';
import { imep, liteCheckpointSha } from '../campaign/cli-support.js';
import { removeTree } from '../evidence/helpers.js';

const CI = process.env['CI'] === 'true';
const VENV_BIN = join(ROOT, '.venvs', 'formats', 'bin');

function hasMinisign(): boolean {
  return spawnSync('minisign', ['-v'], { encoding: 'utf8' }).status === 0;
}

function hasFormatsVenv(): boolean {
  return (
    existsSync(join(VENV_BIN, 'python')) &&
    spawnSync(join(VENV_BIN, 'python'), ['-c', 'import securesystemslib.dsse, in_toto'], { encoding: 'utf8' })
      .status === 0
  );
}

function toolsReady(): boolean {
  if (CI && !hasFormatsVenv()) execFileSync('bash', [join(ROOT, 'scripts/formats/setup.sh')], { stdio: 'inherit' });
  return hasMinisign() && hasFormatsVenv();
}

const ready = toolsReady();

/** The bash block after `<!-- stock-recipe:NAME -->` in docs/verify.md. */
function recipe(name: string): string {
  const doc = readFileSync(join(ROOT, 'docs/verify.md'), 'utf8');
  const m = new RegExp(`<!-- stock-recipe:${name} -->\\n\`\`\`bash\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(doc);
  if (m === null) throw new Error(`docs/verify.md has no stock-recipe:${name} block`);
  return m[1]!;
}

interface Run {
  readonly code: number | null;
  readonly out: string;
}

function runRecipe(name: string, cwd: string, unit: string): Run {
  const r = spawnSync('bash', ['-c', recipe(name)], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, UNIT: unit, PATH: `${VENV_BIN}:${process.env['PATH'] ?? ''}` },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A writable copy of a (read-only) unit. */
function copyWritable(from: string, to: string): string {
  cpSync(from, to, { recursive: true });
  const walk = (d: string): void => {
    chmodSync(d, 0o755);
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else chmodSync(join(d, e.name), 0o644);
    }
  };
  walk(to);
  return to;
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await removeTree(d);
});

describe.skipIf(!ready && !CI)('a unit checked with stock tools only (docs/verify.md, Without IMEP)', () => {
  it('the tools are installed (CI must have minisign and .venvs/formats)', () => {
    expect(hasMinisign(), 'minisign on PATH (bash scripts/setup-system.sh)').toBe(true);
    expect(hasFormatsVenv(), '.venvs/formats (bash scripts/formats/setup.sh)').toBe(true);
  });

  it('passes on a fresh unit; fails on a changed manifest byte and on a changed statement', async () => {
    const box = mkdtempSync(join(tmpdir(), 'imep-stock-'));
    dirs.push(box);
    const env = { IMEP_KEYS_DIR: join(box, 'keys'), IMEP_SEEN_DIR: join(box, 'seen'), IMEP_OPERATOR: 'alice' };
    writeFileSync(join(box, 'p.yaml'), blackoutYaml({ n: 8, sha: liteCheckpointSha() }));
    const run = await imep(
      ['campaign', 'run', 'p.yaml', '--through', 'closeout', '--same-operator-reason', 'x'].concat([
        '--campaigns-dir',
        'campaigns',
      ]),
      box,
      undefined,
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const id = readdirSync(join(box, 'campaigns')).find((d) => /^shellgame-blackout-[0-9a-f]{12}$/.test(d))!;
    const unit = join(box, 'campaigns', id);
    expect(readdirSync(join(unit, 'attestations')).sort()).toEqual([
      'adjudication-001.intoto.json',
      'adjudication-001.json.minisig',
      'closeout.intoto.json',
      'closeout.json.minisig',
      'seal.intoto.json',
      'seal.json.minisig',
    ]);
    // the unit's own tamper-evidence is not broken by them: verify exits 0 (the operator's key is trusted here)
    const verified = await imep(['campaign', 'verify', unit], box, undefined, env);
    expect(verified.code, verified.stderr).toBe(0);

    for (const format of ['minisign', 'sslib']) {
      const k = await imep(['keys', 'export', '--format', format], box, undefined, env);
      expect(k.code, k.stderr).toBe(0);
      writeFileSync(join(box, format === 'minisign' ? 'alice.minisign.pub' : 'alice.sslib.json'), k.stdout);
    }

    const mini = runRecipe('minisign', box, unit);
    expect(mini.code, mini.out).toBe(0);
    expect(mini.out.match(/Signature and comment signature verified/g)).toHaveLength(3);
    expect(mini.out).toContain(`stage=closed file=closeout.json root=`);
    const toto = runRecipe('in-toto', box, unit);
    expect(toto.code, toto.out).toBe(0);
    expect(toto.out.match(/: OK, /g)).toHaveLength(3);
    expect(toto.out).toMatch(/OK, sealed unit shellgame-blackout/);
    expect(toto.out).toMatch(/OK, closed unit shellgame-blackout/);
    // the verdict lines carry their claim: Q1 with its registered margin
    expect(toto.out).toContain('Q1: not detected (D_N lies below +10.00 pp: its upper bound lies below that)');

    // one byte of seal.json changed: both stock checks fail
    const bad = copyWritable(unit, join(box, 'tampered-manifest'));
    const seal = readFileSync(join(bad, 'seal.json'));
    const at = seal.indexOf('"sealedAt": "') + '"sealedAt": "'.length + 3;
    seal[at] = seal[at] === 0x37 ? 0x38 : 0x37; // a digit of the year
    writeFileSync(join(bad, 'seal.json'), seal);
    const m2 = runRecipe('minisign', box, bad);
    expect(m2.code, m2.out).not.toBe(0);
    expect(m2.out).toMatch(/verification failed/i);
    const t2 = runRecipe('in-toto', box, bad);
    expect(t2.code, t2.out).not.toBe(0);
    expect(t2.out).toMatch(/seal\.json: sha256 [0-9a-f]{64} is not the attested/);

    // the closeout statement's payload changed (a verdict word), the envelope kept: the in-toto check fails
    const forged = copyWritable(unit, join(box, 'tampered-statement'));
    const file = join(forged, 'attestations', 'closeout.intoto.json');
    const envelope = JSON.parse(readFileSync(file, 'utf8')) as { payload: string };
    const statement = Buffer.from(envelope.payload, 'base64').toString('utf8');
    expect(statement).toContain('"verdict":"not detected"');
    envelope.payload = Buffer.from(statement.replace('"verdict":"not detected"', '"verdict":"holds"')).toString(
      'base64',
    );
    writeFileSync(file, JSON.stringify(envelope));
    const t3 = runRecipe('in-toto', box, forged);
    expect(t3.code, t3.out).not.toBe(0);
    expect(t3.out).toMatch(/closeout\.intoto\.json: signature does not verify/);
    // the minisign signatures there are untouched and still verify
    expect(runRecipe('minisign', box, forged).code).toBe(0);
    // and IMEP's own verify names the forged statement (exit 3)
    const v3 = await imep(['campaign', 'verify', forged], box, undefined, env);
    expect(v3.code).toBe(3);
    expect(v3.stderr).toContain('attestations/closeout.intoto.json');
  }, 120_000);
});
