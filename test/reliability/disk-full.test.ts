import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  enospcRun,
  formatScenario,
  fsizeRows,
  fsizeSeal,
  makeFixture,
  readonlyFolder,
  type Fixture,
  type Scenario,
} from './support/disk-full.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture(4);
}, 120_000);
afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));

/** What the one line must tell the user to do, per errno. */
const ERRNO_HINT: Record<string, RegExp> = {
  EFBIG: /file-size limit.*imep campaign resume/,
  ENOSPC: /file system is full.*imep campaign resume/,
};

/** The failure half: one clear E_IO line (exit 4) naming a file of the unit, nothing half-written, rows a durable prefix. */
function expectCleanFailure(s: Scenario, errno: string, fileRe: RegExp): void {
  const text = formatScenario(s);
  expect(s.exit?.code, `${text}\n${s.exit?.stderr}`).toBe(4);
  expect(s.errorLine, text).toMatch(/^imep: \/.*: could not .*\(E[A-Z]+\)/);
  expect(s.errno, text).toBe(errno);
  expect(s.errorLine, text).toMatch(ERRNO_HINT[errno] as RegExp);
  expect(s.namedFile, text).toMatch(fileRe);
  expect(s.prefixOk, text).toBe(true);
  expect(s.sealJsonAfterFailure, text).toBe(false);
  expect(s.tempFiles, text).toEqual([]);
  expect(s.statusCode, text).toBe(0);
}

function expectRecovered(s: Scenario): void {
  const text = `${formatScenario(s)} ${s.notes ?? ''}`;
  expect(s.recoverCode, text).toBe(0);
  expect(s.rowsIdentical, text).toBe(true);
  expect(s.verifyCode, text).toBe(0);
}

describe('disk full / file too large / unwritable folder', () => {
  it('a run whose rows cannot grow (prlimit --fsize → EFBIG): clear error, durable prefix kept, resume finishes identically', async () => {
    const s = await fsizeRows(fx);
    expectCleanFailure(s, 'EFBIG', /\/(rows|traces)\/[a-z_.-]+\.jsonl$/);
    expect(s.durableRows).toBeGreaterThan(0);
    expect(s.durableRows).toBeLessThan(fx.planned);
    expect(s.statusLine).toMatch(/running/);
    expectRecovered(s);
  }, 120_000);

  it('a seal whose manifest cannot be written: no seal.json and no temp file left; sealing again succeeds and verifies', async () => {
    const s = await fsizeSeal(fx);
    expectCleanFailure(s, 'EFBIG', /\/seal\.json$/);
    expect(s.durableRows).toBe(fx.planned);
    // the interrupted seal is the next step, not adjudication
    expect(s.statusText).toMatch(/— next: imep campaign seal \S+\n/);
    expect(s.statusText).toMatch(/seal.json: missing .*run it again/);
    expectRecovered(s);
  }, 120_000);

  it('true ENOSPC on a tiny tmpfs (root only)', async (ctx) => {
    const s = await enospcRun(fx);
    if (s.skipped) ctx.skip(s.skipped);
    expectCleanFailure(s, 'ENOSPC', /\/(rows|traces)\/[a-z_.-]+\.jsonl$/);
    expect(s.durableRows).toBeLessThan(fx.planned);
    expectRecovered(s);
  }, 120_000);

  it('a read-only campaigns folder (as user nobody when root): E_IO naming the folder, nothing created', async (ctx) => {
    const s = await readonlyFolder(fx);
    if (s.skipped) ctx.skip(s.skipped);
    expect(s.exit?.code, `${formatScenario(s)}\n${s.exit?.stderr}`).toBe(4);
    expect(s.errno).toBe('EACCES');
    expect(s.errorLine).toMatch(/not writable by this user/);
    expect(s.namedFile).toMatch(/\/ro\//);
    expect(s.tempFiles).toEqual([]);
  }, 60_000);
});
