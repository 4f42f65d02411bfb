/**
 * scripts/lib/setup-progress.sh: a setup step that runs for a while says how long it has run, the pip command under
 * it and the time it took last time, and when it is done (issue #35 item 5). A fake recipe stands for pip. Without
 * `ps` (procps) the pip naming test is skipped.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const LIB = resolve('scripts/lib/setup-progress.sh');
/** The pip command is read from the process table with ps (Debian's procps); without it the lines name none. */
const HAS_PS = spawnSync('ps', ['-o', 'pid=', '-p', String(process.pid)]).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'imep-setup-progress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(label: string, recipe: string): { stderr: string; code: number } {
  const script = `source '${LIB}'; with_progress '${label}' bash '${recipe}' >/dev/null`;
  try {
    execFileSync('bash', ['-c', script], {
      // no heartbeat within the step (a loaded machine may take a second to start it): start and end lines only
      env: { ...process.env, IMEP_SETUP_HEARTBEAT_S: '60', IMEP_SETUP_TIMES: join(dir, 'times') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { stderr: '', code: 0 };
  } catch (e) {
    const err = e as { stderr: Buffer; status: number };
    return { stderr: err.stderr.toString(), code: err.status };
  }
}

describe('with_progress (setup steps that take minutes)', () => {
  it.skipIf(!HAS_PS)(
    'names the pip command running, then the time it took; the next run shows that time and an ETA',
    () => {
      const recipe = join(dir, 'recipe.sh');
      // `exec -a` gives a sleeping process the command line of a pip install, as the process table shows it
      writeFileSync(
        recipe,
        `bash -c 'exec -a "python -m pip install -q --no-deps torch==2.13.0" sleep 3'\necho IMEP_PYTHON=/x\n`,
      );
      const script = `source '${LIB}'; with_progress 'fake setup' bash '${recipe}' >/dev/null`;
      const env = { ...process.env, IMEP_SETUP_HEARTBEAT_S: '1', IMEP_SETUP_TIMES: join(dir, 'times') };
      const first = execFileSync('bash', ['-c', `(${script}) 2>&1`], { env }).toString();
      expect(first.split('\n')[0]).toBe('fake setup: starting …');
      expect(first).toMatch(/^fake setup: 0m0\ds — pip step 1: pip install --no-deps torch==2\.13\.0 3$/m);
      expect(first).toMatch(/^fake setup: done in 0m\d\ds$/m);
      const seconds = Number(/^fake setup\t(\d+)$/m.exec(readFileSync(join(dir, 'times'), 'utf8'))?.[1]);
      expect(seconds).toBeGreaterThanOrEqual(3);
      const second = execFileSync('bash', ['-c', `(${script}) 2>&1`], { env }).toString();
      expect(second.split('\n')[0]).toBe(`fake setup: starting (~0m${String(seconds).padStart(2, '0')}s last time) …`);
      expect(second).toMatch(
        /pip step 1: pip install --no-deps torch==2\.13\.0 3 \(~0m\d\ds last time, ETA ~0m\d\ds\)$/m,
      );
    },
    30_000,
  );

  it('a failing step says so with its exit code and keeps the last good time', () => {
    const recipe = join(dir, 'fails.sh');
    writeFileSync(recipe, 'exit 3\n');
    const r = run('broken setup', recipe);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^broken setup: starting …\nbroken setup: failed after 0m0\ds \(exit 3\)\n$/);
  });
});
