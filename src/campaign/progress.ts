/**
 * The progress display: a subscriber of the runner. On a TTY it keeps one line up to date (the current
 * condition's done/total, the run's done/total, episodes per second and ETA); otherwise it prints plain
 * lines — one per ~5% of the run and one when a condition's segment completes — so logs stay readable.
 */
import type { PlannedEpisode } from '../protocol/index.js';
import type { RunnerSubscriber, UnitJob, UnitOutcome } from './types.js';

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

function eta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
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

  private rate(): { perSec: number; etaText: string } {
    const secs = (Date.now() - this.started) / 1000;
    const perSec = secs > 0 ? this.count / secs : 0;
    return { perSec, etaText: eta(perSec > 0 ? (this.total - this.count) / perSec : Number.NaN) };
  }

  private draw(k: string, segmentDone: boolean): void {
    const now = Date.now();
    if (!segmentDone && this.count < this.total && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const { perSec, etaText } = this.rate();
    const line = `${this.label}: ${k} ${this.done.get(k) ?? 0}/${this.totals.get(k) ?? 0} · all ${this.count}/${this.total} · ${perSec.toFixed(0)} ep/s · ETA ${etaText}`;
    this.out.write(`\r\u001b[2K${line}${this.count >= this.total ? '\n' : ''}`);
  }

  private plain(k: string, segmentDone: boolean): void {
    const pct = this.total === 0 ? 100 : Math.floor((this.count * 100) / this.total);
    const step = Math.floor(pct / 5) * 5;
    const { perSec, etaText } = this.rate();
    if (segmentDone) {
      this.out.write(
        `${this.label}: ${k} done (${this.totals.get(k) ?? 0} episodes) · all ${this.count}/${this.total} (${pct}%) · ${perSec.toFixed(0)} ep/s · ETA ${etaText}\n`,
      );
      this.lastPct = step;
    } else if (step > this.lastPct && step % 5 === 0 && step > 0) {
      this.lastPct = step;
      this.out.write(
        `${this.label}: ${this.count}/${this.total} (${step}%) · ${k} ${this.done.get(k) ?? 0}/${this.totals.get(k) ?? 0} · ${perSec.toFixed(0)} ep/s · ETA ${etaText}\n`,
      );
    }
  }
}
