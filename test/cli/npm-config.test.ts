/**
 * `npx imep …` prints nothing of npm's own (issue 22: `npm warn Unknown project config "onnxruntime-node-install"` on
 * every call): the project's .npmrc holds only keys npm knows, and the install step that would download
 * onnxruntime's CUDA provider is skipped by onnxruntime-node's own environment switch, which the test script sets.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';

describe('npm configuration', () => {
  it('npm reads the project .npmrc without a warning', () => {
    const r = spawnSync('npm', ['config', 'get', 'fund'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, npm_config_loglevel: 'warn' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('false');
    expect(r.stderr).not.toMatch(/Unknown (project|env|user) config/);
  });

  it("the test script skips onnxruntime-node's CUDA download with its own switch, before npm ci", () => {
    const script = readFileSync(join(ROOT, 'scripts/test-all.sh'), 'utf8');
    const at = script.indexOf('export ONNXRUNTIME_NODE_INSTALL=skip');
    expect(at).toBeGreaterThan(-1);
    expect(at).toBeLessThan(script.indexOf('npm ci'));
    // the switch the installed onnxruntime-node reads (its install script exits early on 'skip')
    const utils = readFileSync(join(ROOT, 'node_modules/onnxruntime-node/script/install-utils.js'), 'utf8');
    expect(utils).toContain('process.env.ONNXRUNTIME_NODE_INSTALL');
  });
});
