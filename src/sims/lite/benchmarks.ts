/**
 * The lite simulator's benchmark task set (SimulatorFace.benchmarks): `lite-memory`, the in-repo memory tasks, so a
 * suite protocol runs end to end in seconds (tests, examples). Task names drop `-lite`.
 */
import type { BenchmarkTaskSet } from '../../core/index.js';

const LITE_MEMORY = ['ShellGameTouch-lite', 'RememberColor3-lite', 'RememberColor5-lite'] as const;

export const LITE_BENCHMARKS: Readonly<Record<string, BenchmarkTaskSet>> = {
  'lite-memory': {
    description: 'the lite memory tasks: ShellGameTouch-lite, RememberColor3-lite, RememberColor5-lite',
    tasks: LITE_MEMORY.map((envId) => ({ task: envId.replace(/-lite$/, ''), envId })),
  },
};
