/**
 * ServerSupervisor's hold on what it starts: a host's cgroup is emptied of everything the previous host left there
 * before a fresh host enters it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { privateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { releaseCgroups } from '../../src/bridges/cgroup-limits.js';
import { hostLimiter } from '../../src/bridges/resource-limits.js';
import { ServerSupervisor, liteServerCommand } from '../../src/bridges/supervisor.js';

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
