/**
 * Protocol files a new user gets wrong (issue 22): a file that is not UTF-8 text is named as such (not a YAML
 * message), and `imep protocol check FILE` lists every problem of the failing stage, bounded, one line each.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProtocol, protocolText } from '../../src/protocol/load.js';
import { ImepError } from '../../src/core/errors.js';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-pcheck-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const GOOD = readFileSync(join(import.meta.dirname, '../../protocols/shellgame-blackout.yaml'), 'utf8');

describe('a protocol that is not UTF-8 text', () => {
  it('Latin-1 bytes: "not a UTF-8 text file", naming the offset of the first bad byte', async () => {
    const file = join(dir, 'latin1.yaml');
    const bytes = Buffer.concat([Buffer.from('id: caf'), Buffer.from([0xe9]), Buffer.from('\n')]);
    writeFileSync(file, bytes);
    const e = await loadProtocol(file).then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ImepError);
    expect((e as ImepError).code).toBe('E_PROTOCOL_INVALID');
    expect((e as ImepError).message).toBe('not a UTF-8 text file (byte 0xe9 at offset 7)');
    const cli = runCli(['protocol', 'check', file]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('not a UTF-8 text file');
    expect(cli.stderr).not.toMatch(/YAML syntax/);
  });

  it('binary data (a NUL byte) and a BOM-prefixed UTF-8 file', () => {
    expect(() => protocolText(Buffer.from([0x69, 0x64, 0x00, 0x41]), 'x.yaml')).toThrow('a NUL byte, binary data?');
    expect(protocolText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('id: é\n')]), 'x.yaml')).toBe(
      'id: é\n',
    );
    // a bad byte after valid multi-byte characters is located exactly
    expect(() => protocolText(Buffer.concat([Buffer.from('é€'), Buffer.from([0xc3, 0x28])]), 'x.yaml')).toThrow(
      'byte 0xc3 at offset 5',
    );
  });
});

describe('imep protocol check FILE', () => {
  it('a valid protocol: its id and hash, exit 0', () => {
    const r = runCli(['protocol', 'check', join(import.meta.dirname, '../../protocols/shellgame-blackout.yaml')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/valid protocol shellgame-blackout, hash [0-9a-f]{64}/);
  });

  it('three unknown keys: all three listed, one line each, with their lines; exit 2', () => {
    const file = join(dir, 'three.yaml');
    writeFileSync(file, `${GOOD}\nbogus_one: 1\nbogus_two: 2\nbogus_three: 3\n`);
    const r = runCli(['protocol', 'check', file]);
    expect(r.code).toBe(2);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const [i, key] of ['bogus_one', 'bogus_two', 'bogus_three'].entries()) expect(lines[i]).toContain(key);
    for (const l of lines) expect(l).toMatch(/three\.yaml:\d+:\d+: /);
    expect(r.stderr.trim()).toMatch(/3 problems \(listed on stdout\)/);
  });

  it('many problems: at most 100 listed, the count of the rest said', () => {
    const file = join(dir, 'many.yaml');
    writeFileSync(file, `${GOOD}\n${Array.from({ length: 150 }, (_, i) => `extra_${i}: ${i}`).join('\n')}\n`);
    const r = runCli(['protocol', 'check', file]);
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split('\n')).toHaveLength(100);
    expect(r.stderr).toContain('150 problems (the first 100 listed on stdout, 50 more not shown)');
  });
});
