/**
 * ServerSupervisor's hold on what it starts: an unsandboxed host (its own process group, nothing like bwrap's
 * --die-with-parent) dies with IMEP when IMEP is ended by a signal, and a host's cgroup is emptied of everything the
 * previous host left there before a fresh host enters it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { privateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { releaseCgroups } from '../../src/bridges/cgroup-limits.js';
import { hostLimiter } from '../../src/bridges/resource-limits.js';
import { ServerSupervisor, liteServerCommand } from '../../src/bridges/supervisor.js';

const FIXTURE = join(process.cwd(), 'test/fixtures/bridge/supervised-host.ts');
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Alive and not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

function procsOf(dir: string): number[] {
  return readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

interface Started {
  readonly host: number;
  readonly escaped: number;
  readonly cgroups: readonly string[];
}

async function signalled(signal: NodeJS.Signals, lockDir?: string) {
  const tmp = mkdtempSync(join(tmpdir(), 'imep-sup-'));
  made.push(tmp);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', FIXTURE, ...(lockDir === undefined ? [] : ['--lock', lockDir])],
    { env: { ...process.env, IMEP_SANDBOX: 'off', TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, sig) => resolve({ code, signal: sig })),
  );
  const started = await new Promise<Started>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] as string) as Started);
    });
    void exited.then((e) => reject(new Error(`the fixture exited first: ${JSON.stringify(e)}`)));
  });
  expect(alive(started.host)).toBe(true);
  expect(alive(started.escaped)).toBe(true);
  child.kill(signal);
  const how = await exited;
  const hostGone = await goneWithin(started.host, 3000);
  const escapedGone = await goneWithin(started.escaped, 3000);
  for (const pid of [started.host, started.escaped]) {
    try {
      process.kill(pid, 'SIGKILL'); // whatever a failing run left behind
    } catch {
      // gone
    }
    await goneWithin(pid, 3000);
  }
  for (const dir of started.cgroups) {
    try {
      rmdirSync(dir); // the fixture ended by a signal: no exit hook removed its cgroups
    } catch {
      // removed, or not empty yet
    }
  }
  return { how, hostGone, escapedGone, cgroups: started.cgroups };
}

describe('an unsandboxed host when IMEP is ended by a signal', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${signal}: the host's process group and its cgroup are killed, and IMEP ends by ${signal} as it would have`, async () => {
      const { how, hostGone, escapedGone, cgroups } = await signalled(signal);
      expect(how).toEqual({ code: null, signal });
      expect(hostGone).toBe(true);
      // a process that left the host's group is reached only through its cgroup
      if (cgroups.length > 0) expect(escapedGone).toBe(true);
    });
  }

  it("SIGTERM with a unit lock held: unit-lock's handler still removes the lock and exits 143, and the hosts die", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-sup-unit-'));
    made.push(dir);
    const unit = join(dir, 'u');
    const { how, hostGone, escapedGone, cgroups } = await signalled('SIGTERM', unit);
    expect(how).toEqual({ code: 143, signal: null });
    expect(existsSync(`${unit}.lock`)).toBe(false);
    expect(hostGone).toBe(true);
    if (cgroups.length > 0) expect(escapedGone).toBe(true);
  });
});

const probe = hostLimiter('policy host', { processes: 64 });
const noCgroup = probe.cgroups.length === 0;
await releaseCgroups(probe.cgroups);

describe("a host's cgroup before a fresh host enters it", () => {
  if (noCgroup)
    console.warn('skipped: no writable cgroup here (IMEP_CGROUPS=off, or neither cgroup v2 nor a v1 pids hierarchy)');

  async function supervised() {
    const limiter = hostLimiter('policy host', { processes: 64 });
    const ipc = await privateIpcEndpoint();
    const escapeNext = join(ipc.dir, 'escape-next');
    const lite = liteServerCommand(ipc.endpoint);
    // only a host started while escape-next exists starts a `sleep` in a session of its own (out of its group)
    const script =
      'if [ -e "$ESCAPE" ]; then rm -f "$ESCAPE"; setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$ESCAPE.pid"; fi; exec "$0" "$@"';
    const command = limiter.finish(
      { ...lite, file: '/bin/sh', args: ['-c', script, lite.file, ...lite.args], env: { ESCAPE: escapeNext } },
      false,
    );
    const sup = new ServerSupervisor(command, { endpoint: ipc.endpoint, readyTimeoutMs: 30_000 });
    const escape = async (): Promise<number> => {
      writeFileSync(escapeNext, '');
      await sup.start();
      return Number(readFileSync(`${escapeNext}.pid`, 'utf8').trim());
    };
    return { sup, escape, cgroups: limiter.cgroups, dispose: async () => (await sup.dispose(), await ipc.dispose()) };
  }

  it.skipIf(noCgroup)(
    'a host that died (SIGKILL: the OOM killer, a crash): after the restart the cgroup holds the new host alone',
    async () => {
      const { sup, escape, cgroups, dispose } = await supervised();
      try {
        const escaped = await escape();
        const old = sup.pid as number;
        for (const dir of cgroups) expect(procsOf(dir).sort()).toEqual([old, escaped].sort());
        sup.signal('SIGKILL');
        await sup.restart();
        expect(sup.pid).not.toBe(old);
        expect(await goneWithin(escaped, 3000)).toBe(true);
        for (const dir of cgroups) expect(procsOf(dir)).toEqual([sup.pid]);
      } finally {
        await dispose();
      }
    },
  );

  it.skipIf(noCgroup)(
    'a host that exits at once on SIGTERM (a stop, a restart): after the restart the cgroup holds the new host alone',
    async () => {
      const { sup, escape, cgroups, dispose } = await supervised();
      try {
        const escaped = await escape();
        const old = sup.pid as number;
        await sup.restart();
        expect(sup.exitStatus).toBeUndefined();
        expect(sup.pid).not.toBe(old);
        expect(await goneWithin(escaped, 3000)).toBe(true);
        for (const dir of cgroups) expect(procsOf(dir)).toEqual([sup.pid]);
      } finally {
        await dispose();
      }
    },
  );
});
