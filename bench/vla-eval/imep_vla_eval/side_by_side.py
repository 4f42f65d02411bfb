"""The comparison benches' rounds and printout: plain loop, IMEP and vla-eval wall times side by side, their
ratios, and whether every run of the three arms ran the same episodes (the same seeds, the same env steps per
seed, the same successes, and — where every arm reports it — the same actions: IMEP's per-episode `actionDigest`,
SHA-256 over "imep.action-digest.v1" and each action's float32 bytes, src/campaign/action-digest.ts, which the plain
loops and the vla-eval benchmark compute the same way, `action_digest` below).

Each round runs the three arms one after another, the order rotated from round to round (plain, IMEP, vla-eval;
then IMEP, vla-eval, plain; …), so load that drifts over the run does not fall on one arm; the ratios are of the
arms' median wall times over the rounds."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

PLAIN, IMEP, VLA = 0, 1, 2


@dataclass
class Arm:
    label: str
    wall: float
    success: dict[int, bool]  # seed -> success
    steps: dict[int, int]  # seed -> env steps
    digest: dict[int, str] = field(default_factory=dict)  # seed -> action digest (empty: the arm does not report it)
    clock: dict[str, float] = field(default_factory=dict)  # IMEP's own clock summed over the run's rows (ms): simMs, policyMs, bankMs, totalMs


def imep_clock(timings_jsonl: str) -> dict[str, float]:
    """rows/timings.jsonl of an IMEP unit summed: simMs (each step's round trip to the simulator server, the env step
    in it), policyMs (the policy's infer), bankMs (bank reads and writes), totalMs (the episodes' own time)."""
    rows = [json.loads(line) for line in timings_jsonl.splitlines() if line.strip()]
    return {k: float(sum(r[k] for r in rows)) for k in ("simMs", "policyMs", "bankMs", "totalMs")}


@dataclass(frozen=True)
class Options:
    """What the command line chose for every arm: `checkpoint` (an IMEP checkpoint folder, else the known-answer
    hosted policy) and `parallel` (1: one episode at a time; 2: two at once — plain ×2 processes, IMEP
    --servers 2 --batch 2, vla-eval 2 shards)."""

    checkpoint: Path | None = None
    parallel: int = 1


DIGEST_TAG = b"imep.action-digest.v1"


def action_digest(actions: Iterable[object]) -> str:
    """IMEP's actionDigest of an episode's actions (each narrowed to float32, little-endian)."""
    h = hashlib.sha256(DIGEST_TAG)
    for a in actions:
        h.update(np.asarray(a, dtype="<f4").tobytes())
    return h.hexdigest()


def split_seeds(start: int, n: int, parts: int) -> list[tuple[int, int]]:
    """(start, count) of `parts` contiguous runs covering seeds start … start + n − 1, the first ones one longer."""
    base, extra = divmod(n, parts)
    out, s = [], start
    for i in range(parts):
        c = base + (1 if i < extra else 0)
        out.append((s, c))
        s += c
    return [p for p in out if p[1] > 0]


MEMORY_NOTE = (
    "memory: vla-eval has no memory-read hook, so its model server keeps the policy's bank in-process and every read "
    "returns what the policy stored (as in the plain loop); IMEP routes every read through memory.read and its read "
    "hook (where its interventions act) and records it — that is what IMEP adds."
)
CHECKPOINT_NOTE = (
    "policy: the checkpoint {name} — the plain loop and vla-eval's model server run its graphs with onnxruntime "
    "in Python and its episode bank in process (imep_sim_bridge.onnx_checkpoint, reads returned as stored); IMEP runs "
    "them in its own process with onnxruntime-node, the bank in IMEP, every read through the bank's read hook (where "
    "its interventions act) and recorded — that is what IMEP adds; no policy host, no round trip for infer or read."
)
COUNTED_NOTE = (
    "counted in each wall time: plain — {plain}; IMEP — `imep campaign run --through seal` from start to exit "
    "({startup}, env make, episodes, rows sealed); vla-eval — from starting its "
    "model server (until GET /health answers) to the exit of {vla} (its start-up, env make, "
    "episodes, SQLite step recording and aggregate JSON)."
)


RunArm = Callable[[int, int, Options], Arm]


def run_rounds(run_arm: RunArm, n: int, rounds: int, opts: Options) -> list[list[Arm]]:
    """runs[arm][round]: `run_arm(arm, n, opts)` for arm PLAIN, IMEP, VLA, `rounds` times, the order rotated each round."""
    runs: list[list[Arm]] = [[], [], []]
    for r in range(rounds):
        for arm in (PLAIN, IMEP, VLA)[r % 3 :] + (PLAIN, IMEP, VLA)[: r % 3]:
            runs[arm].append(run_arm(arm, n, opts))
    return runs


def agreement(seeds: list[int], runs: list[list[Arm]]) -> tuple[bool, bool, bool, bool | None]:
    """(every run ran exactly `seeds`, the same env steps per seed, the same success per seed, the same action digest
    per seed — None when some run reports no digests) — against plain's first."""
    every = [a for arm_runs in runs for a in arm_runs]
    ref = runs[PLAIN][0]
    same_seeds = all(sorted(a.success) == seeds and sorted(a.steps) == seeds for a in every)
    same_steps = same_seeds and all(a.steps == ref.steps for a in every)
    same_success = same_seeds and all(a.success == ref.success for a in every)
    if not all(a.digest for a in every):
        return same_seeds, same_steps, same_success, None
    same_actions = same_seeds and all(a.digest == ref.digest for a in every)
    return same_seeds, same_steps, same_success, same_actions


def disagreeing(runs: list[list[Arm]]) -> dict[int, list[str]]:
    """seed → what differs from plain's first run there (steps, success, actions), for the seeds where anything does."""
    ref = runs[PLAIN][0]
    out: dict[int, list[str]] = {}
    for a in (a for arm_runs in runs for a in arm_runs):
        for seed in sorted(set(ref.steps) | set(a.steps)):
            what = [
                k for k, mine, theirs in (("steps", a.steps, ref.steps), ("success", a.success, ref.success)) if mine.get(seed) != theirs.get(seed)
            ]
            if a.digest and ref.digest and a.digest.get(seed) != ref.digest.get(seed):
                what.append("actions")
            if what:
                out.setdefault(seed, []).append(f"{a.label}: {'/'.join(what)} (steps {a.steps.get(seed)}, success {a.success.get(seed)})")
    return out


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
        print(
            f"  {arm_runs[0].label:<{width}}  median {med:7.1f} s  {total / med:6.1f} steps/s  {3600 * len(seeds) / med:7.0f} episodes/h"
            f"  {med / plain:6.3f} × plain  (rounds: {each} s)"
        )
    print(f"  ratio IMEP ÷ vla-eval  = {imep / vla:.3f}")
    print(f"  ratio vla-eval ÷ plain = {vla / plain:.3f}")
    print(f"  ratio IMEP ÷ plain     = {imep / plain:.3f}")
    clocked = [a for a in runs[IMEP] if a.clock]
    if clocked:
        mid = sorted(clocked, key=lambda a: a.wall)[len(clocked) // 2]
        per = {k: v / total for k, v in mid.clock.items()}
        rest = per["totalMs"] - per["simMs"] - per["policyMs"] - per["bankMs"]
        print(
            f"  IMEP's own clock (rows/timings.jsonl of its median run), per env step: simulator {per['simMs']:.2f} ms (the step's round trip, "
            f"env step included), policy {per['policyMs']:.2f} ms, bank {per['bankMs']:.2f} ms, rest {rest:.2f} ms; "
            f"episodes {mid.clock['totalMs'] / 1e3:.1f} s of its {mid.wall:.1f} s wall"
        )
    same_seeds, same_steps, same_success, same_actions = agreement(seeds, runs)
    wins = sum(runs[PLAIN][0].success.values())
    print(f"  every run of every arm ran exactly these seeds: {'yes' if same_seeds else 'NO'}")
    print(f"  same env steps per seed in every run: {'yes' if same_steps else 'NO'}")
    print(f"  same success per seed in every run: {'yes' if same_success else 'NO'} ({wins}/{len(seeds)} successes)")
    if same_actions is not None:
        print(f"  same actions per seed in every run (IMEP's actionDigest, float32 bytes of every action): {'yes' if same_actions else 'NO'}")
    ok = same_seeds and same_steps and same_success and same_actions is not False
    if not ok:
        for seed, what in disagreeing(runs).items():
            print(f"    seed {seed}: " + "; ".join(what))
    return ok


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
    agree = all(x is not False for x in agreement(small_seeds, small))
    print(f"    every run of {n_small} agrees per seed (seeds, steps, success) too: {'yes' if agree else 'NO'}")
    return agree


def notes(plain_counted: str, opts: Options) -> None:
    """What the comparison leaves out (memory hook) and what each wall time covers (`plain_counted`: the plain arm)."""
    if opts.checkpoint is None:
        print(f"  {MEMORY_NOTE}")
    else:
        print(f"  {CHECKPOINT_NOTE.format(name=opts.checkpoint.name)}")
    startup = (
        "sim-bridge server and policy host start-up"
        if opts.checkpoint is None
        else "sim-bridge server start-up, checkpoint loaded into onnxruntime-node"
    )
    vla = (
        "`vla-eval run --no-docker`" if opts.parallel == 1 else f"the last of {opts.parallel} `vla-eval run --no-docker` shards and `vla-eval export`"
    )
    print(f"  {COUNTED_NOTE.format(plain=plain_counted, startup=startup, vla=vla)}")


def main(
    run_arm: RunArm,
    *,
    seed0: int,
    episodes: int,
    small: int,
    venv: str,
    title: Callable[[Options], str],
    plain_counted: str,
    before_large: Callable[[], None] = lambda: None,
) -> None:
    """The command line of a side-by-side driver: --episodes / --rounds / --small / --checkpoint / --parallel, the
    checks, the runs, the printout.

    `venv`: the vla-eval venv's name (`vla-eval-libero`); `title(opts)` is called after the runs (it may report
    what the plain runs measured); `before_large()` runs between the small and the large rounds."""
    import sys

    root = Path(__file__).resolve().parents[3]
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=episodes)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three arms, the order rotated each round; medians are compared")
    parser.add_argument("--small", type=int, default=small, help="also run SMALL-episode rounds and print the per-episode difference (0: off)")
    parser.add_argument(
        "--checkpoint",
        type=Path,
        help="an IMEP checkpoint folder (model.json + ONNX graphs): every arm runs it instead of the known-answer hosted policy",
    )
    parser.add_argument(
        "--parallel",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: two episodes at once (plain ×2 processes, IMEP --servers 2 --batch 2, vla-eval 2 shards)",
    )
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
    if args.checkpoint is not None and not (args.checkpoint / "model.json").is_file():
        sys.exit(f"bench: --checkpoint {args.checkpoint} has no model.json — give an IMEP checkpoint folder")
    opts = Options(checkpoint=None if args.checkpoint is None else args.checkpoint.resolve(), parallel=args.parallel)
    small_runs = run_rounds(run_arm, n_small, args.rounds, opts) if n_small else None
    before_large()
    large = run_rounds(run_arm, n, args.rounds, opts)
    ok = compare(title(opts), list(range(seed0, seed0 + n)), large)
    if small_runs is not None:
        ok = per_episode(small_runs, large, list(range(seed0, seed0 + n_small)), n) and ok
    notes(plain_counted, opts)
    if not ok:
        sys.exit(1)
