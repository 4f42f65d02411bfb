/**
 * The `policy` section (src/protocol/schema-policy.ts): a protocol names a policy hosted in Python
 * (`policy: { runtime: remote, name, … }`) instead of a checkpoint. Exactly one of checkpoint / policy;
 * the hosted bank is episode-local; spawn-only keys refuse an endpoint and curve keys need one. Protocols
 * without the section parse to exactly what they did (no `policy` key, same hash).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProtocolSync, parseProtocol } from '../../src/protocol/index.js';
import { BAD_FILE, BASE, lineOf, refusal, replaceOnce, ROOT } from './helpers.js';

const CHECKPOINT = `checkpoint:
  path: checkpoints/lite-memvla
  file: model.json
  sha256: ${'ab'.repeat(32)}
`;
const HOSTED = BASE.replace(CHECKPOINT, 'policy:\n  runtime: remote\n  name: shell-game-memory\n').replace(
  '  capacity: 16\n',
  '  banks: [perceptual]\n  capacity: 16\n',
);

describe('protocol policy section (hosted policies)', () => {
  it('parses a hosted policy instead of a checkpoint', () => {
    const p = parseProtocol(HOSTED, 'hosted.yaml').protocol;
    expect(p.checkpoint).toBeUndefined();
    expect(p.policy).toEqual({ runtime: 'remote', name: 'shell-game-memory' });
    const shipped = loadProtocolSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml')).protocol;
    expect(shipped.policy).toEqual({ runtime: 'remote', name: 'shell-game-memory' });
    expect(shipped.memory).toMatchObject({ bank: 'episode-local', banks: ['perceptual'], k: 4 });
  });

  it('parses a checkpoint folder served by the host (policy.checkpoint), adding nothing to other protocols', () => {
    const text = replaceOnce(
      HOSTED,
      '  name: shell-game-memory\n',
      '  name: imep-checkpoint\n  checkpoint: checkpoints/lite-memvla\n',
    );
    expect(parseProtocol(text, 'hosted.yaml').protocol.policy).toEqual({
      runtime: 'remote',
      name: 'imep-checkpoint',
      checkpoint: 'checkpoints/lite-memvla',
    });
    expect(parseProtocol(HOSTED, 'hosted.yaml').protocol.policy).toEqual({
      runtime: 'remote',
      name: 'shell-game-memory',
    });
  });

  it('leaves protocols without it as they were (no policy key in the frozen JSON)', () => {
    const p = parseProtocol(BASE, 'base.yaml').protocol;
    expect('policy' in p).toBe(false);
    // the shipped ladder's hash is the one its quick start prints (README.md)
    expect(loadProtocolSync(join(ROOT, 'protocols/shellgame-blackout.yaml')).hash.slice(0, 12)).toBe('750efa7a9384');
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('shellgame-blackout-750efa7a9384');
  });

  const cases: { name: string; text: string; path: string; at: string; says: string[] }[] = [
    {
      name: 'neither checkpoint nor policy',
      text: BASE.replace(CHECKPOINT, ''),
      path: '(root)',
      at: 'version: 1',
      says: ['missing required field "checkpoint"', 'or policy: { runtime: remote, name }'],
    },
    {
      name: 'both checkpoint and policy',
      text: BASE.replace(CHECKPOINT, `${CHECKPOINT}policy:\n  runtime: remote\n  name: shell-game-memory\n`),
      path: 'policy',
      at: 'runtime: remote',
      says: ['either a checkpoint or a policy, not both'],
    },
    {
      name: 'a structured bank',
      text: replaceOnce(
        HOSTED,
        '  bank: episode-local\n  banks: [perceptual]\n  capacity: 16\n  k: 4\n  consolidation: token-merge\n',
        '  bank: structured-pcmb\n  k: 4\n  gate: 0.45\n  persistence: within-episode\n',
      ),
      path: 'memory.bank',
      at: 'bank: structured-pcmb',
      says: ['keeps its own episode-local bank', 'register memory.bank: episode-local'],
    },
    {
      name: 'curve keys without an endpoint',
      text: replaceOnce(
        HOSTED,
        '  name: shell-game-memory\n',
        '  name: shell-game-memory\n  curve: { serverKey: host.key, keys: me.key_secret }\n',
      ),
      path: 'policy.curve',
      at: 'curve:',
      says: ['curve keys are given without an endpoint', 'remove curve'],
    },
    {
      name: 'module with an endpoint',
      text: replaceOnce(
        HOSTED,
        '  name: shell-game-memory\n',
        '  name: shell-game-memory\n  endpoint: tcp://127.0.0.1:5600\n  module: my_policies\n',
      ),
      path: 'policy.module',
      at: 'module:',
      says: ['module is given with an endpoint', 'remove endpoint so IMEP starts the host'],
    },
    {
      name: 'a checkpoint folder with an endpoint',
      text: replaceOnce(
        HOSTED,
        '  name: shell-game-memory\n',
        '  name: imep-checkpoint\n  endpoint: tcp://127.0.0.1:5600\n  checkpoint: checkpoints/lite-memvla\n',
      ),
      path: 'policy.checkpoint',
      at: 'checkpoint: checkpoints/lite-memvla',
      says: ['checkpoint is given with an endpoint', 'remove endpoint so IMEP starts the host'],
    },
    {
      name: 'an unknown runtime',
      text: replaceOnce(HOSTED, 'runtime: remote', 'runtime: onnx'),
      path: 'policy.runtime',
      at: 'runtime: onnx',
      says: ['remote'],
    },
  ];
  for (const c of cases) {
    it(`refuses ${c.name}, naming the line, the path and the fix`, () => {
      const e = refusal(c.text);
      const msg = e.oneLine();
      expect(e.code).toBe('E_PROTOCOL_INVALID');
      expect(e.file).toBe(BAD_FILE);
      expect(e.field).toBe(c.path);
      expect(msg).toContain(`${BAD_FILE}:${lineOf(c.text, c.at)}:`);
      for (const s of c.says) expect(msg).toContain(s);
      expect(msg).not.toContain('\n');
    });
  }
});
