"""The comparison benches' rounds and printout: plain loop, IMEP and vla-eval wall times side by side, their
ratios, and whether every run of the three arms ran the same episodes (the same seeds, the same env steps per
seed, the same successes).

Each round runs the three arms one after another, the order rotated from round to round (plain, IMEP, vla-eval;
then IMEP, vla-eval, plain; …), so load that drifts over the run does not fall on one arm; the ratios are of the
arms' median wall times over the rounds."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import Callable

PLAIN, IMEP, VLA = 0, 1, 2


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
    "counted in each wall time: plain — {plain}; IMEP — `imep campaign run --through seal` from start to exit "
    "(sim-bridge server and policy host start-up, env make, episodes, rows sealed); vla-eval — from starting its "
    "model server (until GET /health answers) to the exit of `vla-eval run --no-docker` (its start-up, env make, "
    "episodes, SQLite step recording and aggregate JSON)."
)


def run_rounds(run_arm: Callable[[int, int], Arm], n: int, rounds: int) -> list[list[Arm]]:
    """runs[arm][round]: `run_arm(arm, n)` for arm PLAIN, IMEP, VLA, `rounds` times, the order rotated each round."""
    runs: list[list[Arm]] = [[], [], []]
    for r in range(rounds):
        for arm in (PLAIN, IMEP, VLA)[r % 3 :] + (PLAIN, IMEP, VLA)[: r % 3]:
            runs[arm].append(run_arm(arm, n))
    return runs


def agreement(seeds: list[int], runs: list[list[Arm]]) -> tuple[bool, bool, bool]:
    """(every run ran exactly `seeds`, the same env steps per seed, the same success per seed) — against plain's first."""
    every = [a for arm_runs in runs for a in arm_runs]
    ref = runs[PLAIN][0]
    same_seeds = all(sorted(a.success) == seeds and sorted(a.steps) == seeds for a in every)
    same_steps = same_seeds and all(a.steps == ref.steps for a in every)
    same_success = same_seeds and all(a.success == ref.success for a in every)
    return same_seeds, same_steps, same_success


def medians(runs: list[list[Arm]]) -> tuple[float, float, float]:
    plain, imep, vla = (statistics.median(a.wall for a in arm_runs) for arm_runs in runs)
    return plain, imep, vla


def compare(title: str, seeds: list[int], runs: list[list[Arm]]) -> bool:
    """Print the side-by-side table of `runs` (runs[arm][round]); True when every run ran and scored every seed alike."""
    plain, imep, vla = medians(runs)
    total = sum(runs[PLAIN][0].steps.values())
    print(title)
    print(f"  {len(seeds)} episodes, seeds {seeds[0]}…{seeds[-1]}, {total} env steps; {len(runs[PLAIN])} rounds; 1-min load {os.getloadavg()[0]:.2f}")
    width = max(len(r[0].label) for r in runs)
    for arm_runs, med in zip(runs, (plain, imep, vla)):
        each = ", ".join(f"{a.wall:.1f}" for a in arm_runs)
        print(f"  {arm_runs[0].label:<{width}}  median {med:7.1f} s  {total / med:6.1f} steps/s  {med / plain:6.3f} × plain  (rounds: {each} s)")
    print(f"  ratio IMEP ÷ vla-eval  = {imep / vla:.3f}")
    print(f"  ratio vla-eval ÷ plain = {vla / plain:.3f}")
    print(f"  ratio IMEP ÷ plain     = {imep / plain:.3f}")
    same_seeds, same_steps, same_success = agreement(seeds, runs)
    wins = sum(runs[PLAIN][0].success.values())
    print(f"  every run of every arm ran exactly these seeds: {'yes' if same_seeds else 'NO'}")
    print(f"  same env steps per seed in every run: {'yes' if same_steps else 'NO'}")
    print(f"  same success per seed in every run: {'yes' if same_success else 'NO'} ({wins}/{len(seeds)} successes)")
    if not (same_seeds and same_steps and same_success):
        for arm_runs in runs:
            for a in arm_runs:
                print(f"    {a.label}: success {dict(sorted(a.success.items()))} steps {dict(sorted(a.steps.items()))}")
    return same_seeds and same_steps and same_success


def per_episode(small: list[list[Arm]], large: list[list[Arm]], small_seeds: list[int], n: int) -> bool:
    """Print each arm's wall time per episode from the medians of runs of n and of len(small_seeds) episodes
    ((n-run − small-run) / (n − small): process start-up and env make cancel); True when the small runs agree too."""
    n_small = len(small_seeds)
    d = n - n_small
    plain, imep, vla = ((b - a) / d for a, b in zip(medians(small), medians(large)))
    width = max(len(r[0].label) for r in large)
    print(f"  per episode, from the median runs of {n} and of {n_small} episodes (start-up and env make cancel):")
    for arm_runs, per in zip(large, (plain, imep, vla)):
        print(f"    {arm_runs[0].label:<{width}}  {per:7.3f} s/episode")
    print(f"    ratio IMEP ÷ vla-eval = {imep / vla:.3f}; vla-eval ÷ plain = {vla / plain:.3f}; IMEP ÷ plain = {imep / plain:.3f}")
    agree = all(agreement(small_seeds, small))
    print(f"    every run of {n_small} agrees per seed (seeds, steps, success) too: {'yes' if agree else 'NO'}")
    return agree


def notes(plain_counted: str) -> None:
    """What the comparison leaves out (memory hook) and what each wall time covers (`plain_counted`: the plain arm)."""
    print(f"  {MEMORY_NOTE}")
    print(f"  {COUNTED_NOTE.format(plain=plain_counted)}")


def main(
    run_arm: Callable[[int, int], Arm],
    *,
    seed0: int,
    episodes: int,
    small: int,
    venv: str,
    title: Callable[[], str],
    plain_counted: str,
    before_large: Callable[[], None] = lambda: None,
) -> None:
    """The command line of a side-by-side driver: --episodes / --rounds / --small, the checks, the runs, the printout.

    `venv`: the vla-eval venv's name (`vla-eval-libero`); `title()` is called after the runs (it may report
    what the plain runs measured); `before_large()` runs between the small and the large rounds."""
    import argparse
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=episodes)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three arms, the order rotated each round; medians are compared")
    parser.add_argument("--small", type=int, default=small, help="also run SMALL-episode rounds and print the per-episode difference (0: off)")
    args = parser.parse_args()
    n, n_small = args.episodes, args.small
    if not 0 <= n_small < n or args.rounds < 1:
        sys.exit(f"bench: need --rounds ≥ 1 and 0 ≤ --small < --episodes (got --rounds {args.rounds}, --small {n_small}, --episodes {n})")
    if not (root / "dist/cli/main.js").is_file():
        sys.exit("bench: dist/cli/main.js is missing — run npm run build first")
    if not (Path(sys.executable).parent / "vla-eval").is_file():
        sys.exit(
            f"bench: {sys.executable} has no vla-eval next to it — "
            f"run with .venvs/{venv}/bin/python (bash bench/setup-vla-eval.sh {venv.split('-')[-1]})"
        )
    small_runs = run_rounds(run_arm, n_small, args.rounds) if n_small else None
    before_large()
    large = run_rounds(run_arm, n, args.rounds)
    ok = compare(title(), list(range(seed0, seed0 + n)), large)
    if small_runs is not None:
        ok = per_episode(small_runs, large, list(range(seed0, seed0 + n_small)), n) and ok
    notes(plain_counted)
    if not ok:
        sys.exit(1)
