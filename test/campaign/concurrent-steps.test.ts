/**
 * Bridged environments (no synchronous step) step at the same time: the episode loop sends every slot's step before
 * it awaits any, then takes the results in slot order — so the rows are those of a run that awaited each step in
 * turn, whatever order the steps finish in.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import type { NdArray, ResetRequest, SimEnvironment, StepResult } from '../../src/runtime/environment.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { type EnvProvider } from '../../src/campaign/index.js';
import { isImepError } from '../../src/core/errors.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

/** An environment behind a pretend bridge: its step answers after a delay that shrinks with the slot's index, so later slots finish first. */
class SlowEnv implements SimEnvironment {
  static inFlight = 0;
  static maxInFlight = 0;
  static finishOrder: number[] = [];
  constructor(
    private readonly inner: SimEnvironment,
    private readonly index: number,
  ) {}
  get spec(): SimEnvironment['spec'] {
    return this.inner.spec;
  }
  reset(r: ResetRequest): Promise<StepResult> {
    return this.inner.reset(r);
  }
  async step(a: NdArray): Promise<StepResult> {
    SlowEnv.inFlight += 1;
    SlowEnv.maxInFlight = Math.max(SlowEnv.maxInFlight, SlowEnv.inFlight);
    const result = await this.inner.step(a);
    await new Promise((r) => setTimeout(r, 4 - this.index));
    SlowEnv.inFlight -= 1;
    SlowEnv.finishOrder.push(this.index);
    return result;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

describe('episode loop: bridged steps in flight together', () => {
  it('sends every slot’s step before awaiting one, and writes the rows of the in-process run', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 4, sha: box.checkpointSha }));
    const plain = await runCampaign(file, scriptedOptions(box, 'shell', {}));
    let made = 0;
    const envs: EnvProvider = (t) => new SlowEnv(makeLiteEnv(t.envId, t.kwargs), made++ % 4);
    const box2 = sandbox();
    const file2 = writeProtocol(box2, 'p.yaml', blackoutYaml({ n: 4, sha: box2.checkpointSha }));
    const slow = await runCampaign(file2, scriptedOptions(box2, 'shell', { envs }));
    // batch 4 (scriptedOptions): four steps in flight at once, finishing out of slot order
    expect(SlowEnv.maxInFlight).toBe(4);
    expect(SlowEnv.finishOrder.slice(0, 4)).not.toEqual([0, 1, 2, 3]);
    const rows = (dir: string): string => readFileSync(join(dir, 'rows/rows.jsonl'), 'utf8');
    expect(rows(slow).length).toBeGreaterThan(0);
    expect(rows(slow)).toBe(rows(plain));
  });

  it('refuses --servers on in-process simulators before anything is written', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 2, sha: box.checkpointSha }));
    const err = await runCampaign(file, scriptedOptions(box, 'shell', { simulators: { servers: 3 } })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isImepError(err) && [err.code, err.field]).toEqual(['E_USAGE', '--servers']);
    expect(existsSync(box.campaigns)).toBe(false);
  });
});
