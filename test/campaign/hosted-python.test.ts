/**
 * `policy.python` of the remote runtime: a bare command as written, a path with a '/' resolved like policy.pythonPath
 * (the working folder, then the package root) so a protocol can name a repository venv's interpreter relatively
 * (`.venvs/policies/bin/python`, examples/python-host-torch/protocol.yaml), and one that exists nowhere refused.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveHostPython } from '../../src/campaign/hosted-policy-check.js';
import type { RemotePolicyConfig } from '../../src/campaign/remote-policy-config.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-host-python-'));
const first = join(dir, 'first');
const second = join(dir, 'second');
mkdirSync(join(first, 'venv/bin'), { recursive: true });
mkdirSync(join(second, 'venv/bin'), { recursive: true });
mkdirSync(join(second, 'other/bin'), { recursive: true });
writeFileSync(join(first, 'venv/bin/python'), '');
writeFileSync(join(second, 'venv/bin/python'), '');
writeFileSync(join(second, 'other/bin/python'), '');
const ctx = { file: 'p.yaml', roots: [first, second] };
const config = (python?: string): RemotePolicyConfig => ({
  runtime: 'remote',
  name: 'torch-shell-memory',
  ...(python === undefined ? {} : { python }),
});

describe('policy.python (the interpreter of the policy host IMEP starts)', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps a bare command and an absolute path; resolves a relative path in the first root that holds it', () => {
    expect(resolveHostPython(config(), ctx)).toBeUndefined();
    expect(resolveHostPython(config('python3'), ctx)).toBe('python3');
    expect(resolveHostPython(config(join(second, 'venv/bin/python')), ctx)).toBe(join(second, 'venv/bin/python'));
    expect(resolveHostPython(config('venv/bin/python'), ctx)).toBe(join(first, 'venv/bin/python'));
    expect(resolveHostPython(config('other/bin/python'), ctx)).toBe(join(second, 'other/bin/python'));
  });

  it('refuses one that exists nowhere, or is a folder, naming the field and where it looked', () => {
    try {
      resolveHostPython(config('.venvs/nope/bin/python'), ctx);
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'E_PROTOCOL_INVALID', field: 'policy.python', file: 'p.yaml' });
      expect((e as Error).message).toBe(
        `policy.python .venvs/nope/bin/python does not exist (looked in ${first}, ${second})`,
      );
    }
    expect(() => resolveHostPython(config('venv/bin'), ctx)).toThrow('policy.python venv/bin does not exist as a file');
  });
});
