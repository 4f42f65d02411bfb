import { chmodSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EpisodeRowSchema, EpisodeTimingSchema, type EpisodeRow } from '../../src/evidence/records/episode-row.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { loadProtocolSync } from '../../src/protocol/index.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

function rowsOf(dir: string): { text: string; rows: EpisodeRow[] } {
  const text = readFileSync(join(dir, 'rows/rows.jsonl'), 'utf8');
  return {
    text,
    rows: text
      .trimEnd()
      .split('\n')
      .map((l) => EpisodeRowSchema.parse(JSON.parse(l))),
  };
}

describe('campaign runner: the blackout ladder with a scripted ShellGame policy', () => {
  const box = sandbox();
  const file = writeProtocol(box, 'blackout-12.yaml', blackoutYaml({ n: 12, sha: box.checkpointSha }));
  const run = (() => {
    let p: Promise<string> | null = null;
    return () => (p ??= runCampaign(file, scriptedOptions(box, 'shell')));
  })();

  it('precommits, runs every planned episode and seals the unit named <id>-<hash12>', async () => {
    const dir = await run();
    const { hash } = loadProtocolSync(file);
    expect(basename(dir)).toBe(`shellgame-blackout-${hash.slice(0, 12)}`);
    expect((await readUnitState(dir)).state).toBe('sealed');
    const { rows } = rowsOf(dir);
    expect(rows.length).toBe(7 * 12 * 2);
    rows.forEach((r, i) => expect(r.seq).toBe(i));
    expect(rows.every((r) => r.status === 'ok' && r.tries === 1)).toBe(true);
    const timings = readFileSync(join(dir, 'rows/timings.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => EpisodeTimingSchema.parse(JSON.parse(l)));
    expect(timings.map((t) => t.seq)).toEqual(rows.map((r) => r.seq));
  });

  it('follows the canonical order wave → condition → task → seed → attempt', async () => {
    const { rows } = rowsOf(await run());
    const order = [...new Set(rows.map((r) => `${r.wave}/${r.condition}`))];
    expect(order).toEqual(['1/A', '1/S_pi', '1/T_mu', '1/U', '2/A', '2/N_blk', '2/C']);
    for (let i = 0; i < rows.length; i += 2) {
      expect(rows[i]?.attempt).toBe(1);
      expect(rows[i + 1]).toMatchObject({ attempt: 2, scopeId: rows[i]?.scopeId, condition: rows[i]?.condition });
    }
  });

  it('N_blk rows have empty reads on every read; A rows read history', async () => {
    const { rows } = rowsOf(await run());
    const n = rows.filter((r) => r.condition === 'N_blk');
    expect(n.length).toBe(24);
    for (const r of n) {
      expect(r.reads.total).toBeGreaterThan(0);
      expect(r.reads.empty).toBe(r.reads.total);
      expect(r.reads.emptyPositions.length).toBe(r.reads.total);
      expect(r.reads.covered).toBeNull();
    }
    for (const r of rows.filter((x) => x.condition === 'A')) {
      expect(r.reads.emptyPositions).toEqual([1]);
      expect(r.reads.withHistory).toBe(r.reads.total - 1);
      expect(r.reads.substituted).toBe(0);
      expect(r.reads.covered).toBeNull();
    }
  });

  it('C rows equal A rows on outcome and action digest; both A waves agree byte for byte but for seq/wave', async () => {
    const { rows } = rowsOf(await run());
    const key = (r: EpisodeRow): string => `${r.task}/${r.seed}/${r.attempt}`;
    const a2 = new Map(rows.filter((r) => r.condition === 'A' && r.wave === 2).map((r) => [key(r), r]));
    const a1 = new Map(rows.filter((r) => r.condition === 'A' && r.wave === 1).map((r) => [key(r), r]));
    for (const c of rows.filter((r) => r.condition === 'C')) {
      const a = a2.get(key(c));
      expect(a).toBeDefined();
      expect(c.success).toBe(a?.success);
      expect(c.actionDigest).toBe(a?.actionDigest);
      expect(c.reads.contentDigest).toBe(a?.reads.contentDigest);
      const { seq: _s, wave: _w, ...rest } = a1.get(key(c)) as EpisodeRow;
      const { seq: _s2, wave: _w2, ...rest2 } = a as EpisodeRow;
      expect(rest2).toEqual(rest);
    }
  });

  it('S_pi / T_mu / U rows substitute every read with history, change digests, and carry coverage', async () => {
    const { rows } = rowsOf(await run());
    for (const cond of ['S_pi', 'T_mu', 'U']) {
      const rs = rows.filter((r) => r.condition === cond);
      expect(rs.length).toBe(24);
      for (const r of rs) {
        expect(r.reads.substituted + r.reads.substitutedUnchanged).toBe(r.reads.withHistory);
        expect(r.reads.decisionQueries).toBeGreaterThan(0);
        expect(typeof r.reads.covered).toBe('boolean');
      }
      expect(rs.reduce((s, r) => s + r.reads.substituted, 0)).toBeGreaterThan(0);
    }
    // a permutation of [1,0,0,1] changes the read; the coverage of S_pi is 1 here
    expect(rows.filter((r) => r.condition === 'S_pi').every((r) => r.reads.covered === true)).toBe(true);
    // and it changes decisions: some S_pi outcome differs from A
    const a = new Map(
      rows.filter((r) => r.condition === 'A' && r.wave === 1).map((r) => [`${r.seed}/${r.attempt}`, r.actionDigest]),
    );
    expect(
      rows.filter((r) => r.condition === 'S_pi').some((r) => a.get(`${r.seed}/${r.attempt}`) !== r.actionDigest),
    ).toBe(true);
  });

  it('is deterministic: another run (batch 1, fresh campaigns dir) gives byte-identical rows', async () => {
    const dir = await run();
    const other = sandbox();
    const file2 = writeProtocol(other, 'blackout-12.yaml', blackoutYaml({ n: 12, sha: other.checkpointSha }));
    expect(readFileSync(file2, 'utf8')).toBe(readFileSync(file, 'utf8'));
    const dir2 = await runCampaign(file2, scriptedOptions(other, 'shell', { batchSize: 1 }));
    expect(rowsOf(dir2).text).toBe(rowsOf(dir).text);
    const dir3 = await runCampaign(
      writeProtocol(sandbox(), 'b.yaml', blackoutYaml({ n: 12, sha: other.checkpointSha })),
      { ...scriptedOptions(other, 'shell', { batchSize: 7 }), campaignsDir: join(other.dir, 'c3') },
    );
    expect(rowsOf(dir3).text).toBe(rowsOf(dir).text);
  });

  it('running the same protocol again prints the status and the next command, never a second unit', async () => {
    const dir = await run();
    const opts = scriptedOptions(box, 'shell');
    expect(await runCampaign(file, opts)).toBe(dir);
    expect(opts.lines.join('\n')).toMatch(/sealed/);
    expect(opts.lines.join('\n')).toMatch(
      new RegExp(`next: imep campaign adjudicate ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });

  it('running it again after a seal killed between unit.json and seal.json completes the seal (resume never skips it)', async () => {
    const dir = await run();
    const writable = (d: string): void => {
      chmodSync(d, 0o755);
      for (const e of readdirSync(d)) {
        const p = join(d, e);
        if (statSync(p).isDirectory()) writable(p);
        else chmodSync(p, 0o644);
      }
    };
    writable(dir); // the kill lands before the seal makes the unit read-only
    rmSync(join(dir, 'seal.json'));
    expect((await readUnitState(dir)).sealInterrupted).toBe(true);
    const opts = scriptedOptions(box, 'shell');
    expect(await runCampaign(file, opts)).toBe(dir);
    expect(opts.lines.join('\n')).toMatch(/^sealed .*: 168 rows, Merkle root [0-9a-f]{64}$/m);
    const snap = await readUnitState(dir);
    expect({ state: snap.state, sealInterrupted: snap.sealInterrupted }).toEqual({
      state: 'sealed',
      sealInterrupted: false,
    });
    expect((await verifyUnit(dir)).ok).toBe(true);
  });
});
