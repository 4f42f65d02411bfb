import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { CodeIdentity } from './records/evidence-unit.js';

/**
 * The code identity recorded in a precommit and the spec block: git commit, dirty flag and the
 * package version, plus the installed versions of named packages. Edge I/O (git, package.json);
 * everything that consumes an identity takes it as a value. Git being absent, or the directory not
 * being a repository, records `gitCommit: null, dirty: null` rather than failing — the record says
 * plainly that the code identity is not established.
 */

const run = promisify(execFile);

async function git(cwd: string, args: string[]): Promise<string | null> {
  try {
    const { stdout } = await run('git', args, { cwd, timeout: 10_000 });
    return stdout;
  } catch {
    return null;
  }
}

async function readVersion(packageJson: string): Promise<string | null> {
  try {
    const parsed: unknown = JSON.parse(await readFile(packageJson, 'utf8'));
    const v =
      typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>)['version'] : undefined;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

export async function detectCodeIdentity(repoRoot: string): Promise<CodeIdentity> {
  const head = await git(repoRoot, ['rev-parse', 'HEAD']);
  const status = head === null ? null : await git(repoRoot, ['status', '--porcelain', '--untracked-files=no']);
  return {
    gitCommit: head === null ? null : head.trim(),
    dirty: status === null ? null : status.trim() !== '',
    packageVersion: (await readVersion(join(repoRoot, 'package.json'))) ?? 'unknown',
  };
}

/** Installed versions (from node_modules/<name>/package.json) of the named packages; absent → 'missing'. */
export async function detectPackageVersions(
  repoRoot: string,
  names: readonly string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of [...names].sort()) {
    out[name] = (await readVersion(join(repoRoot, 'node_modules', name, 'package.json'))) ?? 'missing';
  }
  return out;
}
