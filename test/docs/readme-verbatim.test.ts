/**
 * The README, run verbatim as a first-time user would (issue 35, "Done when"): in a copy of the tree (tracked and
 * untracked non-ignored files; no node_modules, no dist/), each role with a fresh HOME — so a fresh npm cache — and
 * nothing of this process's npm or IMEP environment:
 *
 *   operator   the quick start's first command (`npm ci && npx imep campaign run … --through closeout …`), then the key
 *              export of "Checking a unit someone sent you";
 *   reviewer   that section's trust-and-verify block, in another fresh HOME; then a tampered copy of the unit.
 *
 * The blocks are found by their headings ("## Quick start", "## Checking a unit someone sent you") and run as bash,
 * exactly as written; the test chooses only HOME and the working folder. Asserts on values: the unit's name, the
 * verdict words, exit codes, the "trusted" line, that the first contact builds dist/ once (npm ci), not again under
 * npx, and that a tampered copy fails verify with exit 3. Heavy (npm ci from the registry, a 5,600-episode campaign):
 * runs when CI=true or IMEP_FIRST_CONTACT=1, and is skipped otherwise.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';

const RUN = process.env['CI'] === 'true' || process.env['IMEP_FIRST_CONTACT'] === '1';
const UNIT = 'shellgame-blackout-750efa7a9384';
const QUICK_START = '## Quick start';
const KEY_FLOW = '## Checking a unit someone sent you';
const BUILDING = /imep: building dist\//g;

/** The ```bash blocks of the README section under `heading` (up to the next `## `); fails loudly when absent. */
export function bashBlocks(readme: string, heading: string): string[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`README.md has no '${heading}' heading: the verbatim test cannot find its blocks`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  const section = lines.slice(start + 1, end < 0 ? undefined : end);
  const blocks: string[] = [];
  let open: string[] | null = null;
  for (const l of section) {
    if (open === null && l.trim() === '```bash') open = [];
    else if (open !== null && l.trim() === '```') {
      blocks.push(open.join('\n'));
      open = null;
    } else if (open !== null) open.push(l);
  }
  if (blocks.length === 0) throw new Error(`README.md's '${heading}' section has no \`\`\`bash block`);
  return blocks;
}

/** The tree as a clone has it: tracked and untracked non-ignored files, copied into `dest`. */
function copyTree(dest: string): void {
  const ls = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  expect(ls.status, ls.stderr).toBe(0);
  for (const rel of new Set(ls.stdout.split('\0').filter((p) => p !== ''))) {
    const top = rel.split('/')[0]!;
    if (['node_modules', '.venvs', 'dist'].includes(top)) continue; // links a worktree may hold; built outputs
    const from = join(ROOT, rel);
    let st;
    try {
      st = lstatSync(from);
    } catch {
      continue; // tracked, deleted in the working tree
    }
    const to = join(dest, rel);
    mkdirSync(dirname(to), { recursive: true });
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else if (st.isFile()) {
      copyFileSync(from, to);
      chmodSync(to, st.mode & 0o777);
    }
  }
}

/** This process's environment without npm's and IMEP's own variables (a user's shell has neither), HOME as given. */
function userEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|IMEP_|INIT_CWD$|VITEST|NODE_OPTIONS$)/i.test(k)) continue;
    env[k] = v;
  }
  env['HOME'] = home;
  return env;
}

function bash(block: string, cwd: string, home: string, timeoutS: number): SpawnSyncReturns<string> {
  return spawnSync('bash', ['-c', block], {
    cwd,
    env: userEnv(home),
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    timeout: timeoutS * 1000,
  });
}

const both = (r: SpawnSyncReturns<string>): string => `${r.stdout}\n${r.stderr}`;
const tail = (r: SpawnSyncReturns<string>): string =>
  `exit ${r.status} ${r.signal ?? ''}\n${both(r).slice(-6000)}${r.error ? `\n${String(r.error)}` : ''}`;

const scratch = RUN ? mkdtempSync(join(tmpdir(), 'imep-readme-')) : '';
afterAll(() => {
  if (scratch !== '') rmSync(scratch, { recursive: true, force: true });
});

describe('the README blocks are found by their headings', () => {
  it('quick start, key export and reviewer blocks', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const quick = bashBlocks(readme, QUICK_START)[0]!.split('\n')[0]!;
    expect(quick).toContain('npm ci');
    expect(quick).toContain('npx imep campaign run protocols/shellgame-blackout.yaml --through closeout');
    const [operator, reviewer] = bashBlocks(readme, KEY_FLOW);
    expect(operator).toBe('npx imep keys export > alice.pub');
    expect(reviewer).toContain('npx imep keys trust alice.pub');
    expect(reviewer).toContain(`npx imep campaign verify campaigns/${UNIT}`);
    expect(() => bashBlocks(readme, '## No such heading')).toThrow(/no '## No such heading' heading/);
  });
});

describe.skipIf(!RUN)('the README run verbatim in fresh HOMEs (runs when CI=true or IMEP_FIRST_CONTACT=1)', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const tree = join(scratch, 'tree');
  const operatorHome = join(scratch, 'operator-home');
  const reviewerHome = join(scratch, 'reviewer-home');

  it('quick start (operator): npm ci builds once, the campaign closes out the unit with its verdicts', () => {
    mkdirSync(tree, { recursive: true });
    mkdirSync(operatorHome);
    copyTree(tree);
    const first = bashBlocks(readme, QUICK_START)[0]!.split('\n')[0]!;
    const r = bash(first, tree, operatorHome, 2400);
    expect(r.status, tail(r)).toBe(0);
    const out = both(r);
    expect(out).toContain(`sealed campaigns/${UNIT}`);
    expect(out).toMatch(/^\s*Q1\b.*not detected/m);
    expect(out).toMatch(/^\s*Q1_eligibility\b.*holds/m);
    expect(out).toMatch(/^\s*Q4\b.*unresolved/m);
    expect(out).toContain(`cross-checked campaigns/${UNIT}: agrees`);
    expect(out).toContain(`closed out campaigns/${UNIT}`);
    // the first contact builds dist/ once (npm ci's prepare); npx's prepare finds it current
    expect(out.match(BUILDING) ?? [], tail(r)).toHaveLength(1);
  }, 2_500_000);

  it('key export (operator), then trust and verify (reviewer, fresh HOME): exit 0, trusted; a tampered copy: exit 3', () => {
    const [operator, reviewer] = bashBlocks(readme, KEY_FLOW);
    const e = bash(operator!, tree, operatorHome, 300);
    expect(e.status, tail(e)).toBe(0);
    const pub = readFileSync(join(tree, 'alice.pub'), 'utf8');
    const who = /^operator: (".*")$/m.exec(pub)?.[1];
    expect(who, pub).toBeDefined();
    const operatorName = JSON.parse(who!) as string;

    mkdirSync(reviewerHome);
    const v = bash(reviewer!, tree, reviewerHome, 600);
    expect(v.status, tail(v)).toBe(0);
    const out = both(v);
    expect(out).toMatch(
      new RegExp(`^trusted ${operatorName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} ed25519:[0-9a-f]{64} `, 'm'),
    );
    expect(out).toMatch(/^unit shellgame-blackout\S*: intact and signed by trusted keys/m);
    expect(out).toContain('verified to stage: closed out');
    expect(out).not.toMatch(BUILDING);

    // a tampered copy: one byte of its rows changed
    const copy = join(scratch, 'tampered', UNIT);
    cpSync(join(tree, 'campaigns', UNIT), copy, { recursive: true });
    const rows = join(copy, 'rows', 'rows.jsonl');
    chmodSync(join(copy, 'rows'), 0o755);
    chmodSync(rows, 0o644);
    const bytes = readFileSync(rows);
    bytes[10] = bytes[10]! ^ 0x01;
    writeFileSync(rows, bytes);
    const t = bash(`npx imep campaign verify ${copy}`, tree, reviewerHome, 300);
    expect(t.status, tail(t)).toBe(3);
    expect(t.stderr).toContain('rows/rows.jsonl: modified');
  }, 1_000_000);
});
