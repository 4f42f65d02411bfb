/**
 * The executor of `imep chainbench replay`: `--executor lite` (in process) or `--executor bridge --endpoint E`
 * (a bridge server), and the default replay unit folder (<decisions unit>-replay[-N], the first that is free).
 */
import { stat } from 'node:fs/promises';
import { ImepError } from '../../../core/index.js';
import { LiteChainExecutor, type ChainExecutor, type ExecutorIdentity } from '../../../chainbench/index.js';
import { BridgeChainExecutor } from '../../../chainbench/bridge-executor.js';
import { parseChoice, parseCount } from '../../args.js';

export const EXECUTORS = ['lite', 'bridge'] as const;

/** An open executor, its identity (frozen in the unit), and how to close it. */
export interface OpenExecutor {
  readonly executor: ChainExecutor;
  readonly identity: ExecutorIdentity;
  readonly close: () => Promise<void>;
}

export async function executorFor(
  o: { executor: string; endpoint?: string; env: string; deadline: string },
  executionSuccess: number,
): Promise<OpenExecutor> {
  const kind = parseChoice('--executor', o.executor, EXECUTORS);
  if (kind === 'lite') {
    if (o.endpoint !== undefined)
      throw new ImepError('E_USAGE', '--endpoint is for --executor bridge', { field: '--endpoint' });
    const lite = new LiteChainExecutor(executionSuccess);
    return { executor: lite, identity: lite.identity(), close: async () => undefined };
  }
  if (o.endpoint === undefined)
    throw new ImepError(
      'E_USAGE',
      '--executor bridge needs --endpoint (e.g. the first line `imep sim serve lite` prints)',
      { field: '--endpoint' },
    );
  const bridge = await BridgeChainExecutor.connect({
    endpoint: o.endpoint,
    env: o.env,
    executionSuccess,
    deadlineMs: parseCount('--deadline', o.deadline),
  });
  return { executor: bridge, identity: bridge.identity(), close: () => bridge.close() };
}

export async function defaultReplayDir(decisionsDir: string): Promise<string> {
  const base = decisionsDir.replace(/\/+$/, '');
  for (let n = 1; ; n++) {
    const dir = n === 1 ? `${base}-replay` : `${base}-replay-${n}`;
    if (
      !(await stat(dir).then(
        () => true,
        () => false,
      ))
    )
      return dir;
  }
}
