/**
 * The benchmark task sets the sim-bridge's adapters declare (SimulatorFace.benchmarks): what a protocol's
 * `suite.benchmark` names on `simulator: { kind: sim-bridge, adapter }`. One entry per set, under its adapter; the
 * runner never names a benchmark — the protocol expands the set into its `envs` at load (src/protocol/suite-expand.ts).
 *
 * Task names are the plan's task names (what per-task estimands are suffixed with, `<id>@<task>`):
 *   mikasa   the env id without `mikasa/` and `-v0` (mikasa/RememberColor3-VLA-v0 → RememberColor3-VLA)
 *   libero   `<suite>-<index>` (libero/libero_spatial/3 → libero_spatial-3); libero-mem/top-drawer-cue → top-drawer-cue
 *
 * To add a set (e.g. `mikasa-vla-memory-types`, one task per MIKASA-Robo-VLA memory type once the adapter runs
 * them), add one entry to its adapter's map below with `mikasaSet`/`liberoSuite` or an explicit task list.
 */
import type { BenchmarkTaskSet } from '../../core/index.js';

/** A MIKASA-Robo task set from its env names (`RememberColor3-VLA-v0`): env id `mikasa/<name>`, task `<name>` less `-v0`. */
function mikasaSet(description: string, names: readonly string[]): BenchmarkTaskSet {
  return {
    description,
    tasks: names.map((name) => ({ task: name.replace(/-v0$/, ''), envId: `mikasa/${name}` })),
  };
}

/** LIBERO suite `suite` (libero/<suite>/<0..count−1>, adapters/libero.py SUITES), task `<suite>-<index>`. */
function liberoSuite(suite: string, count: number, description: string): BenchmarkTaskSet {
  return {
    description,
    tasks: Array.from({ length: count }, (_, i) => ({ task: `${suite}-${i}`, envId: `libero/${suite}/${i}` })),
  };
}

/** adapter → set name → its tasks. */
export const SIM_BRIDGE_BENCHMARKS: Readonly<Record<string, Readonly<Record<string, BenchmarkTaskSet>>>> = {
  mikasa: {
    // the standard VLA set of MIKASA-Robo (mikasa_robo_suite/vla/dataset_collectors/parallel_dataset_collection_manager.py
    // lists these five among its VLA envs; issue #34: 100 episodes per task). ShellGameTouch-VLA needs ManiSkill's
    // YCB asset (its make refuses without it, in one line naming the folder).
    'mikasa-vla-standard': mikasaSet(
      "MIKASA-Robo's standard VLA set: ShellGameTouch, InterceptMedium, RememberColor3/5/9 (-VLA-v0)",
      [
        'RememberColor3-VLA-v0',
        'RememberColor5-VLA-v0',
        'RememberColor9-VLA-v0',
        'InterceptMedium-VLA-v0',
        'ShellGameTouch-VLA-v0',
      ],
    ),
  },
  libero: {
    'libero-spatial': liberoSuite('libero_spatial', 10, 'LIBERO-Spatial: the 10 tasks of libero_spatial'),
    'libero-object': liberoSuite('libero_object', 10, 'LIBERO-Object: the 10 tasks of libero_object'),
    'libero-goal': liberoSuite('libero_goal', 10, 'LIBERO-Goal: the 10 tasks of libero_goal'),
    'libero-10': liberoSuite('libero_10', 10, 'LIBERO-10 (LIBERO-Long): the 10 tasks of libero_10'),
    'libero-90': liberoSuite('libero_90', 90, 'LIBERO-90: the 90 tasks of libero_90'),
    'libero-mem': {
      description: "IMEP's LIBERO memory task (adapters/libero_mem.py): the drawer cue shown only at the start",
      tasks: [{ task: 'top-drawer-cue', envId: 'libero-mem/top-drawer-cue' }],
    },
  },
};

/** The task sets the adapter declares (none for an adapter without any). */
export function simBridgeBenchmarks(adapter: string): Readonly<Record<string, BenchmarkTaskSet>> {
  return SIM_BRIDGE_BENCHMARKS[adapter] ?? {};
}
