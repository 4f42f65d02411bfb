/**
 * One writer per unit or shard (src/evidence/unit-lock.ts): a second taker refuses while the holder lives (in this
 * process or another on this host), a lock left by a process that is gone is taken over and named, a lock from
 * another host is refused with its holder; and two runs of one unit at once: one refuses, the other writes every
 * row once. RowSink.drain refuses to report a run complete while planned rows are unwritten.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import { acquireLock, setRemoteHolderCheck, type Holder } from '../../src/evidence/unit-lock.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { RowSink } from '../../src/campaign/index.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from '../campaign/helpers.js';

const errOf = async (p: Promise<unknown>): Promise<{ code: string; message: string }> =>
  p.then(
    () => ({ code: 'none', message: '' }),
    (e: unknown) => (isImepError(e) ? { code: e.code, message: e.message } : { code: 'other', message: String(e) }),
  );

describe('unit lock', () => {
  it('refuses a second taker in this process until released', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'imep-lock-')), 'u.lock');
    const a = await acquireLock(file, 'unit u');
    const second = await errOf(acquireLock(file, 'unit u'));
    expect(second.code).toBe('E_OUT_OF_ORDER');
    expect(second.message).toMatch(/unit u is being written by another imep run in this process/);
    await a.release();
    expect(existsSync(file)).toBe(false);
    const b = await acquireLock(file, 'unit u');
    expect(b.tookOverFrom).toBeNull();
    await b.release();
  });

  it('two takers at once (in one process): exactly one holds the lock, every time (issue 22: both refused under load)', async () => {
    // before: the second taker could read the first's lock file while it was still empty, take it for a lock left
    // half-written by a dead holder, move it aside and take the lock too — two holders, whose runs then both failed
    const dir = mkdtempSync(join(tmpdir(), 'imep-lock-'));
    const holders: number[] = [];
    for (let i = 0; i < 100; i++) {
      const file = join(dir, `u${i}.lock`);
      const rs = await Promise.allSettled([
        acquireLock(file, 'unit u'),
        acquireLock(file, 'unit u'),
        acquireLock(file, 'unit u'),
      ]);
      holders.push(rs.filter((r) => r.status === 'fulfilled').length);
      for (const r of rs)
        if (r.status === 'rejected') expect(isImepError(r.reason) && r.reason.code).toBe('E_OUT_OF_ORDER');
      for (const r of rs) if (r.status === 'fulfilled') await r.value.release();
    }
    expect(holders.filter((n) => n !== 1)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]); // no lock and no temp file left behind
  });

  it('takes over a lock whose process is gone, naming it; refuses one held on another host', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-lock-'));
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(gone.stdout);
    const host = (await import('node:os')).hostname();
    const stale = join(dir, 'stale.lock');
    writeFileSync(
      stale,
      JSON.stringify({ pid: deadPid, host, startedAt: '2026-01-01T00:00:00Z', command: 'campaign run x' }),
    );
    const lock = await acquireLock(stale, 'unit s');
    expect(lock.tookOverFrom?.pid).toBe(deadPid);
    expect(JSON.parse(readFileSync(stale, 'utf8')).pid).toBe(process.pid);
    await lock.release();

    const remote = join(dir, 'remote.lock');
    writeFileSync(
      remote,
      JSON.stringify({
        pid: 1,
        host: 'node-17',
        startedAt: '2026-01-01T00:00:00Z',
        command: 'cluster shard-run u --shard 1/4',
      }),
    );
    const err = await errOf(acquireLock(remote, 'shard 1/4 of u'));
    expect(err.code).toBe('E_OUT_OF_ORDER');
    expect(err.message).toMatch(
      /shard 1\/4 of u is being written by pid 1 on host node-17 .*cluster shard-run u --shard 1\/4/,
    );
    expect(existsSync(remote)).toBe(true); // untouched
  });

  it("another host's lock is taken over only when the registered remote check says its holder is gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-lock-'));
    const file = join(dir, 'shard.lock');
    const held = {
      pid: 4242,
      host: 'node-17',
      startedAt: '2026-01-01T00:00:00Z',
      command: 'cluster shard-run u --shard 1/4',
      slurmJob: '812_1',
    };
    const asked: Holder[] = [];
    try {
      for (const answer of [false, null]) {
        writeFileSync(file, JSON.stringify(held));
        setRemoteHolderCheck(async (h) => {
          asked.push(h);
          return answer;
        });
        const err = await errOf(acquireLock(file, 'shard 1/4 of u'));
        expect([err.code, err.message]).toEqual([
          'E_OUT_OF_ORDER',
          'shard 1/4 of u is being written by pid 4242 on host node-17, SLURM job 812_1 (since 2026-01-01T00:00:00Z: imep cluster shard-run u --shard 1/4)',
        ]);
        expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(held); // untouched
      }
      setRemoteHolderCheck(async (h) => {
        asked.push(h);
        return true;
      });
      const lock = await acquireLock(file, 'shard 1/4 of u');
      expect(lock.tookOverFrom).toEqual(held);
      expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(process.pid);
      await lock.release();
      expect(asked).toEqual([held, held, held]);
    } finally {
      setRemoteHolderCheck(null);
    }
  });

  it('a holder told to stop (SIGTERM, SIGINT) removes its locks and exits with 128 + the signal', async () => {
    const { spawn } = await import('node:child_process');
    const dist = join(process.cwd(), 'dist/evidence/unit-lock.js');
    for (const [signal, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'imep-lock-'));
      const file = join(dir, 'u.lock');
      const other = join(dir, 'other.lock');
      writeFileSync(other, 'someone else\n');
      const child = spawn(
        process.execPath,
        [
          '-e',
          `import(${JSON.stringify(dist)}).then(async (m) => { await m.acquireLock(${JSON.stringify(file)}, 'unit u'); process.stdout.write('held\\n'); setInterval(() => {}, 1000); })`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve()),
      );
      expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(child.pid);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      child.kill(signal);
      expect(await exited).toBe(code);
      expect(existsSync(file)).toBe(false);
      expect(readFileSync(other, 'utf8')).toBe('someone else\n'); // only its own locks
    }
  });

  it('two runs of one unit at once: one refuses, the other writes every row once', async () => {
    const whole = sandbox();
    const want = readFileSync(
      join(
        await runCampaign(
          writeProtocol(whole, 'blackout.yaml', blackoutYaml({ n: 4, sha: whole.checkpointSha })),
          scriptedOptions(whole, 'shell'),
        ),
        'rows/rows.jsonl',
      ),
      'utf8',
    );
    const race = sandbox();
    const raceFile = writeProtocol(race, 'blackout.yaml', blackoutYaml({ n: 4, sha: race.checkpointSha }));
    const unit = await precommitCampaign(raceFile, scriptedOptions(race, 'shell'));
    const results = await Promise.allSettled([
      runCampaign(raceFile, scriptedOptions(race, 'shell')),
      runCampaign(raceFile, scriptedOptions(race, 'shell')),
    ]);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    const reason = (refused[0] as PromiseRejectedResult).reason as unknown;
    expect(isImepError(reason) && reason.code).toBe('E_OUT_OF_ORDER');
    expect(readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')).toBe(want);
    expect(existsSync(`${unit}.lock`)).toBe(false);
  }, 120_000);

  it('drain refuses a run that ends with planned rows unwritten', async () => {
    const written: unknown[] = [];
    const sink = new RowSink(
      {
        appendRow: async (r) => void written.push(r),
        appendTiming: async () => undefined,
        appendTrace: async () => undefined,
      },
      [0, 1, 2],
      new Map(),
      'rows.jsonl',
    );
    const err = await errOf(sink.drain());
    expect(err.code).toBe('E_INTERNAL');
    expect(err.message).toMatch(/the run ended with 3 of its rows not written \(seq 0, 1, 2\)/);
  });
});
