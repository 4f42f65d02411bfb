/**
 * Issue 35 §7: a missing required field that takes fixed values (e.g. `version: 1`) is named as required, with the
 * value to add and the docs section — never "nothing is not allowed here".
 */
import { describe, expect, it } from 'vitest';
import { BAD_FILE, BASE, refusal, replaceOnce } from './helpers.js';

describe('a missing required field', () => {
  it('version: named, with the value to add and docs/protocol.md#version', () => {
    const err = refusal(replaceOnce(BASE, 'version: 1\n', ''));
    expect(err.field).toBe('version');
    const msg = err.oneLine();
    expect(msg).toContain(`${BAD_FILE}:`);
    expect(msg).toContain('version: `version` is required here — add it: version: 1 (see docs/protocol.md#version)');
    expect(msg).not.toContain('nothing');
  });

  it('a present but wrong value still lists the allowed ones', () => {
    const msg = refusal(replaceOnce(BASE, 'version: 1\n', 'version: 3\n')).oneLine();
    expect(msg).toContain('version: 3 is not allowed here — use one of: 1');
  });
});
