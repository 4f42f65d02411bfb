/**
 * The S/T donor pre-pass has a progress line of its own (issue #35 item 5: it ran for minutes with no output on a real
 * simulator), with its count, speed and ETA; the main run's lines carry the durable rows, the pre-pass's do not (it
 * writes no rows). The shipped donor-swap protocol at n = 40, through the built CLI (stderr is not a TTY: plain lines).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { imep, ROOT } from '../reliability/support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-prepass-progress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('donor pre-pass progress', () => {
  it('prints a "done" line per S/T pre-pass with its count, and the durable rows on the main lines', async () => {
    const text = readFileSync(join(ROOT, 'protocols/shellgame-donor-swap.yaml'), 'utf8')
      .replace('- { start: 611000, end: 611199 }', '- { start: 611000, end: 611039 }')
      .replace(/^n: 200$/m, 'n: 40');
    writeFileSync(join(dir, 'p.yaml'), text);
    const r = await imep(['campaign', 'run', 'p.yaml', '--campaigns-dir', 'c', '--batch', '8'], dir);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n');
    const prepass = lines.filter((l) => l.startsWith('shellgame-donor-swap donor pre-pass: '));
    for (const k of ['S', 'T'])
      expect(prepass).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^shellgame-donor-swap donor pre-pass: ${k} \\(wave 1\\) done \\(40 episodes\\) · all 40/40 \\(100%\\) · [0-9.]+ (ep/s|s/ep) · ETA `,
          ),
        ),
      );
    expect(prepass.every((l) => !l.includes('durable'))).toBe(true);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^shellgame-donor-swap: T \(wave 1\) done \(40 episodes\) · all 120\/200 \(60%\) · \d+ durable · /,
      ),
    );
    expect(r.stderr).toMatch(/^sealing c\/shellgame-donor-swap-[0-9a-f]{12}: hashing every file into the manifest …$/m);
  }, 120_000);
});
