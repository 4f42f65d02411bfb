/**
 * The orchestrator killed with SIGKILL at K seeded points of a small campaign, resumed each time.
 *
 * Schedule (deterministic in `seed`, drawn by the project PRNG, xoshiro128** v1): K distinct row counts
 * in [0, planned − 1), sorted, each with a delay in [0, maxDelayMs) ms. Run i (`imep campaign run FILE`,
 * which resumes a running unit) is SIGKILLed once the rows file holds ≥ threshold_i complete lines plus
 * its delay — so kills land during startup, the precommit, mid-batch and mid-append. After every kill
 * the complete lines of rows.jsonl must be a byte prefix of the uninterrupted run's rows (a torn tail is
 * allowed and counted); after the last kill one more run finishes the campaign and seals it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../../../src/core/prng.js';
import { blackoutRows, imep, lineCount, smallBlackoutYaml, unitIn, unitRows } from './cli.js';

export interface KillResumeOptions {
  readonly kills: number;
  readonly seed: string;
  /** Seeds per condition (planned rows = 14 n). */
  readonly n: number;
  readonly maxDelayMs: number;
  readonly batchReference: number;
  readonly batchKilled: number;
  readonly keep?: boolean;
}

export interface KillRecord {
  readonly threshold: number;
  readonly delayMs: number;
  /** Complete rows before this run started and after it ended. */
  readonly rowsBefore: number;
  readonly rowsAfter: number;
  readonly killed: boolean;
  /** The complete lines on disk are a byte prefix of the reference rows. */
  readonly prefixOk: boolean;
  readonly tornBytes: number;
}

export interface KillResumeReport {
  readonly planned: number;
  readonly schedule: readonly { threshold: number; delayMs: number }[];
  readonly runs: readonly KillRecord[];
  readonly kills: number;
  readonly killedBeforeFirstRow: number;
  readonly tornTails: number;
  readonly resumeMessages: number;
  readonly finalCode: number | null;
  readonly finalRows: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly byteIdentical: boolean;
  readonly timingsSeqsOk: boolean;
  readonly verifyCode: number | null;
  readonly wallSeconds: number;
  readonly errors: readonly string[];
}

export function killSchedule(
  seed: string,
  kills: number,
  planned: number,
  maxDelayMs: number,
): { threshold: number; delayMs: number }[] {
  const prng = new Prng(seed);
  const picked = new Set<number>();
  if (kills > planned - 1) throw new RangeError(`cannot draw ${kills} distinct points from ${planned - 1} rows`);
  while (picked.size < kills) picked.add(prng.nextInt(planned - 1));
  const delays = prng.fork('delay');
  return [...picked].sort((a, b) => a - b).map((threshold) => ({ threshold, delayMs: delays.nextInt(maxDelayMs) }));
}

/** Bytes of the complete-lines prefix of a file and the size of its torn tail. */
function completePrefix(file: string): { prefix: Buffer; torn: number } {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return { prefix: Buffer.alloc(0), torn: 0 };
  }
  const end = buf.lastIndexOf(0x0a) + 1;
  return { prefix: buf.subarray(0, end), torn: buf.length - end };
}

export async function runKillResume(o: KillResumeOptions): Promise<KillResumeReport> {
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'imep-rel-kill-'));
  const errors: string[] = [];
  try {
    writeFileSync(join(dir, 'p.yaml'), smallBlackoutYaml(o.n));
    const planned = blackoutRows(o.n);
    const whole = await imep(
      ['campaign', 'run', 'p.yaml', '--campaigns-dir', 'A', '--batch', String(o.batchReference)],
      dir,
    );
    if (whole.code !== 0) throw new Error(`reference run failed (${whole.code}): ${whole.stderr}`);
    const refUnit = unitIn(join(dir, 'A')) as string;
    const want = readFileSync(join(refUnit, 'rows/rows.jsonl'));

    const { file: rowsFile, count: rowsNow } = unitRows(join(dir, 'B'));
    const schedule = killSchedule(o.seed, o.kills, planned, o.maxDelayMs);
    const args = ['campaign', 'run', 'p.yaml', '--campaigns-dir', 'B', '--batch', String(o.batchKilled)];
    const runs: KillRecord[] = [];
    let resumeMessages = 0;
    for (const { threshold, delayMs } of schedule) {
      const rowsBefore = rowsNow();
      const r = await imep(args, dir, { killWhen: () => rowsNow() >= threshold, killDelayMs: delayMs });
      if (/resuming .* at row/.test(r.stdout)) resumeMessages += 1;
      const killed = r.signal === 'SIGKILL';
      if (!killed && r.code !== 0) errors.push(`run at threshold ${threshold} exited ${r.code}: ${r.stderr.trim()}`);
      const f = rowsFile();
      const { prefix, torn } = f === null ? { prefix: Buffer.alloc(0), torn: 0 } : completePrefix(f);
      const prefixOk = prefix.length <= want.length && want.subarray(0, prefix.length).equals(prefix);
      runs.push({ threshold, delayMs, rowsBefore, rowsAfter: rowsNow(), killed, prefixOk, tornBytes: torn });
    }
    const last = await imep(args, dir);
    if (/resuming .* at row/.test(last.stdout)) resumeMessages += 1;
    if (last.code !== 0) errors.push(`final run exited ${last.code}: ${last.stderr.trim()}`);
    const unit = unitIn(join(dir, 'B')) as string;
    const got = readFileSync(join(unit, 'rows/rows.jsonl'));
    const seqs = got
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l) as { seq: number }).seq);
    const distinct = new Set(seqs);
    const timings = readFileSync(join(unit, 'rows/timings.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { seq: number }).seq);
    const verify = await imep(['campaign', 'verify', unit], dir);
    if (verify.code !== 0) errors.push(`verify exited ${verify.code}: ${verify.stderr.trim()}`);
    return {
      planned,
      schedule,
      runs,
      kills: runs.filter((r) => r.killed).length,
      killedBeforeFirstRow: runs.filter((r) => r.killed && r.rowsAfter === r.rowsBefore).length,
      tornTails: runs.filter((r) => r.tornBytes > 0).length,
      resumeMessages,
      finalCode: last.code,
      finalRows: seqs.length,
      lost: [...Array(planned).keys()].filter((s) => !distinct.has(s)).length,
      duplicated: seqs.length - distinct.size,
      byteIdentical: got.equals(want),
      timingsSeqsOk: timings.length === planned && timings.every((s, i) => s === i),
      verifyCode: verify.code,
      wallSeconds: (performance.now() - t0) / 1000,
      errors,
    };
  } finally {
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
}

export function formatKillResume(r: KillResumeReport, o: KillResumeOptions): string[] {
  const progressed = r.runs.filter((x) => x.killed && x.rowsAfter > x.rowsBefore).length;
  return [
    `orchestrator SIGKILL at ${o.kills} seeded points (prng xoshiro128** v1, seed "${o.seed}"; thresholds over ${r.planned} planned rows + delay 0–${o.maxDelayMs - 1} ms), blackout ladder n=${o.n}, batch ${o.batchKilled} (reference batch ${o.batchReference})`,
    `thresholds: ${r.schedule.map((s) => `${s.threshold}+${s.delayMs}ms`).join(' ')}`,
    `rows at each kill: ${r.runs.map((x) => (x.killed ? `${x.rowsAfter}` : `done`)).join(' ')}`,
    `kills: ${r.kills}/${o.kills} (${progressed} after new rows, ${r.killedBeforeFirstRow} before the run's first new row); torn final lines left: ${r.tornTails}; runs that resumed: ${r.resumeMessages}`,
    `durable rows a byte prefix of the uninterrupted run after every kill: ${r.runs.filter((x) => x.prefixOk).length}/${r.runs.length}`,
    `final: ${r.finalRows}/${r.planned} rows, lost ${r.lost}, duplicated ${r.duplicated}, byte-identical to the uninterrupted run: ${r.byteIdentical ? 'yes' : 'NO'}; timings seqs 0..${r.planned - 1}: ${r.timingsSeqsOk ? 'yes' : 'NO'}; verify exit ${r.verifyCode}`,
    `wall ${r.wallSeconds.toFixed(1)} s${r.errors.length ? `; errors: ${r.errors.join(' | ')}` : ''}`,
  ];
}
