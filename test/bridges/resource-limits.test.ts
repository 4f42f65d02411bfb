/**
 * The resource limits of hosts IMEP starts (src/bridges/resource-limits.ts): registered values over the kind's
 * defaults, the prlimit prefix (RLIMIT_NPROC only inside the sandbox and never for root, who is exempt), the line the
 * run record shows, and that a simulator server IMEP starts really runs under them (its /proc/PID/limits).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HOST_LIMITS, hostLimiter, resolveHostLimits } from '../../src/bridges/resource-limits.js';
import { bubblewrapWorks, sandboxed } from '../../src/bridges/sandbox.js';
import { openSimulators } from '../../src/campaign/bridge-envs.js';
import { parseProtocol } from '../../src/protocol/load.js';
import { ROOT } from '../campaign/helpers.js';

const root = process.getuid?.() === 0;
const NO_CGROUPS = { ...process.env, IMEP_CGROUPS: 'off' };

describe('resolveHostLimits', () => {
  it('takes each registered field over the kind’s default', () => {
    expect(resolveHostLimits('policy host', undefined)).toEqual(DEFAULT_HOST_LIMITS['policy host']);
    expect(resolveHostLimits('simulator server', { memoryMiB: 1024, callDeadlineS: 5 })).toEqual({
      memoryMiB: 1024,
      processes: 4096,
      cpuSeconds: 2_592_000,
      callDeadlineS: 5,
    });
    // finite defaults, generous for simulators
    expect(DEFAULT_HOST_LIMITS['simulator server'].memoryMiB).toBeGreaterThan(
      DEFAULT_HOST_LIMITS['policy host'].memoryMiB,
    );
  });
});

describe('hostLimiter', () => {
  const plain = { file: '/usr/bin/python3', args: ['-c', 'pass'], label: 'policy host' };

  it('unsandboxed: prlimit with data, CPU and core around the command, no RLIMIT_NPROC', () => {
    const l = hostLimiter('policy host', { memoryMiB: 256, cpuSeconds: 9 }, NO_CGROUPS);
    const c = l.finish(plain, false);
    expect(c.file).toBe('/usr/bin/prlimit');
    expect(c.args).toEqual([
      `--data=${256 * 1024 * 1024}:${256 * 1024 * 1024}`,
      '--cpu=9:9',
      '--core=0:0',
      '--',
      '/usr/bin/python3',
      '-c',
      'pass',
    ]);
    expect(l.insideSandbox(true).some((a) => a.startsWith('--nproc='))).toBe(!root);
    expect(l.describe(false)).toBe(
      `limits: memory 256 MiB (RLIMIT_DATA per process); processes 512 (NOT enforced: ${root ? 'root is exempt from RLIMIT_NPROC' : 'RLIMIT_NPROC needs the sandbox'} and no writable pids cgroup); CPU 9 s per process (RLIMIT_CPU); call deadline 60 s (then the policy host is killed and restarted)`,
    );
  });

  // review defect 4: a setuid bubblewrap makes no user namespace, so the host keeps the operator's uid, where
  // RLIMIT_NPROC would count every process of the operator (the host may not even start): left out, and said so
  it('a sandbox without its own uid: no RLIMIT_NPROC inside, and the line says why', () => {
    const l = hostLimiter('policy host', { memoryMiB: 256, cpuSeconds: 9 }, NO_CGROUPS);
    expect(l.insideSandbox(false).some((a) => a.startsWith('--nproc='))).toBe(false);
    expect(l.insideSandbox(false)).toEqual(l.insideSandbox(true).filter((a) => !a.startsWith('--nproc=')));
    expect(l.describe(true, false)).toContain(
      `processes 512 (NOT enforced: ${root ? 'root is exempt from RLIMIT_NPROC' : "RLIMIT_NPROC needs the sandbox's own uid (bubblewrap made no user namespace here"}`,
    );
    expect(l.describe(true, true)).toContain(root ? 'processes 512 (NOT enforced' : 'processes 512 (RLIMIT_NPROC)');
  });

  it.runIf(bubblewrapWorks().ok)('sandboxed() gives the wrap whether its sandbox has its own uid', () => {
    const seen: boolean[] = [];
    const { isolation } = sandboxed(
      { file: '/usr/bin/python3', args: [], label: 'probe' },
      {
        readOnly: [],
        writable: [],
        bridgePackage: join(ROOT, 'sim-bridge/imep_sim_bridge'),
        wrap: (ownUid) => (seen.push(ownUid), []),
      },
      { ...process.env, IMEP_SANDBOX: 'auto' },
    );
    expect(seen).toEqual([isolation.mode === 'bubblewrap' && isolation.uid !== null]);
  });

  it('the process it starts has the limits (read back by the process itself)', () => {
    const l = hostLimiter('policy host', { memoryMiB: 300, cpuSeconds: 77 }, NO_CGROUPS);
    const c = l.finish(
      {
        file: '/usr/bin/python3',
        args: [
          '-c',
          'import resource as r; print(r.getrlimit(r.RLIMIT_DATA)[0], r.getrlimit(r.RLIMIT_CPU)[0], r.getrlimit(r.RLIMIT_CORE)[0])',
        ],
        label: 't',
      },
      false,
    );
    const out = spawnSync(c.file, [...c.args], { encoding: 'utf8' });
    expect(out.stdout.trim()).toBe(`${300 * 1024 * 1024} 77 0`);
  });

  it('an allocation past the memory limit fails inside the process', () => {
    const l = hostLimiter('policy host', { memoryMiB: 200 }, NO_CGROUPS);
    const c = l.finish(
      {
        file: '/usr/bin/python3',
        args: [
          '-c',
          'import numpy as np\ntry:\n  np.ones(1024**3, np.uint8)\n  print("allocated")\nexcept MemoryError:\n  print("refused")',
        ],
        label: 't',
      },
      false,
    );
    const out = spawnSync(c.file, [...c.args], {
      encoding: 'utf8',
      env: { ...process.env, OPENBLAS_NUM_THREADS: '1' },
    });
    expect(out.stdout.trim()).toBe('refused');
  });
});

/** The parent pid of a process (field 4 of /proc/PID/stat, after the parenthesised command name), or null. */
function parentOf(pid: string): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? null;
  } catch {
    return null;
  }
}

/** /proc/PID/limits of every sim-bridge server this test process started (descendants only: other IMEP runs on the
 * machine start servers with other limits). */
function serverLimits(): string[] {
  const out: string[] = [];
  const me = String(process.pid);
  const descends = (pid: string): boolean => {
    for (let p: string | null = parentOf(pid), hops = 0; p !== null && p !== '0' && hops < 64; p = parentOf(p), hops++)
      if (p === me) return true;
    return false;
  };
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd[0]?.includes('python') && cmd.includes('imep_sim_bridge') && cmd.includes('serve') && descends(pid))
        out.push(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    } catch {
      // ended while we looked
    }
  }
  return out;
}

describe('policy.limits in a protocol', () => {
  const base = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8');
  it('is accepted for a host IMEP starts, refused with an endpoint (that host keeps its own limits)', () => {
    const started = base.replace(
      /name: shell-game-memory .*$/m,
      'name: shell-game-memory\n  limits: { memoryMiB: 1024 }',
    );
    expect(parseProtocol(started, join(ROOT, 'p.yaml')).protocol.policy?.limits).toEqual({ memoryMiB: 1024 });
    const attached = base.replace(
      /name: shell-game-memory .*$/m,
      'name: shell-game-memory\n  endpoint: tcp://127.0.0.1:5600\n  limits: { memoryMiB: 1024 }',
    );
    expect(() => parseProtocol(attached, join(ROOT, 'p.yaml'))).toThrow(/limits is given with an endpoint/);
  });
});

describe('a simulator server IMEP starts', () => {
  it('runs under the registered limits, and the simulators say which are in force', async () => {
    const { protocol } = parseProtocol(
      `version: 1
id: limited-sim
title: a replay simulator under registered limits
simulator:
  kind: sim-bridge
  adapter: replay
  replayDir: sim-bridge/tests/fixtures/replay
  limits: { memoryMiB: 1024, processes: 256, cpuSeconds: 3600, callDeadlineS: 5 }
envs: [{ id: replay/tiny }]
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: "${'0'.repeat(64)}" }
memory: { bank: episode-local, banks: [perceptual], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 0, end: 1 }] }
n: 2
attempts: { count: 1, registered: 1 }
conditions: [{ id: A, kind: A }]
waves: [{ id: 1, conditions: [A], anchor: A }]
estimands: [{ id: SR_A, kind: successRate, condition: A }]
executionFailures: { policy: record }
allowlists: { methodVisible: [image, state], evaluatorOnly: [reward, success, oracle, seed] }
`,
      join(ROOT, 'p.yaml'),
    );
    const sims = await openSimulators(protocol, { file: 'p.yaml', roots: [ROOT] });
    try {
      expect(sims.limits).toMatch(
        /^limits: memory 1024 MiB \(RLIMIT_DATA per process[^)]*\); processes 256 \(.+\); CPU 3600 s per process \(RLIMIT_CPU\); call deadline 5 s \(then the simulator server is killed and restarted\)$/,
      );
      const env = await sims.envs({ task: 'replay/tiny', envId: 'replay/tiny', kwargs: {} }, 0);
      await env.reset({ seed: 0, options: {} });
      const limits = serverLimits();
      expect(limits.length).toBeGreaterThan(0);
      for (const l of limits) {
        expect(l).toMatch(new RegExp(`^Max data size\\s+${1024 * 1024 * 1024}\\s+${1024 * 1024 * 1024}\\s+bytes`, 'm'));
        expect(l).toMatch(/^Max cpu time\s+3600\s+3600\s+seconds/m);
      }
      await env.close();
    } finally {
      await sims.close();
    }
  }, 60_000);
});
