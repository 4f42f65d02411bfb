/**
 * Ctrl-C on a real `imep campaign run` child (issue #35 item 4): SIGINT mid-run stops it cleanly — exit 130, one line
 * with the rows durable in rows.jsonl and the command that resumes — and that command resumes at exactly that row and
 * ends with the rows of an uninterrupted run, byte for byte. The progress lines show the durable rows beside the done.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blackoutRows, imep, lineCount, smallBlackoutYaml, unitIn, unitRows } from './support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-rel-sigint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SIGINT during `imep campaign run`', () => {
  it('says how many rows are durable and how to resume; the resume starts there and ends byte-identical', async () => {
    const n = 40;
    const planned = blackoutRows(n);
    writeFileSync(join(dir, 'p.yaml'), smallBlackoutYaml(n));
    const whole = await imep(['campaign', 'run', 'p.yaml', '--campaigns-dir', 'A', '--batch', '16'], dir);
    expect(whole.code, whole.stderr).toBe(0);
    const want = readFileSync(join(unitIn(join(dir, 'A')) as string, 'rows/rows.jsonl'));

    const args = ['campaign', 'run', 'p.yaml', '--campaigns-dir', 'B', '--batch', '4'];
    const { file: rowsFile, count: rowsNow } = unitRows(join(dir, 'B'));
    const cut = await imep(args, dir, { killWhen: () => rowsNow() >= 90, killSignal: 'SIGINT' });
    expect(cut.signal).toBeNull();
    expect(cut.code, cut.stderr).toBe(130);
    const m = /imep: interrupted: (\d+)\/(\d+) rows durable in (\S+); resume with: (.+)$/m.exec(cut.stderr);
    expect(m, cut.stderr).not.toBeNull();
    const [, durable, total, unit, command] = m as unknown as [string, string, string, string, string];
    expect(Number(total)).toBe(planned);
    expect(join(dir, unit)).toBe(unitIn(join(dir, 'B')));
    expect(command).toBe(`imep ${args.join(' ')}`);
    // the printed count is the rows in the file, complete lines only (a clean stop leaves no torn tail)
    const rowsText = readFileSync(rowsFile() as string, 'utf8');
    expect(Number(durable)).toBe(lineCount(rowsFile() as string));
    expect(rowsText.endsWith('\n')).toBe(true);
    expect(Number(durable)).toBeGreaterThanOrEqual(90);
    expect(Number(durable)).toBeLessThan(planned);
    expect(cut.stderr).toMatch(/SIGINT: stopping/);
    // the progress (stderr, not a TTY: plain lines) shows the durable rows beside the episodes done
    expect(cut.stderr).toMatch(/all \d+\/\d+ \(\d+%\) · \d+ durable · |· \d+ durable · /);

    const again = await imep(args, dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`resuming ${unit} at row ${durable} of ${planned}`);
    expect(readFileSync(rowsFile() as string).equals(want)).toBe(true);

    // SIGTERM (what scancel and a time limit send first) stops the same way
    const termArgs = ['campaign', 'run', 'p.yaml', '--campaigns-dir', 'C', '--batch', '4'];
    const termRows = (): number => {
      const u = unitIn(join(dir, 'C'));
      return u === null ? 0 : lineCount(join(u, 'rows/rows.jsonl'));
    };
    const term = await imep(termArgs, dir, { killWhen: () => termRows() >= 30, killSignal: 'SIGTERM' });
    expect(term.code, term.stderr).toBe(130);
    const t =
      /imep: interrupted: (\d+)\/\d+ rows durable in (\S+); resume with: imep campaign run p\.yaml --campaigns-dir C --batch 4$/m.exec(
        term.stderr,
      );
    expect(t, term.stderr).not.toBeNull();
    expect(Number(t?.[1])).toBe(termRows());
    const done = await imep(termArgs, dir);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`at row ${t?.[1]} of ${planned}`);
    expect(readFileSync(join(unitIn(join(dir, 'C')) as string, 'rows/rows.jsonl')).equals(want)).toBe(true);
  }, 240_000);
});
