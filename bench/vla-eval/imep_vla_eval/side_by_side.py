"""The comparison benches' printout: plain loop, IMEP and vla-eval wall times side by side, their ratios, and
whether the three arms ran the same episodes (the same seeds, the same steps per seed, the same successes)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass
class Arm:
    label: str
    wall: float
    success: dict[int, bool]  # seed -> success
    steps: dict[int, int]  # seed -> env steps


MEMORY_NOTE = (
    "memory: vla-eval has no memory-read hook, so its model server keeps the policy's bank in-process and every read "
    "returns what the policy stored (as in the plain loop); IMEP routes every read through memory.read and its read "
    "hook (where its interventions act) and records it — that is what IMEP adds."
)
COUNTED_NOTE = (
    "counted in each wall time: plain — {plain}; IMEP — `imep campaign run --through seal` from start to exit (sim-bridge server and policy host start-up, env make, episodes, rows "
    "sealed); vla-eval — from starting its model server (until GET /health answers) to the exit of `vla-eval run "
    "--no-docker` (its start-up, env make, episodes, SQLite step recording and aggregate JSON)."
)


def compare(title: str, seeds: list[int], plain: Arm, imep: Arm, vla: Arm, plain_counted: str) -> bool:
    """Print the side-by-side table; True when all three arms ran and scored every seed alike.
    `plain_counted` says what the plain arm's wall time covers."""
    arms = (plain, imep, vla)
    total = sum(plain.steps.values())
    print(title)
    print(f"  {len(seeds)} episodes, seeds {seeds[0]}…{seeds[-1]}, {total} env steps; 1-min load {os.getloadavg()[0]:.2f}")
    width = max(len(a.label) for a in arms)
    for a in arms:
        print(f"  {a.label:<{width}}  {a.wall:7.1f} s  {sum(a.steps.values()) / a.wall:6.1f} steps/s  {a.wall / plain.wall:6.3f} × plain")
    print(f"  ratio IMEP ÷ vla-eval  = {imep.wall / vla.wall:.3f}")
    print(f"  ratio vla-eval ÷ plain = {vla.wall / plain.wall:.3f}")
    print(f"  ratio IMEP ÷ plain     = {imep.wall / plain.wall:.3f}")
    same_seeds = all(sorted(a.success) == seeds and sorted(a.steps) == seeds for a in arms)
    same_steps = same_seeds and all(a.steps == plain.steps for a in arms)
    same_success = same_seeds and all(a.success == plain.success for a in arms)
    wins = sum(plain.success.values())
    print(f"  every arm ran exactly these seeds: {'yes' if same_seeds else 'NO'}")
    print(f"  same env steps per seed in all three: {'yes' if same_steps else 'NO'}")
    print(f"  same success per seed in all three: {'yes' if same_success else 'NO'} ({wins}/{len(seeds)} successes)")
    if not (same_seeds and same_steps and same_success):
        for a in arms:
            print(f"    {a.label}: success {dict(sorted(a.success.items()))} steps {dict(sorted(a.steps.items()))}")
    print(f"  {MEMORY_NOTE}")
    print(f"  {COUNTED_NOTE.format(plain=plain_counted)}")
    return same_seeds and same_steps and same_success
