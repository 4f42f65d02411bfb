/**
 * A hosted policy that misbehaves once per host (issue 32 item 3): the first host sleeps inside `infer` far past the
 * call deadline, the second allocates 2 GiB, the third tries 100 forks. The protocol registers small limits
 * (`policy.limits`: 512 MiB, 64 processes, a 2 s call deadline). Each stuck or out-of-memory host is killed (its pid
 * is gone) and replaced within the deadline plus a small slack; the fork bomb fails inside the host; each incident is
 * an execution failure in the rows, every later episode runs, and the run record and the terminal say which limits
 * were in force. Unsandboxed (IMEP_SANDBOX=off), so that the host can tell the test its pid; the limits do not
 * depend on the sandbox (prlimit, and a cgroup where one is writable).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bubblewrapWorks } from '../../src/bridges/sandbox.js';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const DEADLINE_S = 2;
const SLEEP_S = 60;

const MODULE = `
import os, sys, time
import numpy as np
from imep_sim_bridge.policy_host import ShellGameMemoryPolicy

# the test's folder; inside the sandbox the only folder every host generation can write: its socket's
_where = os.environ.get("LIMITS_TEST_DIR") or os.path.dirname(sys.argv[sys.argv.index("--endpoint") + 1][len("ipc://"):])
LOG = os.path.join(_where, "hosts.log")

def _log(line):
    with open(LOG, "a") as f:
        f.write(line + "\\n")

with open(LOG, "a+") as f:
    f.seek(0)
    GENERATION = sum(1 for l in f.read().splitlines() if l.startswith("start "))
_log(f"start {os.getpid()} {time.time():.3f}")

class Mischief(ShellGameMemoryPolicy):
    name = "mischief"
    version = "1"
    done = False

    def infer(self, slot, obs, memory):
        if not Mischief.done:
            Mischief.done = True
            if GENERATION == 0:
                _log(f"sleep {os.getpid()} {time.time():.3f}")
                time.sleep(${SLEEP_S})
            elif GENERATION == 1:
                _log(f"alloc {os.getpid()} {time.time():.3f}")
                big = np.ones(2 * 1024**3, np.uint8)  # 2 GiB, touched
                _log(f"allocated {big.sum()}")
            elif GENERATION == 2:
                made = 0
                try:
                    for _ in range(100):
                        if os.fork() == 0:
                            time.sleep(3)
                            os._exit(0)
                        made += 1
                except OSError as e:
                    raise RuntimeError(f"forks refused after {made}: {e}")
                _log(f"forked {made}")
        return super().infer(slot, obs, memory)

POLICIES = {Mischief.name: Mischief}
`;

function protocol(moduleDir: string): string {
  let text = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8');
  text = text.replace(/^id: .*$/m, 'id: limits-test');
  text = text.replace(
    /name: shell-game-memory .*$/m,
    `name: mischief\n  module: mischief_policy\n  pythonPath: [${moduleDir}]\n  limits: { memoryMiB: 512, processes: 64, callDeadlineS: ${DEADLINE_S} }`,
  );
  text = text.replace(/start: 630000, end: 630023/, 'start: 660000, end: 660003').replace(/^n: 24$/m, 'n: 4');
  // the policy misbehaves on each host's first call: the convention preflight must not spend it
  text = text.replace(/^memory:/m, 'conventions: { preflightCalls: 0 }\nmemory:');
  return text;
}

interface Row {
  status: string;
  failure: { code: string; message: string } | null;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('resource limits and call deadlines on a policy host IMEP starts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-limits-'));
  afterAll(() => (process.env['KEEP'] ? undefined : rmSync(dir, { recursive: true, force: true })));
  const moduleDir = join(dir, 'policy-module');
  mkdirSync(moduleDir);
  writeFileSync(join(moduleDir, 'mischief_policy.py'), MODULE);
  writeFileSync(join(dir, 'p.yaml'), protocol(moduleDir));

  it('a stuck host and one over its memory are killed and replaced, a fork bomb fails inside, the run goes on', async () => {
    const t0 = Date.now();
    const r = await imep(
      ['campaign', 'run', 'p.yaml', '--through', 'seal', '--batch', '1', '--campaigns-dir', 'c'],
      dir,
      undefined,
      {
        IMEP_SANDBOX: 'off',
        LIMITS_TEST_DIR: dir,
        OPENBLAS_NUM_THREADS: '1',
      },
    );
    const wall = (Date.now() - t0) / 1000;
    expect(r.code, r.stderr).toBe(0);
    expect(wall).toBeLessThan(SLEEP_S); // nothing waited for the sleeping host
    // terminal: the limits line next to the isolation line
    expect(r.stdout).toMatch(
      /^policy: remote mischief v1 .*; isolation: none \(turned off \(IMEP_SANDBOX=off\)\); limits: memory 512 MiB \(RLIMIT_DATA per process[^)]*\); processes 64 \(/m,
    );
    const unit = unitIn(join(dir, 'c')) as string;
    const run = JSON.parse(readFileSync(join(unit, 'rows/run.json'), 'utf8')) as {
      sessions: { policyLimits?: string }[];
    };
    const limits = run.sessions[0]?.policyLimits ?? '';
    expect(limits).toMatch(/^limits: memory 512 MiB \(RLIMIT_DATA per process/);
    expect(limits).toMatch(/call deadline 2 s \(then the policy host is killed and restarted\)/);

    const log = readFileSync(join(dir, 'hosts.log'), 'utf8').trimEnd().split('\n');
    const starts = log.filter((l) => l.startsWith('start ')).map((l) => l.split(' ').map(Number));
    const at = (kind: string): number[] => (log.find((l) => l.startsWith(`${kind} `)) as string).split(' ').map(Number);
    expect(starts.length).toBe(3); // the sleeper, the allocator, the one that serves the rest
    const [, sleeper] = at('sleep') as [number, number, number];
    const [, allocator] = at('alloc') as [number, number, number];
    expect(sleeper).toBe(starts[0]?.[1]);
    expect(allocator).toBe(starts[1]?.[1]);
    // the stuck host is killed at its deadline and the next one is up within a small slack
    expect((starts[1]?.[2] as number) - (at('sleep')[2] as number)).toBeLessThan(DEADLINE_S + 6);
    expect(log.some((l) => l.startsWith('allocated'))).toBe(false);
    // both replaced processes are gone
    expect(alive(sleeper)).toBe(false);
    expect(alive(allocator)).toBe(false);

    const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    expect(rows.length).toBe(6 * 4);
    const failed = rows.filter((x) => x.status !== 'ok');
    const messages = failed.map((x) => `${x.failure?.code}: ${x.failure?.message}`);
    expect(
      messages.some((m) => /^E_BRIDGE_TIMEOUT: .*the policy host was killed and a fresh one started/.test(m)),
    ).toBe(true);
    expect(messages.some((m) => /memory limit \(code 86\)/.test(m))).toBe(true);
    if (/processes 64 \(NOT enforced/.test(limits)) {
      expect(log.some((l) => l.startsWith('forked 100'))).toBe(true); // nothing here could stop it, and it says so
    } else {
      const forks = messages.filter((m) => /forks refused after \d+/.test(m));
      expect(forks.length).toBeGreaterThan(0);
      // an error the live host answered with fails the episode and leaves the host in place
      expect(forks.every((m) => !m.includes('killed'))).toBe(true);
      expect(log.some((l) => l.startsWith('forked'))).toBe(false);
    }
    // every failure is an execution failure of an episode; everything after the incidents ran
    // three incidents, each failing the one episode in flight (--batch 1: within the registered failure budget, which
    // stops a run whose first units of a cell all fail — with 4 slots in flight every incident would fail a whole cell)
    expect(failed.length).toBeLessThanOrEqual(3);
    expect(rows.slice(-6).every((x) => x.status === 'ok')).toBe(true);
  }, 180_000);

  it.runIf(bubblewrapWorks().ok)(
    'sandboxed: the same incidents, the limits applied inside the sandbox, the run goes on',
    async () => {
      const t0 = Date.now();
      const r = await imep(
        ['campaign', 'run', 'p.yaml', '--through', 'seal', '--batch', '1', '--campaigns-dir', 'c-box'],
        dir,
        undefined,
        { OPENBLAS_NUM_THREADS: '1' },
      );
      expect(r.code, r.stderr).toBe(0);
      expect((Date.now() - t0) / 1000).toBeLessThan(SLEEP_S);
      expect(r.stdout).toMatch(/; isolation: bubblewrap \(.*\); limits: memory 512 MiB \(RLIMIT_DATA per process/m);
      const unit = unitIn(join(dir, 'c-box')) as string;
      const run = JSON.parse(readFileSync(join(unit, 'rows/run.json'), 'utf8')) as {
        sessions: { policyLimits?: string; policyIsolation?: string }[];
      };
      expect(run.sessions[0]?.policyIsolation).toMatch(/^isolation: bubblewrap/);
      const limits = run.sessions[0]?.policyLimits ?? '';
      // inside the sandbox RLIMIT_NPROC applies to a non-root user; root is exempt and needs a pids cgroup
      if (process.getuid?.() !== 0) expect(limits).toMatch(/processes 64 \(RLIMIT_NPROC/);
      const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Row);
      const messages = rows.filter((x) => x.status !== 'ok').map((x) => `${x.failure?.code}: ${x.failure?.message}`);
      expect(messages.some((m) => /^E_BRIDGE_TIMEOUT: .*killed and a fresh one started/.test(m))).toBe(true);
      expect(messages.some((m) => /memory limit \(code 86\)/.test(m))).toBe(true);
      if (!/processes 64 \(NOT enforced/.test(limits))
        expect(messages.some((m) => /forks refused after \d+/.test(m))).toBe(true);
      expect(messages.length).toBeLessThanOrEqual(3);
      expect(rows.slice(-6).every((x) => x.status === 'ok')).toBe(true);
    },
    180_000,
  );
});
