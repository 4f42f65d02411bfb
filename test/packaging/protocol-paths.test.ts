/**
 * Where a protocol's checkpoint resolves (docs/install.md, "Where a protocol's paths resolve"): the working folder,
 * then the protocol's folder, then the package (the checkpoints shipped with imep); the line a run prints names the
 * file used whenever it is not the working folder's. And `imep protocol example` from a folder outside the
 * repository: the listing, a byte-identical copy, the refusal to overwrite, an unknown name. Fast; always runs.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, checkpointSource, protocolRoots } from '../../src/campaign/index.js';
import { checkpointRoot } from '../../src/campaign/campaign-setup.js';
import { loadProtocolSync } from '../../src/protocol/index.js';
import { ROOT } from '../campaign/helpers.js';
import { runCli } from '../support/run-cli.js';

const SHIPPED = join(ROOT, 'protocols/shellgame-blackout.yaml');
const CHECKPOINT = 'checkpoints/lite-memvla/model.json';
const home = process.cwd();
afterEach(() => process.chdir(home));

/** A user's folder holding a copy of the quick start's protocol (and, when asked, of its checkpoint next to it). */
function studyFolder(withCheckpoint: boolean): { cwd: string; file: string; folder: string } {
  const dir = mkdtempSync(join(tmpdir(), 'imep-paths-'));
  const cwd = join(dir, 'cwd');
  const folder = join(dir, 'study');
  mkdirSync(cwd);
  mkdirSync(folder);
  const file = join(folder, 'my.yaml');
  cpSync(SHIPPED, file);
  if (withCheckpoint)
    cpSync(join(ROOT, 'checkpoints/lite-memvla'), join(folder, 'checkpoints/lite-memvla'), { recursive: true });
  return { cwd, file, folder };
}

describe("a protocol's checkpoint path", () => {
  it('resolves in the working folder first: nothing to say', () => {
    const protocol = loadProtocolSync(SHIPPED).protocol;
    expect(process.cwd()).toBe(ROOT);
    expect(checkpointRoot(protocol, {}, SHIPPED)).toBe(ROOT);
    expect(checkpointSource(protocol, {}, SHIPPED)).toBeNull();
  });

  it('then next to the protocol, and says so', () => {
    const s = studyFolder(true);
    process.chdir(s.cwd);
    const protocol = loadProtocolSync(s.file).protocol;
    expect(protocolRoots(s.file, {})).toEqual([s.cwd, s.folder, PACKAGE_ROOT]);
    expect(checkpointRoot(protocol, {}, s.file)).toBe(s.folder);
    expect(checkpointSource(protocol, {}, s.file)).toBe(
      `checkpoint ${CHECKPOINT}: ${join(s.folder, CHECKPOINT)}, next to the protocol (none in the working folder)`,
    );
  });

  it('then in the package (the one shipped with imep), and says so; an explicit root is the only root', () => {
    const s = studyFolder(false);
    process.chdir(s.cwd);
    const protocol = loadProtocolSync(s.file).protocol;
    expect(checkpointRoot(protocol, {}, s.file)).toBe(PACKAGE_ROOT);
    expect(checkpointSource(protocol, {}, s.file)).toBe(
      `checkpoint ${CHECKPOINT}: ${join(PACKAGE_ROOT, CHECKPOINT)}, the one shipped with imep (none in the working folder or next to the protocol)`,
    );
    expect(protocolRoots(s.file, { root: s.folder })).toEqual([s.folder]);
    expect(checkpointSource(protocol, { root: s.folder }, s.file)).toBeNull();
  });
});

describe('imep protocol example', () => {
  it('lists the shipped protocols, copies one byte for byte, refuses to overwrite and names the shipped ones', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'imep-example-'));
    const list = runCli(['protocol', 'example'], { cwd });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toBe(`shipped protocols (${join(ROOT, 'protocols')}):`);
    expect(list.stdout).toMatch(/^ {2}shellgame-hosted-policy +ShellGame-lite with a hosted Python memory policy/m);
    expect(list.stdout).not.toMatch(/libero-mem\b|known-answers/); // suites/ and calibration/ are not protocols to copy

    const copy = runCli(['protocol', 'example', 'shellgame-blackout', '--out', 'mine.yaml'], { cwd });
    expect(copy.code, copy.stderr).toBe(0);
    expect(copy.stdout.split('\n')).toEqual([
      'wrote mine.yaml: shellgame-blackout (protocol shellgame-blackout, hash 750efa7a9384)',
      `checkpoint ${CHECKPOINT}: ${join(ROOT, CHECKPOINT)}, the one shipped with imep (none in the working folder or next to the protocol)`,
      'run it: imep campaign run mine.yaml',
      '',
    ]);
    expect(readFileSync(join(cwd, 'mine.yaml'))).toEqual(readFileSync(SHIPPED));

    writeFileSync(join(cwd, 'shellgame-noisy.yaml'), 'mine\n');
    const again = runCli(['protocol', 'example', 'shellgame-noisy'], { cwd });
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toBe(
      'imep: shellgame-noisy.yaml: --out: shellgame-noisy.yaml exists; it is not overwritten — name another file with --out FILE, or remove that one',
    );
    expect(readFileSync(join(cwd, 'shellgame-noisy.yaml'), 'utf8')).toBe('mine\n');

    const unknown = runCli(['protocol', 'example', 'shellgame'], { cwd });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^imep: NAME: no shipped protocol is named shellgame — name one of: libero-drawer-memory, .*shellgame-blackout/,
    );
  });
});
