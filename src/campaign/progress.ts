/**
 * The progress display: a subscriber of the runner. On a TTY it keeps one line up to date (the current
 * condition's done/total, the run's done/total, the rows durable in rows.jsonl when the run has a sink, the
 * speed — ep/s, or s/ep below 1 ep/s: rate-text.ts — and ETA); otherwise it prints plain lines — one per ~5% of
 * the run and one when a condition's segment completes — so logs stay readable. The donor pre-passes (S/T) get
 * one of their own (label "… pre-pass").
 *
 * "done" counts episodes the loop finished; "durable" counts rows fsync'd to rows.jsonl (the row sink's writes
 * lag the loop, more under load): an interrupted run resumes at the durable count, never at "done".
 */
import type { PlannedEpisode } from '../protocol/index.js';
import { rateAndEta } from './rate-text.js';
import type { RunnerSubscriber, UnitJob, UnitOutcome } from './types.js';

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

const keyOf = (wave: number, condition: string): string => `${condition} (wave ${wave})`;

export class ProgressDisplay implements RunnerSubscriber {
  private readonly totals = new Map<string, number>();
  private readonly done = new Map<string, number>();
  private readonly expected: Set<number>;
  private readonly total: number;
  private count = 0;
  private lastPct = -1;
  private readonly started = Date.now();
  private lastDraw = 0;

  constructor(
    private readonly out: ProgressStream,
    expected: readonly PlannedEpisode[],
    private readonly label = 'run',
    /** Rows of this run durable so far (the row sink's count); absent: no durable figure (a pre-pass writes no rows). */
    private readonly durable?: () => number,
    /** Plain (non-TTY) percent lines only once this many seconds have passed (a pre-pass that takes 1 s says "done" only). */
    private readonly plainAfterSec = 0,
  ) {
    this.expected = new Set(expected.map((e) => e.seq));
    this.total = expected.length;
    for (const e of expected) {
      const k = keyOf(e.wave, e.condition);
      this.totals.set(k, (this.totals.get(k) ?? 0) + 1);
    }
  }

  onUnitEnd(_slot: number, unit: UnitJob, _outcome: UnitOutcome): void {
    let n = 0;
    for (const e of unit.episodes) if (this.expected.has(e.seq)) n++;
    if (n === 0) return;
    const first = unit.episodes[0];
    if (first === undefined) return;
    const k = keyOf(first.wave, first.condition);
    const d = (this.done.get(k) ?? 0) + n;
    this.done.set(k, d);
    this.count += n;
    if (this.out.isTTY === true) this.draw(k, d === this.totals.get(k));
    else this.plain(k, d === this.totals.get(k));
  }

  /** The run's last segment ended: the row writer may still be behind (seconds on a loaded machine) — say so. */
  onSegmentEnd(): void {
    if (this.durable === undefined || this.count < this.total) return;
    const behind = this.total - this.durable();
    if (behind > 0)
      this.out.write(`${this.label}: all ${this.total} episodes done · making the last ${behind} rows durable …\n`);
  }

  private rate(): { perSec: string; etaText: string } {
    const { rate, eta } = rateAndEta(this.count, this.total, (Date.now() - this.started) / 1000);
    return { perSec: rate, etaText: eta };
  }

  /** " · 876 durable", or nothing without a sink. */
  private durableText(): string {
    return this.durable === undefined ? '' : ` · ${this.durable()} durable`;
  }

  private draw(k: string, segmentDone: boolean): void {
    const now = Date.now();
    if (!segmentDone && this.count < this.total && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const { perSec, etaText } = this.rate();
    const line = `${this.label}: ${k} ${this.done.get(k) ?? 0}/${this.totals.get(k) ?? 0} · all ${this.count}/${this.total}${this.durableText()} · ${perSec} · ETA ${etaText}`;
    this.out.write(`\r\u001b[2K${line}${this.count >= this.total ? '\n' : ''}`);
  }

  private plain(k: string, segmentDone: boolean): void {
    const pct = this.total === 0 ? 100 : Math.floor((this.count * 100) / this.total);
    const step = Math.floor(pct / 5) * 5;
    const { perSec, etaText } = this.rate();
    if (segmentDone) {
      this.out.write(
        `${this.label}: ${k} done (${this.totals.get(k) ?? 0} episodes) · all ${this.count}/${this.total} (${pct}%)${this.durableText()} · ${perSec} · ETA ${etaText}\n`,
      );
      this.lastPct = step;
    } else if (
      step > this.lastPct &&
      step % 5 === 0 &&
      step > 0 &&
      Date.now() - this.started >= this.plainAfterSec * 1000
    ) {
      this.lastPct = step;
      this.out.write(
        `${this.label}: ${this.count}/${this.total} (${step}%) · ${k} ${this.done.get(k) ?? 0}/${this.totals.get(k) ?? 0}${this.durableText()} · ${perSec} · ETA ${etaText}\n`,
      );
    }
  }
}
