/**
 * `policy.checkpoint` of the remote runtime (a checkpoint folder the policy host serves, e.g. for imep-checkpoint):
 * resolved like checkpoint.path, passed to the host as `--checkpoint`, bound read-only into its sandbox at a neutral
 * path, refused where it does not hold a checkpoint. (The whole path, hosted vs in process: test/e2e/hosted-checkpoint.test.ts.)
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveHostedCheckpoint } from '../../src/campaign/hosted-policy-check.js';
import { policyHostSandboxRequest } from '../../src/campaign/remote-policy-provider.js';
import type { RemotePolicyConfig } from '../../src/campaign/remote-policy-config.js';
import { policyHostCommand } from '../../src/policies/remote-policy.js';
import { ROOT } from './helpers.js';

const config = (checkpoint?: string): RemotePolicyConfig => ({
  runtime: 'remote',
  name: 'imep-checkpoint',
  ...(checkpoint === undefined ? {} : { checkpoint }),
});
const ctx = { file: 'p.yaml', roots: ['/nonexistent-root', ROOT] };

describe('policy.checkpoint (a checkpoint folder served by the policy host)', () => {
  it('resolves like checkpoint.path (the first root that holds it) and is optional', () => {
    expect(resolveHostedCheckpoint(config('checkpoints/lite-memvla'), ctx)).toBe(join(ROOT, 'checkpoints/lite-memvla'));
    expect(resolveHostedCheckpoint(config(), ctx)).toBeUndefined();
  });

  it('also takes a LeRobot policy folder (config.json + model.safetensors; imep_sim_bridge.lerobot_policy serves it)', () => {
    const dir = join(ROOT, 'checkpoints/lerobot-act-shellgame');
    expect(resolveHostedCheckpoint(config('checkpoints/lerobot-act-shellgame'), ctx)).toBe(dir);
    expect(() => resolveHostedCheckpoint(config('checkpoints'), ctx)).toThrow(
      /holds no model\.json \(nor a LeRobot config\.json \+ model\.safetensors\)/,
    );
  });

  it('refuses a folder that is missing or holds no model.json, naming the field', () => {
    expect(() => resolveHostedCheckpoint(config('checkpoints/nope'), ctx)).toThrow(
      /policy\.checkpoint folder checkpoints\/nope does not exist \(looked in \/nonexistent-root, /,
    );
    try {
      resolveHostedCheckpoint(config('checkpoints'), ctx);
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'E_PROTOCOL_INVALID', field: 'policy.checkpoint', file: 'p.yaml' });
      expect(String((e as Error).message)).toContain('holds no model.json');
    }
  });

  it('reaches the host as --checkpoint DIR, read-only inside its sandbox at /imep/policy/checkpoint', () => {
    const dir = join(ROOT, 'checkpoints/lite-memvla');
    const cmd = policyHostCommand('ipc:///tmp/x.sock', { policy: 'imep-checkpoint', checkpoint: dir, maxBatch: 2 });
    expect(cmd.args).toEqual([
      '-m',
      'imep_sim_bridge.policy_host',
      '--endpoint',
      'ipc:///tmp/x.sock',
      '--policy',
      'imep-checkpoint',
      '--checkpoint',
      dir,
      '--max-batch',
      '2',
    ]);
    expect(policyHostCommand('ipc:///tmp/x.sock', { policy: 'shell-game-memory' }).args).not.toContain('--checkpoint');
    const request = policyHostSandboxRequest(config('checkpoints/lite-memvla'), ctx, [], [], ROOT, {});
    expect(request.readOnly).toEqual([{ path: dir, field: 'policy.checkpoint', inside: '/imep/policy/checkpoint' }]);
    expect(policyHostSandboxRequest(config(), ctx, [], [], ROOT, {}).readOnly).toEqual([]);
  });
});
