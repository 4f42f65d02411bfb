import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLIENT_NODE_FLAGS, LITE_SERVER_NODE_FLAGS } from '../../src/bridges/node-flags.js';
import { liteServerCommand } from '../../src/bridges/supervisor.js';
import { defaultLauncher } from '../../src/cluster/launcher.js';

describe('V8 heap flags of the processes that carry bridge traffic', () => {
  it('the imep CLI starts with CLIENT_NODE_FLAGS (its #! line)', () => {
    const first = readFileSync(new URL('../../src/cli/main.ts', import.meta.url), 'utf8').split('\n')[0];
    expect(first).toBe(`#!/usr/bin/env -S node ${CLIENT_NODE_FLAGS.join(' ')}`);
  });

  it('SLURM shards start the CLI with CLIENT_NODE_FLAGS', () => {
    const argv = defaultLauncher();
    expect(argv.slice(1, 1 + CLIENT_NODE_FLAGS.length)).toEqual([...CLIENT_NODE_FLAGS]);
  });

  it('lite servers IMEP starts get LITE_SERVER_NODE_FLAGS', () => {
    for (const runtime of ['dist', 'tsx'] as const) {
      const cmd = liteServerCommand('ipc:///tmp/x', { runtime });
      expect(cmd.args.slice(0, LITE_SERVER_NODE_FLAGS.length)).toEqual([...LITE_SERVER_NODE_FLAGS]);
    }
  });

  it('node accepts the flags', async () => {
    for (const flags of [CLIENT_NODE_FLAGS, LITE_SERVER_NODE_FLAGS]) {
      const r = await execa(process.execPath, [...flags, '-e', 'process.stdout.write("ok")']);
      expect(r.stdout).toBe('ok');
    }
  });
});
