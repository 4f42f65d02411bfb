/**
 * The one assembly step cleans up after a refusal (src/campaign/assemble.ts): a policy runtime that refuses a
 * condition check, and whose release then fails too, still leaves the simulators closed (once), the refusal is the
 * error the user reads, and nothing is written.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precommitCampaign } from '../../src/campaign/index.js';
import { ImepError } from '../../src/core/index.js';
import { inProcessSimulators, registerSimulatorKind, type SimulatorKind } from '../../src/runtime/index.js';
import { liteStatedKwargs, makeLiteEnv } from '../../src/sims/index.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

let closes = 0;
const counted: SimulatorKind = {
  name: 'counted-lite',
  summary: 'the lite simulators, counting how often they are closed',
  fields: {},
  statedKwargs: liteStatedKwargs,
  preflight: () => undefined,
  open: () =>
    Promise.resolve({
      ...inProcessSimulators((task) => makeLiteEnv(task.envId, task.kwargs)),
      close: () => {
        closes += 1;
        return Promise.resolve();
      },
    }),
  describe: () => 'counted lite simulators',
  servers: () => undefined,
  knownSpec: (_block, envId, kwargs) => makeLiteEnv(envId, kwargs).spec,
};

describe('assemble: cleanup after a refusal', () => {
  let unregister: () => void = () => undefined;
  beforeAll(() => {
    unregister = registerSimulatorKind(counted);
  });
  afterAll(() => unregister());

  it('closes the simulators once and throws the refusal when the policy refuses and its release fails', async () => {
    const box = sandbox('imep-assemble-cleanup-');
    const text = blackoutYaml({ n: 2, sha: box.checkpointSha, id: 'assemble-cleanup' }).replace(
      'simulator: { kind: lite }',
      'simulator: { kind: counted-lite }',
    );
    expect(text).toContain('kind: counted-lite');
    const file = writeProtocol(box, 'p.yaml', text);
    const opts = scriptedOptions(box, 'shell', {
      policies: () =>
        Promise.resolve({
          description: 'a runtime that refuses',
          policyFor: () => Promise.reject(new ImepError('E_PROTOCOL_INVALID', 'refused by the test')),
          release: () => Promise.reject(new Error('release failed')),
        }),
    });
    await expect(precommitCampaign(file, opts)).rejects.toThrow('refused by the test');
    expect(closes).toBe(1);
    expect(opts.lines.some((l) => l.startsWith('precommitted'))).toBe(false);
    const registry = join(box.campaigns, 'seed-registry.json');
    expect(existsSync(registry) ? readFileSync(registry, 'utf8') : '').not.toContain('assemble-cleanup');
  });
});
