/**
 * What a cluster process loads before it does anything: every SLURM array task and every merge is a fresh
 * `imep` process, so the modules it imports at start-up are paid once per task. `imep cluster merge`
 * (and status, plan, submit) must not pull in the policy runtime, the simulators' bridge or process
 * supervision — only `cluster shard-run` needs them, and it imports them when it runs. Checked on the
 * static import graph of the sources (dynamic `import()` is not followed: that is the point).
 */
import { describe, expect, it } from 'vitest';
import { staticPackages } from '../support/static-imports.js';

const HEAVY = ['onnxruntime-node', '@tensorflow/tfjs', 'zeromq', 'execa'];

describe('cluster: start-up imports', () => {
  it('the cluster command group and the merge load none of the runtime, bridge or supervision packages', () => {
    for (const entry of [
      'cli/commands/cluster/group.ts',
      'cluster/merge.ts',
      'cluster/status.ts',
      'cluster/submit.ts',
    ]) {
      const heavy = [...staticPackages(entry)].filter((p) => HEAVY.includes(p));
      expect({ entry, heavy }).toEqual({ entry, heavy: [] });
    }
  });

  it('a checkpoint campaign process (every lite shard) loads neither the ZeroMQ bridge nor process supervision', () => {
    // the bridged simulators and hosted policies import them when a protocol asks for one
    for (const entry of ['campaign/campaign-setup.ts', 'cluster/shard-run.ts']) {
      const heavy = [...staticPackages(entry)].filter((p) => p === 'zeromq' || p === 'execa');
      expect({ entry, heavy }).toEqual({ entry, heavy: [] });
    }
  });

  it('the walker does see them where they are imported (the checkpoint runtime loads ONNX Runtime when it opens)', () => {
    expect(staticPackages('campaign/checkpoint-policy.ts').has('onnxruntime-node')).toBe(true);
    expect(staticPackages('cluster/shard-run.ts').has('onnxruntime-node')).toBe(false);
  });
});
