import { describe, expect, it } from 'vitest';
import { etaText, ProgressDisplay, rateAndEta, rateText } from '../../src/campaign/index.js';
import type { UnitJob } from '../../src/campaign/index.js';
import type { PlannedEpisode } from '../../src/protocol/plan.js';

function plan(conditions: string[], units: number): PlannedEpisode[] {
  const out: PlannedEpisode[] = [];
  for (const condition of conditions) {
    for (let u = 0; u < units; u++) {
      for (const attempt of [1, 2])
        out.push({
          seq: out.length,
          wave: 1,
          condition,
          task: 'T',
          seed: u,
          attempt,
          scopeId: `s${u}`,
          episodeId: `e${u}/${attempt}`,
        });
    }
  }
  return out;
}

function feed(p: ProgressDisplay, episodes: PlannedEpisode[]): void {
  for (let i = 0; i < episodes.length; i += 2) {
    const unit: UnitJob = { task: 'T', seed: 0, scopeId: 'x', episodes: episodes.slice(i, i + 2) };
    p.onUnitEnd(0, unit, { kind: 'ran', tries: 1, failedTries: [], statuses: ['ok', 'ok'], skipped: [false, false] });
  }
}

describe('progress display (a runner subscriber)', () => {
  it('prints plain lines per ~5% and per finished condition when not a TTY', () => {
    const out: string[] = [];
    const eps = plan(['A', 'N_blk'], 50);
    const p = new ProgressDisplay({ write: (t: string) => out.push(t), isTTY: false }, eps, 'ladder');
    feed(p, eps);
    const text = out.join('');
    expect(text).not.toContain('\r');
    expect(text).toMatch(/ladder: A \(wave 1\) done \(100 episodes\)/);
    expect(text).toMatch(/ladder: N_blk \(wave 1\) done \(100 episodes\) · all 200\/200 \(100%\)/);
    const lines = text.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(20);
    expect(lines.length).toBeLessThanOrEqual(25);
  });

  it('keeps one live line with done/total and ETA on a TTY', () => {
    const out: string[] = [];
    const eps = plan(['A'], 10);
    const p = new ProgressDisplay({ write: (t: string) => out.push(t), isTTY: true }, eps, 'ladder');
    feed(p, eps);
    expect(out.every((t) => t.startsWith('\r'))).toBe(true);
    expect(out.at(-1)).toMatch(/A \(wave 1\) 20\/20 · all 20\/20 · .* ep\/s · ETA/);
    expect(out.at(-1)?.endsWith('\n')).toBe(true);
  });

  it('shows the rows durable beside the episodes done when the run has a sink', () => {
    const out: string[] = [];
    const eps = plan(['A'], 10);
    let durable = 0;
    const p = new ProgressDisplay({ write: (t: string) => out.push(t), isTTY: true }, eps, 'ladder', () => durable);
    durable = 7;
    feed(p, eps);
    expect(out.at(-1)).toMatch(/all 20\/20 · 7 durable · .* · ETA/);
    const plain: string[] = [];
    const q = new ProgressDisplay({ write: (t: string) => plain.push(t), isTTY: false }, eps, 'ladder', () => 3);
    feed(q, eps);
    expect(plain.at(-1)).toMatch(/^ladder: A \(wave 1\) done \(20 episodes\) · all 20\/20 \(100%\) · 3 durable · /);
  });

  it('says when the run is done but the row writer is still behind', () => {
    const out: string[] = [];
    const eps = plan(['A'], 10);
    const p = new ProgressDisplay({ write: (t: string) => out.push(t), isTTY: false }, eps, 'ladder', () => 15);
    feed(p, eps);
    p.onSegmentEnd();
    expect(out.at(-1)).toBe('ladder: all 20 episodes done · making the last 5 rows durable …\n');
    const caught: string[] = [];
    const q = new ProgressDisplay({ write: (t: string) => caught.push(t), isTTY: false }, eps, 'ladder', () => 20);
    feed(q, eps);
    const before = caught.length;
    q.onSegmentEnd();
    expect(caught).toHaveLength(before);
  });

  it('a pre-pass display that ends within its quiet time prints only its "done" line when not a TTY', () => {
    const out: string[] = [];
    const eps = plan(['S'], 50);
    const p = new ProgressDisplay(
      { write: (t: string) => out.push(t), isTTY: false },
      eps,
      'x donor pre-pass',
      undefined,
      3,
    );
    feed(p, eps);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^x donor pre-pass: S \(wave 1\) done \(100 episodes\) · all 100\/100 \(100%\) · /);
    expect(out[0]).not.toContain('durable');
  });
});

describe('rate and ETA text', () => {
  it('says ep/s from 1 ep/s up and s/ep below', () => {
    expect(rateText(0.24)).toBe('4.2 s/ep');
    expect(rateText(0.5)).toBe('2.0 s/ep');
    expect(rateText(0.004)).toBe('250 s/ep');
    expect(rateText(1)).toBe('1.0 ep/s');
    expect(rateText(2.46)).toBe('2.5 ep/s');
    expect(rateText(9.96)).toBe('10.0 ep/s');
    expect(rateText(12.3)).toBe('12 ep/s');
    expect(rateText(377.4)).toBe('377 ep/s');
    expect(rateText(0)).toBe('– ep/s');
    expect(rateText(Number.NaN)).toBe('– ep/s');
  });

  it('says time left in s, m+s or h+m; "?" without a rate', () => {
    expect(etaText(0)).toBe('0s');
    expect(etaText(42.4)).toBe('42s');
    expect(etaText(75)).toBe('1m15s');
    expect(etaText(3599)).toBe('59m59s');
    expect(etaText(3725)).toBe('1h02m');
    expect(etaText(Number.NaN)).toBe('?');
    expect(etaText(-1)).toBe('?');
  });

  it('combines done, total and elapsed time', () => {
    // 12 real-simulator episodes in 50 s: 0.24 ep/s, 88 left → 366.7 s
    expect(rateAndEta(12, 100, 50)).toEqual({ rate: '4.2 s/ep', eta: '6m07s' });
    expect(rateAndEta(0, 100, 5)).toEqual({ rate: '– ep/s', eta: '?' });
    expect(rateAndEta(4800, 5600, 20)).toEqual({ rate: '240 ep/s', eta: '3s' });
  });
});
