import { describe, expect, it } from 'vitest';
import { ProgressDisplay } from '../../src/campaign/index.js';
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
});
