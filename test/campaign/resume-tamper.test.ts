/**
 * Resume refuses a rows file that a crash cannot have left: a row that is not the planned episode at its seq
 * (appended or edited by hand, canonical or not), a line not in canonical form, and committed rows gone from
 * the end of the file while their side lines remain (which a torn-tail repair would otherwise paper over by
 * re-running those episodes). A plain crash still resumes to the uninterrupted bytes.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { isImepError } from '../../src/core/errors.js';
import { completeRun } from '../../src/evidence/transitions/formal-run.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { blackoutYaml, crashFormalRun, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

/** A unit whose formal run crashed after `stopAt` durable rows; returns the unit and its protocol file. */
async function crashedUnit(stopAt: number): Promise<{ unit: string; file: string; box: ReturnType<typeof sandbox> }> {
  const box = sandbox();
  const file = writeProtocol(box, 'blackout.yaml', blackoutYaml({ n: 4, sha: box.checkpointSha }));
  const unit = await precommitCampaign(file, scriptedOptions(box, 'shell'));
  await crashFormalRun(unit, file, 'shell', stopAt, 2);
  return { unit, file, box };
}

async function resumeRefusal(
  file: string,
  box: ReturnType<typeof sandbox>,
): Promise<{ code: string; message: string; file?: string }> {
  const err = await runCampaign(file, scriptedOptions(box, 'shell')).then(
    () => null,
    (e: unknown) => e,
  );
  if (!isImepError(err)) throw new Error(`expected an ImepError, got ${String(err)}`);
  return { code: err.code, message: err.message, ...(err.file === undefined ? {} : { file: err.file }) };
}

const rowsOf = (unit: string): string[] => readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');

describe('resume: rows a crash cannot leave are refused', () => {
  it('a canonical row appended by hand that is not the planned episode at its seq', async () => {
    const { unit, file, box } = await crashedUnit(9);
    const rows = rowsOf(unit);
    const forged = { ...(JSON.parse(rows[8]!) as Record<string, unknown>), seq: 9, success: true };
    appendFileSync(join(unit, 'rows/rows.jsonl'), `${canonicalJson(forged)}\n`);
    const err = await resumeRefusal(file, box);
    expect(err.code).toBe('E_UNIT_TAMPERED');
    expect(err.file).toBe(join(unit, 'rows/rows.jsonl'));
    expect(err.message).toMatch(/line 10 \(seq 9\) is not the planned episode: its \w+ is .*, the plan's /);
  }, 60_000);

  it('a row rewritten out of canonical form', async () => {
    const { unit, file, box } = await crashedUnit(9);
    const rows = rowsOf(unit);
    rows[4] = rows[4]!.replace('{', '{ ');
    writeFileSync(join(unit, 'rows/rows.jsonl'), `${rows.join('\n')}\n`);
    const err = await resumeRefusal(file, box);
    expect(err.code).toBe('E_UNIT_TAMPERED');
    expect(err.message).toMatch(/line 5 \(seq 4\) is not in the canonical form imep writes/);
  }, 60_000);

  it('committed rows cut from the end while their side lines remain', async () => {
    const { unit, file, box } = await crashedUnit(9);
    const rows = rowsOf(unit);
    writeFileSync(join(unit, 'rows/rows.jsonl'), `${rows.slice(0, 5).join('\n')}\n${rows[5]!.slice(0, 20)}`);
    const err = await resumeRefusal(file, box);
    expect(err.code).toBe('E_UNIT_TAMPERED');
    expect(err.message).toMatch(
      /belongs to row seq [6-8], but the rows file ends before seq 5: committed rows are missing/,
    );
    // nothing was re-run or cut behind the refusal
    expect(rowsOf(unit)).toHaveLength(6);
  }, 60_000);

  it('completion refuses a full rows file with a row that is not its planned episode (nothing is sealed)', async () => {
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
    )
      .trimEnd()
      .split('\n');
    const { unit } = await crashedUnit(9);
    const rest = want
      .slice(9)
      .map((line, i) =>
        i === 3 ? canonicalJson({ ...(JSON.parse(line) as Record<string, unknown>), attempt: 2 }) : line,
      );
    appendFileSync(join(unit, 'rows/rows.jsonl'), `${rest.join('\n')}\n`);
    const err = await completeRun(unit).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isImepError(err) && err.code).toBe('E_UNIT_TAMPERED');
    expect(String((err as Error).message)).toMatch(
      /line 13 \(seq 12\) is not the planned episode: its attempt is 2, the plan's 1/,
    );
  }, 60_000);

  it('a plain crash (a torn last row, its side lines) still resumes to the uninterrupted rows', async () => {
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
    const { unit, file, box } = await crashedUnit(9);
    appendFileSync(join(unit, 'rows/rows.jsonl'), want.split('\n')[9]!.slice(0, 25));
    await runCampaign(file, scriptedOptions(box, 'shell'));
    expect(readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')).toBe(want);
  }, 60_000);
});
