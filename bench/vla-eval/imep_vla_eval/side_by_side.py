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


def agreement(seeds: list[int], arms: tuple[Arm, ...]) -> tuple[bool, bool, bool]:
    """(every arm ran exactly `seeds`, the same env steps per seed, the same success per seed) — against arms[0]."""
    same_seeds = all(sorted(a.success) == seeds and sorted(a.steps) == seeds for a in arms)
    same_steps = same_seeds and all(a.steps == arms[0].steps for a in arms)
    same_success = same_seeds and all(a.success == arms[0].success for a in arms)
    return same_seeds, same_steps, same_success


def per_episode(small: tuple[Arm, Arm, Arm], large: tuple[Arm, Arm, Arm], small_seeds: list[int], n: int) -> bool:
    """Print each arm's wall time per episode from two runs ((run of n − run of n_small) / (n − n_small): process
    start-up and env make cancel); True when the small runs' arms agree per seed too."""
    n_small = len(small_seeds)
    d = n - n_small
    plain, imep, vla = ((b.wall - a.wall) / d for a, b in zip(small, large))
    width = max(len(a.label) for a in large)
    print(f"  per episode, from the difference of runs of {n} and {n_small} episodes (start-up and env make cancel):")
    for arm, per in zip(large, (plain, imep, vla)):
        print(f"    {arm.label:<{width}}  {per:7.3f} s/episode")
    print(f"    ratio IMEP ÷ vla-eval = {imep / vla:.3f}; vla-eval ÷ plain = {vla / plain:.3f}; IMEP ÷ plain = {imep / plain:.3f}")
    agree = all(agreement(small_seeds, small))
    print(f"    the runs of {n_small} agree per seed (seeds, steps, success) too: {'yes' if agree else 'NO'}")
    return agree


def compare(title: str, seeds: list[int], plain: Arm, imep: Arm, vla: Arm) -> bool:
    """Print the side-by-side table; True when all three arms ran and scored every seed alike."""
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
    same_seeds, same_steps, same_success = agreement(seeds, arms)
    wins = sum(plain.success.values())
    print(f"  every arm ran exactly these seeds: {'yes' if same_seeds else 'NO'}")
    print(f"  same env steps per seed in all three: {'yes' if same_steps else 'NO'}")
    print(f"  same success per seed in all three: {'yes' if same_success else 'NO'} ({wins}/{len(seeds)} successes)")
    if not (same_seeds and same_steps and same_success):
        for a in arms:
            print(f"    {a.label}: success {dict(sorted(a.success.items()))} steps {dict(sorted(a.steps.items()))}")
    return same_seeds and same_steps and same_success


def notes(plain_counted: str) -> None:
    """What the comparison leaves out (memory hook) and what each wall time covers (`plain_counted`: the plain arm)."""
    print(f"  {MEMORY_NOTE}")
    print(f"  {COUNTED_NOTE.format(plain=plain_counted)}")
